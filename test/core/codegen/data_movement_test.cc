// Data movement, reductions, dot, reduce-window and multi-output fusions
// against the evaluator, on odd sizes and non-default layouts.
#include <gtest/gtest.h>

#include "test/core/codegen/codegen_test_util.h"

namespace passlab {
namespace {

using testing::ExpectFusedMatchesEvaluator;
using testing::ExpectMatchesEvaluator;

TEST(DataMovementTest, BroadcastTransposeReshapeBitcast) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[3,5]{0,1} parameter(0)
  v = f32[5] parameter(1)
  b = f32[3,5,4] broadcast(a), dimensions={0,1}
  bv = f32[3,5,4]{0,2,1} broadcast(v), dimensions={1}
  s = f32[3,5,4] add(b, bv)
  t = f32[4,3,5]{1,2,0} transpose(s), dimensions={2,0,1}
  r = f32[12,5] reshape(t)
  c = f32[5,12]{0,1} bitcast(r)
  ROOT out = (f32[4,3,5]{1,2,0}, f32[12,5], f32[5,12]{0,1}) tuple(t, r, c)
})", {0, 0, 0});
}

// An unfused copy into another layout is compiled as a kernel (the runtime
// hands it to the compiler; thunk.cc): a convolution weight's NHWC-to-
// HWNC-like reordering, a matrix transpose, an integer and a half copy.
TEST(DataMovementTest, LayoutChangingCopies) {
  for (const char* copy : {"f32[3,3,24,40]{3,1,0,2} copy(f32[3,3,24,40]{3,2,1,0} parameter(0))",
                           "f32[33,65]{0,1} copy(f32[33,65]{1,0} parameter(0))",
                           "s32[5,7,9]{0,2,1} copy(s32[5,7,9]{2,1,0} parameter(0))",
                           "bf16[2,64,48]{1,2,0} copy(bf16[2,64,48]{2,1,0} parameter(0))"}) {
    SCOPED_TRACE(copy);
    ExpectMatchesEvaluator(std::string("HloModule m\nENTRY e {\n  ROOT c = ") + copy + "\n}\n", {0, 0, 0});
  }
}

TEST(DataMovementTest, SliceReversePadConcatenateIota) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[7,9] parameter(0)
  b = f32[7,4]{0,1} parameter(1)
  z = f32[] constant(-1)
  s = f32[3,4] slice(a), slice={[1:7:2], [2:9:2]}
  r = f32[3,4] reverse(s), dimensions={0,1}
  p = f32[8,6] pad(r, z), padding=1_2_1x-1_2_1
  c = f32[7,13] concatenate(a, b), dimensions={1}
  i = s32[5,3] iota(), iota_dimension=1
  fi = f32[5,3] iota(), iota_dimension=0
  ROOT out = (f32[8,6], f32[7,13], s32[5,3], f32[5,3]) tuple(p, c, i, fi)
})", {0, 0, 0});
}

TEST(DataMovementTest, DynamicSliceAndUpdateSliceClampStarts) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[6,8] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] constant(5)
  j = s32[] constant(-2)
  k = u32[] constant(3)
  ds = f32[2,3] dynamic-slice(a, i, j), dynamic_slice_sizes={2,3}
  dus = f32[6,8] dynamic-update-slice(a, u, k, i)
  ROOT out = (f32[2,3], f32[6,8]) tuple(ds, dus)
})", {0, 0, 0});
}

TEST(DataMovementTest, ConstantsInsideFusions) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = bf16[2,3]{0,1} parameter(0)
  c = bf16[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  m = bf16[2,3]{0,1} multiply(a, c)
  p = pred[3] constant({true, false, true})
  bp = pred[2,3] broadcast(p), dimensions={1}
  ROOT s = bf16[2,3] select(bp, m, a)
})", {1e-2, 1e-2, 1});
}

TEST(ReductionTest, RowAndColumnReductions) {
  EmitterKind kind;
  ExpectFusedMatchesEvaluator(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[37,129] parameter(0)
  z = f32[] constant(0)
  e = f32[37,129] exponential(a)
  ROOT r = f32[37] reduce(e, z), dimensions={1}, to_apply=add
})", {1e-5, 1e-5, 8}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kReduction);
  ExpectFusedMatchesEvaluator(R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
ENTRY e {
  a = f32[37,5,66]{0,2,1} parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[5] reduce(a, z), dimensions={0,2}, to_apply=max
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kReduction);
}

// Column reductions (the input's minor dimension kept, as in batch-norm
// statistics over N, H, W of NHWC) walk the input rows with the output
// columns innermost, accumulating in the output buffers: a multi-output
// fusion over two inputs (200 columns: three blocks of 64 and one of 8), an
// integer reduction with a kept major dimension, and an f64 maximum.
TEST(ReductionTest, ColumnReductionsWalkRowsWithColumnsInnermost) {
  const char* batch_norm_statistics = R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  a = f32[8,4,4,200] parameter(0)
  b = f32[8,4,4,200] parameter(1)
  z = f32[] constant(0)
  aa = f32[8,4,4,200] multiply(a, a)
  ra = f32[200] reduce(a, z), dimensions={0,1,2}, to_apply=add
  raa = f32[200] reduce(aa, z), dimensions={0,1,2}, to_apply=add
  rb = f32[200] reduce(b, z), dimensions={0,1,2}, to_apply=add
  ROOT t = (f32[200], f32[200], f32[200]) tuple(ra, raa, rb)
}
ENTRY e {
  p0 = f32[8,4,4,200] parameter(0)
  p1 = f32[8,4,4,200] parameter(1)
  ROOT f = (f32[200], f32[200], f32[200]) fusion(p0, p1), kind=kInput, calls=fused
})";
  ExpectMatchesEvaluator(batch_norm_statistics, {1e-5, 1e-5, 8});
  // The partial results live in stack buffers of the nest's function: the
  // interchanged walk, not one strided loop per output.
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(batch_norm_statistics, "test");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<std::string> mlir = CpuKernelCompiler().EmitMlir(*(*m)->entry_computation()->root_instruction());
  ASSERT_TRUE(mlir.ok()) << mlir.status().message();
  EXPECT_NE(mlir->find("memref.alloca"), std::string::npos) << *mlir;

  ExpectFusedMatchesEvaluator(R"(HloModule m
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY e {
  a = s32[3,50,70] parameter(0)
  z = s32[] constant(7)
  ROOT r = s32[3,70] reduce(a, z), dimensions={1}, to_apply=add
})", {0, 0, 0});
  ExpectFusedMatchesEvaluator(R"(HloModule m
max {
  x = f64[] parameter(0)
  y = f64[] parameter(1)
  ROOT s = f64[] maximum(x, y)
}
ENTRY e {
  a = f64[6,9,130] parameter(0)
  z = f64[] constant(-inf)
  ROOT r = f64[130] reduce(a, z), dimensions={0,1}, to_apply=max
})", {0, 0, 0});
  // Fewer rows than partials: one partial, the rows in sequence.
  ExpectFusedMatchesEvaluator(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[5,3,40] parameter(0)
  z = f32[] constant(0.5)
  ROOT r = f32[40] reduce(a, z), dimensions={0,1}, to_apply=add
})", {1e-6, 1e-6, 0});
}

TEST(ReductionTest, VariadicArgmaxReduce) {
  ExpectMatchesEvaluator(R"(HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  eq = pred[] compare(v0, v1), direction=EQ
  lt = pred[] compare(i0, i1), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, v0, v1)
  i = s32[] select(keep, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
fused {
  a = f32[9,31] parameter(0)
  io = s32[9,31] iota(), iota_dimension=1
  z = f32[] constant(-inf)
  zi = s32[] constant(0)
  ROOT r = (f32[9], s32[9]) reduce(a, io, z, zi), dimensions={1}, to_apply=argmax
}
ENTRY main {
  p = f32[9,31] parameter(0)
  ROOT f = (f32[9], s32[9]) fusion(p), kind=kInput, calls=fused
})", {0, 0, 0});
}

TEST(ReductionTest, IntegerReduceOfScalarAndMultiOutputWithElementwise) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY e {
  a = s32[4,6] parameter(0)
  z = s32[] constant(0)
  n = s32[4,6] negate(a)
  r = s32[6] reduce(n, z), dimensions={0}, to_apply=add
  all = s32[] reduce(a, z), dimensions={0,1}, to_apply=add
  ROOT t = (s32[6], s32[], s32[4,6]) tuple(r, all, n)
})", {0, 0, 0});
}

TEST(DotTest, MatmulBatchAndLayouts) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[17,33] parameter(0)
  b = f32[33,9]{0,1} parameter(1)
  ROOT d = f32[17,9] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", {1e-5, 1e-5, 16});
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[3,5,7] parameter(0)
  b = f32[3,4,7] parameter(1)
  ROOT d = f32[3,5,4]{1,2,0} dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
})", {1e-5, 1e-5, 16});
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = s32[4,6] parameter(0)
  b = s32[6] parameter(1)
  ROOT d = s32[4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", {0, 0, 0});
}

TEST(ReduceWindowTest, PoolingWithPaddingStrideAndDilation) {
  ExpectMatchesEvaluator(R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
ENTRY e {
  a = f32[2,9,11,3] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[2,5,6,3] reduce-window(a, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
})", {0, 0, 0});
  ExpectMatchesEvaluator(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[7,5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[6,9] reduce-window(a, z), window={size=3x2 pad=1_1x0_0 rhs_dilate=2x1 lhs_dilate=1x2}, to_apply=add
})", {1e-5, 1e-5, 8});
}

TEST(MapTest, MapAppliesComputation) {
  ExpectMatchesEvaluator(R"(HloModule m
f {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  m = f32[] multiply(x, y)
  ROOT s = f32[] add(m, x)
}
ENTRY e {
  a = f32[4,5] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT r = f32[4,5] map(a, b), dimensions={0,1}, to_apply=f
})");
}

}  // namespace
}  // namespace passlab

namespace passlab {
namespace {

TEST(GatherTest, EmbeddingLookupAndClampedWindows) {
  testing::ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  table = f32[10,6] parameter(0)
  ids = s32[5] constant({0, 9, 3, -4, 12})
  ROOT g = f32[5,6] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}
})", {0, 0, 0});
  testing::ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[7,8] parameter(0)
  i = s32[3,2] constant({{0, 0}, {6, 7}, {2, -3}})
  ROOT g = f32[3,2,3] gather(a, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}
})", {0, 0, 0});
}

TEST(GatherTest, BatchingDims) {
  testing::ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[3,5,4] parameter(0)
  i = s32[3,2,1] constant({{{1}, {4}}, {{0}, {2}}, {{3}, {3}}})
  ROOT g = f32[3,2,4] gather(a, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}
})", {0, 0, 0});
}

TEST(BatchNormTest, InferenceRunsWithoutTheExpander) {
  testing::ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[2,3,4,5] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  mean = f32[3] parameter(3)
  v = f32[3] parameter(4)
  var = f32[3] multiply(v, v)
  ROOT y = f32[2,3,4,5] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.001, feature_index=1
})", {1e-5, 1e-5, 16});
}

}  // namespace
}  // namespace passlab

namespace passlab {
namespace {

// Compiles the batch-norm root of `text` and runs it on `args`.
std::vector<Literal> RunBatchNormKernel(const std::string& text, const std::vector<Literal>& args) {
  auto m = ParseHloModule(text, "test");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return {};
  const HloInstruction& root = *(*m)->entry_computation()->root_instruction();
  auto kernel = CpuKernelCompiler().Compile(root);
  EXPECT_TRUE(kernel.ok()) << kernel.status().message();
  if (!kernel.ok()) return {};
  auto out = testing::RunKernel(**kernel, root, args);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? std::move(*out) : std::vector<Literal>{};
}

Literal Vector(std::vector<double> values) {
  Literal l(Shape(PrimitiveType::kF32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) l.SetDouble(i, values[i]);
  return l;
}

constexpr char kBatchNormTraining[] = R"(HloModule m
ENTRY e {
  x = f32[96,40,40,4] parameter(0)
  scale = f32[4] parameter(1)
  offset = f32[4] parameter(2)
  ROOT y = (f32[96,40,40,4], f32[4], f32[4]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=3
})";

// Channels whose 153600 values are all equal: the mean is that value and the
// variance exactly 0, so every output is the offset. Summed in f32 (the
// kernel before the f64 statistics), 1000.1 came out with mean 1012.4 and
// variance 149.5 at MobileNetV2's size (batch 96, 112x112).
TEST(BatchNormTest, TrainingConstantChannelsHaveExactlyZeroVariance) {
  const std::vector<double> values = {1000.1, 1e3, -3.3, 7.7e4};
  Literal x(Shape(PrimitiveType::kF32, {96, 40, 40, 4}));
  for (int64_t i = 0; i < x.element_count(); ++i) x.SetDouble(i, values[i % 4]);
  std::vector<Literal> args;
  args.push_back(std::move(x));
  args.push_back(Vector({2, 3, 4, 5}));
  args.push_back(Vector({0.5, -1, 0.25, 7}));
  std::vector<Literal> out = RunBatchNormKernel(kBatchNormTraining, args);
  ASSERT_EQ(out.size(), 3u);
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_EQ(out[1].GetDouble(c), static_cast<double>(static_cast<float>(values[c]))) << "mean of channel " << c;
    EXPECT_EQ(out[2].GetDouble(c), 0.0) << "variance of channel " << c;
  }
  for (int64_t i = 0; i < out[0].element_count(); i += 997) {
    ASSERT_EQ(out[0].GetDouble(i), args[2].GetDouble(i % 4)) << "element " << i;
  }
}

// A large mean and a small spread (1e3 + U(-1, 1), 1e4 + U(-0.5, 0.5)):
// mean, variance and output agree with the evaluator (f64, two-pass) to f32
// precision; the grad's sums too.
TEST(BatchNormTest, TrainingAndGradLargeMeanSmallSpreadMatchTheEvaluator) {
  Literal x(Shape(PrimitiveType::kF32, {96, 40, 40, 4}));
  Literal dy(x.shape());
  uint64_t state = 99;
  auto uniform = [&]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0 * 2 - 1;
  };
  const double means[] = {1e3, -2e3, 1e4, 5e2}, spreads[] = {1, 0.25, 0.5, 3};
  for (int64_t i = 0; i < x.element_count(); ++i) {
    x.SetDouble(i, means[i % 4] + spreads[i % 4] * uniform());
    dy.SetDouble(i, 1e2 + uniform());
  }
  std::vector<Literal> args;
  args.push_back(x);
  args.push_back(Vector({2, 3, 4, 5}));
  args.push_back(Vector({0.5, -1, 0.25, 7}));
  auto m = ParseHloModule(kBatchNormTraining, "test");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  std::vector<Literal> got = RunBatchNormKernel(kBatchNormTraining, args);
  ASSERT_EQ(got.size(), 3u);
  const std::vector<Literal>& w = want->tuple_elements();
  EXPECT_TRUE(CompareLiterals(w[1], got[1], {0, 1e-7}).ok()) << CompareLiterals(w[1], got[1], {0, 1e-7}).message();
  EXPECT_TRUE(CompareLiterals(w[2], got[2], {0, 1e-5}).ok()) << CompareLiterals(w[2], got[2], {0, 1e-5}).message();
  // The output reads the mean back rounded to f32: off by up to half an
  // ulp of 1e4 (4.9e-4) over a spread of 0.29, times the scale.
  EXPECT_TRUE(CompareLiterals(w[0], got[0], {1e-2, 1e-4}).ok()) << CompareLiterals(w[0], got[0], {1e-2, 1e-4}).message();

  const std::string grad = R"(HloModule m
ENTRY e {
  x = f32[96,40,40,4] parameter(0)
  scale = f32[4] parameter(1)
  mean = f32[4] parameter(2)
  var = f32[4] parameter(3)
  dy = f32[96,40,40,4] parameter(4)
  ROOT g = (f32[96,40,40,4], f32[4], f32[4]) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=3
})";
  std::vector<Literal> grad_args;
  grad_args.push_back(std::move(x));
  grad_args.push_back(Vector({2, 3, 4, 5}));
  grad_args.push_back(got[1]);
  grad_args.push_back(got[2]);
  grad_args.push_back(std::move(dy));
  auto gm = ParseHloModule(grad, "test");
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  absl::StatusOr<Literal> grad_want = HloEvaluator().Evaluate(**gm, grad_args);
  ASSERT_TRUE(grad_want.ok()) << grad_want.status().message();
  std::vector<Literal> grad_got = RunBatchNormKernel(grad, grad_args);
  ASSERT_EQ(grad_got.size(), 3u);
  const std::vector<Literal>& gw = grad_want->tuple_elements();
  for (int i = 1; i < 3; ++i) {
    absl::Status s = CompareLiterals(gw[i], grad_got[i], {1e-3, 1e-5});
    EXPECT_TRUE(s.ok()) << "output " << i << ": " << s.message();
  }
}

TEST(BatchNormTest, TrainingAndGradRunWithoutTheExpander) {
  testing::ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[4,5,6,3] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  ROOT y = (f32[4,5,6,3], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=3
})", {1e-4, 1e-4, 64});
  testing::ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[2,3,4,5]{1,3,2,0} parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  ROOT y = (f32[2,3,4,5]{1,3,2,0}, f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
})", {1e-4, 1e-4, 64});
  testing::ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[4,5,6,3] parameter(0)
  scale = f32[3] parameter(1)
  mean = f32[3] parameter(2)
  var = f32[3] constant({0.5, 1.5, 2})
  dy = f32[4,5,6,3] parameter(3)
  ROOT g = (f32[4,5,6,3], f32[3], f32[3]) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=3
})", {1e-4, 1e-4, 64});
}

}  // namespace
}  // namespace passlab

namespace passlab {
namespace {

TEST(ScatterTest, AddWithDuplicatesAndOutOfBoundsWindows) {
  EmitterKind kind;
  testing::ExpectMatchesEvaluator(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[6,4] parameter(0)
  i = s32[5] constant({1, 5, 1, 9, -1})
  u = f32[5,4] parameter(1)
  ROOT s = f32[6,4] scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})", {1e-6, 1e-6, 4}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kScatter);
  // 2-D windows that must fit entirely; overwrite combiner; layouts.
  testing::ExpectMatchesEvaluator(R"(HloModule m
second {
  x = s32[] parameter(0)
  ROOT y = s32[] parameter(1)
}
ENTRY e {
  a = s32[7,8]{0,1} parameter(0)
  i = s32[3,2] constant({{0, 0}, {5, 6}, {6, 1}})
  u = s32[3,2,3] parameter(1)
  ROOT s = s32[7,8]{0,1} scatter(a, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=second
})", {0, 0, 0});
}

// The max-pool gradient: each source element goes to the maximum of its
// window (padded "SAME" windows, stride 2), and overlapping windows add up.
TEST(SelectAndScatterTest, MaxPoolGradientMatchesTheEvaluator) {
  EmitterKind kind;
  testing::ExpectMatchesEvaluator(R"(HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  x = f32[2,7,7,3] parameter(0)
  g = f32[2,4,4,3] parameter(1)
  z = f32[] constant(0)
  ROOT s = f32[2,7,7,3] select-and-scatter(x, g, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, select=ge, scatter=add
})", {1e-6, 1e-6, 4}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kSelectAndScatter);
}

// Source slices whose windows cannot overlap (batch and channels here, and
// rows with a window no taller than its stride) run as parallel rows of the
// CPU nest; the result is the evaluator's, bit for bit in integers.
TEST(SelectAndScatterTest, DisjointSlicesRunInParallel) {
  CpuCompileOptions parallel;
  parallel.parallel_threshold_elements = 1;
  parallel.num_threads = 2;
  testing::ExpectMatchesEvaluator(R"(HloModule m
ge {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY e {
  x = s32[4,9,9,5] parameter(0)
  g = s32[4,5,4,5] parameter(1)
  z = s32[] constant(3)
  ROOT s = s32[4,9,9,5] select-and-scatter(x, g, z), window={size=1x2x3x1 stride=1x2x2x1 pad=0_0x0_1x0_0x0_0}, select=ge, scatter=add
})", {0, 0, 0}, parallel);
}

// Integers, whose ties show the selection's order (a position stays selected
// while select(selected, next) holds: GE and LE keep the first of equal
// values, GT and LT take the last), another combiner, non-default layouts, a
// nonzero init value, and windows wholly in the padding (their source
// elements go nowhere).
TEST(SelectAndScatterTest, TiesLayoutsAndWindowsInThePadding) {
  for (const char* direction : {"LT", "LE", "GT", "GE"}) {
    SCOPED_TRACE(direction);
    std::string text = R"(HloModule m
pick {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=DIR
}
max {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] maximum(x, y)
}
ENTRY e {
  x = s32[5,6]{0,1} parameter(0)
  g = s32[5,4] parameter(1)
  z = s32[] constant(-7)
  ROOT s = s32[5,6]{0,1} select-and-scatter(x, g, z), window={size=2x3 stride=2x2 pad=0_5x1_2}, select=pick, scatter=max
})";
    text.replace(text.find("DIR"), 3, direction);
    testing::ExpectMatchesEvaluator(text, {0, 0, 0});
  }
}

// Windows beyond the unrolling limit, dilated windows and fused
// select-and-scatters are not compiled (they run as reference routines).
TEST(SelectAndScatterTest, WindowsTheEmitterDoesNotTakeAreRefused) {
  const char* text = R"(HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  x = f32[40,40] parameter(0)
  g = f32[1,1] parameter(1)
  z = f32[] constant(0)
  ROOT s = f32[40,40] select-and-scatter(x, g, z), window={size=20x20}, select=ge, scatter=add
})";
  auto m = ParseHloModule(text, "test");
  ASSERT_TRUE(m.ok()) << m.status().message();
  CpuKernelCompiler compiler;
  auto kernel = compiler.Compile(*(*m)->entry_computation()->root_instruction());
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("window of 400 positions"), std::string::npos) << kernel.status().message();
}

}  // namespace
}  // namespace passlab
