// The cuBLASLt and cuDNN problem descriptions computed from HLO library
// calls, checked without a GPU: each plan is executed by a host emulator of
// the library's documented semantics (cuBLASLt: column-major matrices with
// leading dimensions, op(A)/op(B), strided batches, alpha/beta, bias along
// D's rows, relu/gelu; cuDNN: N,C,spatial tensors with strides, KCRS/KRSC
// filters, cross-correlation with symmetric padding, stride, dilation and
// groups) and compared with the evaluator on the HLO call.
#include "core/backends/cuda/cuda_library_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "core/eval/hlo_evaluator.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

Literal Random(const Shape& shape, uint64_t seed) {
  Literal l(Shape::Array(shape.element_type(), shape.dimensions()));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-1000, 1000);
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetDouble(i, dist(rng) / 1000.0);
  return l;
}

// Host buffers of one call (operands, then result leaves) in their layouts.
struct Call {
  std::unique_ptr<HloModule> module;
  const HloInstruction* inst = nullptr;
  std::vector<Shape> shapes;
  std::vector<std::vector<uint64_t>> storage;
  Literal expected;  // the evaluator's result leaf 0
  void* buffer(int64_t i) { return storage[i].data(); }
  double Get(int64_t i, int64_t offset) { return ReadFloat(shapes[i].element_type(), buffer(i), offset); }
  void Set(int64_t i, int64_t offset, double v) { WriteFloat(shapes[i].element_type(), buffer(i), offset, v); }
};

Call Prepare(const std::string& text) {
  Call c;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message() << "\n" << text;
  if (!m.ok()) return c;
  c.module = std::move(*m);
  c.inst = c.module->entry_computation()->root_instruction();
  std::vector<Literal> args;
  for (int64_t i = 0; i < c.inst->operand_count(); ++i) {
    const Shape& s = c.inst->operand(i)->shape();
    args.push_back(Random(s, i + 7));
    c.shapes.push_back(s);
    c.storage.emplace_back(BufferBytes(s) / 8 + 1, 0);
    EXPECT_TRUE(CopyLiteralToBuffer(args.back(), s, c.buffer(i)).ok());
  }
  for (const Shape& s : LeafShapes(c.inst->shape())) {
    c.shapes.push_back(s);
    c.storage.emplace_back(BufferBytes(s) / 8 + 1, 0);
  }
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(*c.module, args);
  EXPECT_TRUE(want.ok()) << want.status().message();
  if (want.ok()) c.expected = want->shape().IsTuple() ? want->tuple_elements()[0] : std::move(*want);
  return c;
}

void ExpectMatches(Call& c, double tol, const std::string& what) {
  int64_t result = c.inst->operand_count();
  absl::StatusOr<Literal> got = LiteralFromBuffer(c.shapes[result], c.buffer(result));
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->element_count(), c.expected.element_count());
  for (int64_t i = 0; i < got->element_count(); ++i) {
    double want = c.expected.GetDouble(i);
    ASSERT_LE(std::abs(got->GetDouble(i) - want), tol * (1 + std::abs(want)))
        << what << ": element " << i << " is " << got->GetDouble(i) << ", expected " << want;
  }
}

// ---------------------------------------------------------------- cuBLASLt emulator

double Gelu(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

void EmulateBlasLt(const BlasLtGemmPlan& p, Call& c) {
  int64_t d_buffer = c.inst->operand_count();
  size_t calls = std::max<size_t>(p.outer_d.size(), 1);
  for (size_t call = 0; call < calls; ++call) {
    auto outer = [&](const std::vector<int64_t>& o) { return o.empty() ? int64_t{0} : o[call]; };
    const int64_t oa = outer(p.outer_a), ob = outer(p.outer_b), oc = outer(p.outer_c), od = outer(p.outer_d);
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          double acc = 0;
          for (int64_t q = 0; q < p.k; ++q) {
            int64_t a = oa + b * p.a.batch_stride + (p.transpose_a ? q + i * p.a.ld : i + q * p.a.ld);
            int64_t bb = ob + b * p.b.batch_stride + (p.transpose_b ? j + q * p.b.ld : q + j * p.b.ld);
            acc += c.Get(p.a_buffer, a) * c.Get(p.b_buffer, bb);
          }
          double v = p.alpha * acc;
          if (p.c_buffer >= 0) v += p.beta * c.Get(p.c_buffer, oc + b * p.c.batch_stride + i + j * p.c.ld);
          if (p.bias_buffer >= 0) v += c.Get(p.bias_buffer, i);
          if (p.epilogue == GemmEpilogue::kRelu || p.epilogue == GemmEpilogue::kBiasRelu) v = std::max(v, 0.0);
          if (p.epilogue == GemmEpilogue::kGelu || p.epilogue == GemmEpilogue::kBiasGelu) v = Gelu(v);
          c.Set(d_buffer, od + b * p.d.batch_stride + i + j * p.d.ld, v);
        }
      }
    }
  }
}

std::string Gemm(const std::string& params, const std::string& operands, const std::string& result,
                 const std::string& config) {
  return StrCat("HloModule m\nENTRY e {\n", params, "\n  ROOT g = ", result, " custom-call(", operands,
                "), custom_call_target=\"__blas$gemm\", backend_config={\"gemm_backend_config\":", config, "}\n}\n");
}

constexpr char kMatmul[] =
    R"("dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]})";

// Plans the call and runs the plan on the emulator; false when cuBLASLt
// cannot take it (kUnimplemented).
bool CheckGemmPlan(const std::string& text, double tol = 1e-5, BlasLtGemmPlan* planned = nullptr) {
  Call c = Prepare(text);
  if (c.inst == nullptr) return false;
  absl::StatusOr<BlasLtGemmPlan> plan = PlanBlasLtGemm(*c.inst);
  if (!plan.ok()) {
    EXPECT_TRUE(absl::IsUnimplemented(plan.status())) << plan.status().message();
    return false;
  }
  EmulateBlasLt(*plan, c);
  ExpectMatches(c, tol, BlasLtGemmPlanToString(*plan));
  if (planned != nullptr) *planned = *plan;
  return true;
}

TEST(BlasLtGemmPlanTest, RowMajorResultIsComputedTransposed) {
  std::string text = Gemm("  a = f32[37,29] parameter(0)\n  b = f32[29,41] parameter(1)", "a, b", "f32[37,41]",
                          StrCat("{", kMatmul, "}"));
  Call c = Prepare(text);
  absl::StatusOr<BlasLtGemmPlan> plan = PlanBlasLtGemm(*c.inst);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  // D^T[41x37] = B^T A^T: cuBLAS's A is our rhs, row-major [29][41] = a
  // column-major 41x29 matrix with ld 41, untransposed.
  EXPECT_TRUE(plan->swapped);
  EXPECT_EQ(plan->m, 41);
  EXPECT_EQ(plan->n, 37);
  EXPECT_EQ(plan->k, 29);
  EXPECT_EQ(plan->a_buffer, 1);
  EXPECT_EQ(plan->b_buffer, 0);
  EXPECT_FALSE(plan->transpose_a);
  EXPECT_FALSE(plan->transpose_b);
  EXPECT_EQ(plan->a, (BlasLtMatrix{PrimitiveType::kF32, 41, 29, 41, 0}));
  EXPECT_EQ(plan->b, (BlasLtMatrix{PrimitiveType::kF32, 29, 37, 29, 0}));
  EXPECT_EQ(plan->d, (BlasLtMatrix{PrimitiveType::kF32, 41, 37, 41, 0}));
  EXPECT_TRUE(CheckGemmPlan(text));
}

TEST(BlasLtGemmPlanTest, TransposedOperandsAndColumnMajorResult) {
  std::string text =
      Gemm("  a = f32[13,7] parameter(0)\n  b = f32[13,9]{0,1} parameter(1)", "a, b", "f32[7,9]{0,1}",
           R"({"dot_dimension_numbers":{"lhs_contracting_dimensions":["0"],"rhs_contracting_dimensions":["0"]}})");
  Call c = Prepare(text);
  absl::StatusOr<BlasLtGemmPlan> plan = PlanBlasLtGemm(*c.inst);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  // The result is column-major: computed as is. lhs contracts its dim 0, so
  // its [m][k] view has unit row stride (column-major as stored), as has the
  // column-major rhs: neither needs op = T.
  EXPECT_FALSE(plan->swapped);
  EXPECT_FALSE(plan->transpose_a);
  EXPECT_FALSE(plan->transpose_b);
  EXPECT_EQ(plan->a, (BlasLtMatrix{PrimitiveType::kF32, 7, 13, 7, 0}));
  EXPECT_EQ(plan->d, (BlasLtMatrix{PrimitiveType::kF32, 7, 9, 7, 0}));
  EXPECT_TRUE(CheckGemmPlan(text));
}

TEST(BlasLtGemmPlanTest, BatchStridesAndBroadcastOperand) {
  EXPECT_TRUE(CheckGemmPlan(Gemm("  a = f32[3,5,4] parameter(0)\n  b = f32[3,4,6] parameter(1)", "a, b", "f32[3,5,6]",
                                 R"({"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"],
                                     "lhs_contracting_dimensions":["2"],"rhs_contracting_dimensions":["1"]}})")));
  // rhs without batch dimensions: batch stride 0.
  std::string text = Gemm("  a = f32[3,5,4] parameter(0)\n  b = f32[4,6] parameter(1)", "a, b", "f32[3,5,6]",
                          R"({"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],
                              "lhs_contracting_dimensions":["2"],"rhs_contracting_dimensions":["0"]}})");
  Call c = Prepare(text);
  absl::StatusOr<BlasLtGemmPlan> plan = PlanBlasLtGemm(*c.inst);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->batch, 3);
  EXPECT_EQ(plan->a.batch_stride, 0);  // cuBLAS's A is the (swapped) rhs
  EXPECT_EQ(plan->b.batch_stride, 20);
  EXPECT_TRUE(CheckGemmPlan(text));
}

TEST(BlasLtGemmPlanTest, AlphaBetaAndEpilogues) {
  std::string text = Gemm("  a = f32[8,16] parameter(0)\n  b = f32[16,12] parameter(1)\n  c = f32[8,12] "
                          "parameter(2)\n  bias = f32[12] parameter(3)",
                          "a, b, c, bias", "f32[8,12]",
                          StrCat("{", kMatmul, R"(,"alpha_real":0.75,"beta":-1.25,"epilogue":"BIAS_RELU"})"));
  Call c = Prepare(text);
  absl::StatusOr<BlasLtGemmPlan> plan = PlanBlasLtGemm(*c.inst);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->epilogue, GemmEpilogue::kBiasRelu);
  EXPECT_EQ(plan->c_buffer, 2);
  EXPECT_EQ(plan->bias_buffer, 3);
  EXPECT_DOUBLE_EQ(plan->beta, -1.25);
  EXPECT_TRUE(CheckGemmPlan(text));
  EXPECT_TRUE(CheckGemmPlan(Gemm("  a = f32[5,7] parameter(0)\n  b = f32[7,6] parameter(1)\n  bias = f32[6] parameter(2)",
                                 "a, b, bias", "f32[5,6]", StrCat("{", kMatmul, R"(,"epilogue":"BIAS_GELU"})")),
                            1e-5));
  EXPECT_TRUE(CheckGemmPlan(Gemm("  a = bf16[9,10] parameter(0)\n  b = bf16[10,11] parameter(1)", "a, b", "f32[9,11]",
                                 StrCat("{", kMatmul, R"(,"epilogue":"GELU"})"))));
}

TEST(BlasLtGemmPlanTest, UnplannableLayoutsAndBiasAreUnimplemented) {
  // A bias needs the swapped (row-major result) form.
  Call c = Prepare(Gemm("  a = f32[5,7] parameter(0)\n  b = f32[7,6] parameter(1)\n  bias = f32[6] parameter(2)",
                        "a, b, bias", "f32[5,6]{0,1}", StrCat("{", kMatmul, R"(,"epilogue":"BIAS"})")));
  absl::StatusOr<BlasLtGemmPlan> plan = PlanBlasLtGemm(*c.inst);
  EXPECT_TRUE(absl::IsUnimplemented(plan.status())) << plan.status();
  // Batch dimension in the middle of a scrambled layout: no strided batch.
  c = Prepare(Gemm("  a = f32[3,5,4]{0,2,1} parameter(0)\n  b = f32[6,3,5]{1,0,2} parameter(1)", "a, b",
                   "f32[3,4,6]{1,2,0}",
                   R"({"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["1"],
                       "lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["2"]}})"));
  plan = PlanBlasLtGemm(*c.inst);
  if (!plan.ok()) {
    EXPECT_TRUE(absl::IsUnimplemented(plan.status())) << plan.status();
  }
  // Mixed operand types.
  c = Prepare(Gemm("  a = f32[4,4] parameter(0)\n  b = bf16[4,4] parameter(1)", "a, b", "f32[4,4]",
                   StrCat("{", kMatmul, "}")));
  if (c.inst != nullptr) {
    plan = PlanBlasLtGemm(*c.inst);
    EXPECT_FALSE(plan.ok());
  }
}

// Attention's batched matmuls: [batch, seq, heads, dim] operands contract
// over dim with batch dimensions batch and heads, which are not one
// progression in memory. The heads become cuBLASLt's strided batch, and each
// batch index its own call.
TEST(BlasLtGemmPlanTest, BatchDimensionsOneStrideCannotCoverBecomeSeparateCalls) {
  const std::string config =
      R"({"dot_dimension_numbers":{"lhs_batch_dimensions":["0","2"],"rhs_batch_dimensions":["0","2"],)"
      R"("lhs_contracting_dimensions":["3"],"rhs_contracting_dimensions":["3"]}})";
  std::string text = Gemm("  q = f32[2,5,3,4] parameter(0)\n  k = f32[2,6,3,4] parameter(1)", "q, k", "f32[2,3,5,6]",
                          config);
  Call c = Prepare(text);
  ASSERT_NE(c.inst, nullptr);
  absl::StatusOr<BlasLtGemmPlan> plan = PlanBlasLtGemm(*c.inst);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->batch, 3);  // the heads
  EXPECT_EQ(plan->outer_d, (std::vector<int64_t>{0, 3 * 5 * 6}));
  EXPECT_EQ(plan->outer_a.size(), 2u);
  EXPECT_NE(BlasLtGemmPlanToString(*plan).find("x2 calls"), std::string::npos) << BlasLtGemmPlanToString(*plan);
  EXPECT_TRUE(CheckGemmPlan(text));
  // With the heads outermost in q's layout, every (batch, head) matrix needs
  // its own call, and the plan still computes the same.
  EXPECT_TRUE(CheckGemmPlan(
      Gemm("  q = f32[2,5,3,4]{3,1,0,2} parameter(0)\n  k = f32[2,6,3,4] parameter(1)", "q, k", "f32[2,3,5,6]", config)));
}

// Random dimension numbers, sizes and layouts: every plan that cuBLASLt can
// take computes what the evaluator computes.
TEST(BlasLtGemmPlanTest, RandomDimensionNumbersAndLayouts) {
  std::mt19937_64 rng(2026);
  auto next = [&](int n) { return static_cast<int>(rng() % n); };
  int planned = 0, split = 0;
  constexpr int kTrials = 60;
  for (int trial = 0; trial < kTrials; ++trial) {
    int nb = next(3), nm = 1 + next(2), nn = 1, nk = 1 + next(2);
    std::vector<int64_t> batch, mdims, ndims, kdims;
    for (int i = 0; i < nb; ++i) batch.push_back(1 + next(3));
    for (int i = 0; i < nm; ++i) mdims.push_back(1 + next(5));
    for (int i = 0; i < nn; ++i) ndims.push_back(1 + next(5));
    for (int i = 0; i < nk; ++i) kdims.push_back(1 + next(5));
    // lhs = batch, m, k; rhs = batch, k, n (positions permuted below).
    auto permutation = [&](int n) {
      std::vector<int64_t> p(n);
      for (int i = 0; i < n; ++i) p[i] = i;
      std::shuffle(p.begin(), p.end(), rng);
      return p;
    };
    auto layout = [&](int rank) {
      if (rank == 0 || next(2) == 0) return std::string();
      return StrCat("{", Join(permutation(rank), ","), "}");
    };
    std::vector<int64_t> lperm = permutation(nb + nm + nk), rperm = permutation(nb + nk + nn);
    std::vector<int64_t> ldims(lperm.size()), rdims(rperm.size()), lb, rb, lk, rk;
    for (int i = 0; i < nb + nm + nk; ++i) {
      int64_t size = i < nb ? batch[i] : i < nb + nm ? mdims[i - nb] : kdims[i - nb - nm];
      ldims[lperm[i]] = size;
    }
    for (int i = 0; i < nb; ++i) lb.push_back(lperm[i]);
    for (int i = 0; i < nk; ++i) lk.push_back(lperm[nb + nm + i]);
    for (int i = 0; i < nb + nk + nn; ++i) {
      int64_t size = i < nb ? batch[i] : i < nb + nk ? kdims[i - nb] : ndims[i - nb - nk];
      rdims[rperm[i]] = size;
    }
    for (int i = 0; i < nb; ++i) rb.push_back(rperm[i]);
    for (int i = 0; i < nk; ++i) rk.push_back(rperm[nb + i]);
    // The result: batch, then lhs free dims in lhs order, then rhs free dims.
    std::vector<int64_t> out = batch;
    for (int64_t d = 0; d < static_cast<int64_t>(ldims.size()); ++d) {
      if (std::find(lb.begin(), lb.end(), d) == lb.end() && std::find(lk.begin(), lk.end(), d) == lk.end()) {
        out.push_back(ldims[d]);
      }
    }
    out.push_back(ndims[0]);
    auto ints = [](const std::vector<int64_t>& v) {
      std::vector<std::string> q;
      for (int64_t x : v) q.push_back(StrCat("\"", x, "\""));
      return StrCat("[", Join(q, ","), "]");
    };
    bool beta = next(2) == 1, bias = next(2) == 1;
    const char* epilogues[] = {"DEFAULT", "RELU", "GELU"};
    std::string epilogue = epilogues[next(3)];
    if (bias) epilogue = epilogue == "DEFAULT" ? "BIAS" : StrCat("BIAS_", epilogue);
    std::string result_layout = layout(out.size());
    std::string params = StrCat("  a = f32[", Join(ldims, ","), "]", layout(ldims.size()), " parameter(0)\n  b = f32[",
                                Join(rdims, ","), "]", layout(rdims.size()), " parameter(1)");
    std::string operands = "a, b";
    if (beta) {
      StrAppend(&params, "\n  c = f32[", Join(out, ","), "]", result_layout, " parameter(2)");
      operands += ", c";
    }
    if (bias) {
      StrAppend(&params, "\n  bias = f32[", out.back(), "] parameter(", beta ? 3 : 2, ")");
      operands += ", bias";
    }
    std::string config = StrCat(R"({"dot_dimension_numbers":{"lhs_batch_dimensions":)", ints(lb),
                                R"(,"rhs_batch_dimensions":)", ints(rb), R"(,"lhs_contracting_dimensions":)", ints(lk),
                                R"(,"rhs_contracting_dimensions":)", ints(rk), R"(},"alpha_real":1.5,"beta":)",
                                beta ? "-0.5" : "0", R"(,"epilogue":")", epilogue, R"("})");
    std::string text = Gemm(params, operands, StrCat("f32[", Join(out, ","), "]", result_layout), config);
    SCOPED_TRACE(text);
    BlasLtGemmPlan plan;
    if (CheckGemmPlan(text, 1e-5, &plan)) {
      ++planned;
      split += plan.outer_d.size() > 1;
    }
  }
  // Most random layouts give strided matrices (the rest run on the host),
  // some of them only as several calls.
  EXPECT_GE(planned, kTrials / 3);
  EXPECT_GT(split, 0);
}

// ---------------------------------------------------------------- cuDNN emulator

// Offset of an N,C,spatial index in a strided tensor.
int64_t TensorOffset(const DnnTensor& t, const std::vector<int64_t>& index) {
  int64_t o = 0;
  for (size_t i = 0; i < index.size(); ++i) o += index[i] * t.strides[i];
  return o;
}

int64_t FilterOffset(const DnnConvPlan& p, int64_t k, int64_t c, const std::vector<int64_t>& r) {
  const std::vector<int64_t>& d = p.w_dims;
  if (p.w_order == DnnFilterOrder::kStrided) {  // the filter's own layout (cudnnTransformTensor's source)
    int64_t o = k * p.w_strides[0] + c * p.w_strides[1];
    for (size_t i = 0; i < r.size(); ++i) o += r[i] * p.w_strides[2 + i];
    return o;
  }
  if (p.w_order == DnnFilterOrder::kKCRS) {
    int64_t o = k * d[1] + c;
    for (size_t i = 0; i < r.size(); ++i) o = o * d[2 + i] + r[i];
    return o;
  }
  int64_t o = k;
  for (size_t i = 0; i < r.size(); ++i) o = o * d[2 + i] + r[i];
  return o * d[1] + c;
}

// Calls fn(odometer) for every index below `sizes`.
void ForEachIndex(const std::vector<int64_t>& sizes, const std::function<void(const std::vector<int64_t>&)>& fn) {
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  std::vector<int64_t> idx(sizes.size(), 0);
  for (;;) {
    fn(idx);
    int64_t i = static_cast<int64_t>(sizes.size()) - 1;
    for (; i >= 0; --i) {
      if (++idx[i] < sizes[i]) break;
      idx[i] = 0;
    }
    if (i < 0) return;
  }
}

double Activate(ConvActivation a, double v) {
  switch (a) {
    case ConvActivation::kNone: return v;
    case ConvActivation::kRelu: return std::max(v, 0.0);
    case ConvActivation::kRelu6: return std::min(std::max(v, 0.0), 6.0);
    case ConvActivation::kElu: return v > 0 ? v : std::expm1(v);
    case ConvActivation::kTanh: return std::tanh(v);
    case ConvActivation::kSigmoid: return 1 / (1 + std::exp(-v));
  }
  return v;
}

void EmulateDnn(const DnnConvPlan& p, Call& c) {
  int64_t spatial = p.x.dims.size() - 2, groups = p.groups;
  int64_t n_batch = p.x.dims[0], k_total = p.y.dims[1], c_group = p.w_dims[1], k_group = k_total / groups;
  std::vector<int64_t> out_spatial(p.y.dims.begin() + 2, p.y.dims.end());
  std::vector<int64_t> window(p.w_dims.begin() + 2, p.w_dims.end());
  // Accumulate in doubles over the output buffer's logical elements.
  std::vector<double> acc_y, acc_x, acc_w;
  int64_t y_count = 1, x_count = 1, w_count = 1;
  for (int64_t d : p.y.dims) y_count *= d;
  for (int64_t d : p.x.dims) x_count *= d;
  for (int64_t d : p.w_dims) w_count *= d;
  auto dense = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (size_t i = 0; i < dims.size(); ++i) o = o * dims[i] + idx[i];
    return o;
  };
  acc_y.assign(y_count, 0);
  acc_x.assign(x_count, 0);
  acc_w.assign(w_count, 0);
  std::vector<int64_t> outer = {n_batch, k_total};
  outer.insert(outer.end(), out_spatial.begin(), out_spatial.end());
  std::vector<int64_t> inner = {c_group};
  inner.insert(inner.end(), window.begin(), window.end());
  ForEachIndex(outer, [&](const std::vector<int64_t>& o) {
    int64_t n = o[0], k = o[1], g = k / k_group;
    ForEachIndex(inner, [&](const std::vector<int64_t>& q) {
      std::vector<int64_t> xi = {n, g * c_group + q[0]}, r(q.begin() + 1, q.end());
      for (int64_t s = 0; s < spatial; ++s) {
        int64_t pos = o[2 + s] * p.stride[s] - p.padding[s] + r[s] * p.dilation[s];
        if (pos < 0 || pos >= p.x.dims[2 + s]) return;
        xi.push_back(pos);
      }
      int64_t xo = TensorOffset(p.x, xi), wo = FilterOffset(p, k, q[0], r), yo = TensorOffset(p.y, o);
      switch (p.kind) {
        case LibraryCallKind::kConvBackwardInput:
          acc_x[dense(p.x.dims, xi)] += c.Get(p.y_buffer, yo) * c.Get(p.w_buffer, wo);
          break;
        case LibraryCallKind::kConvBackwardFilter: {
          std::vector<int64_t> wi = {k, q[0]};
          wi.insert(wi.end(), r.begin(), r.end());
          acc_w[dense(p.w_dims, wi)] += c.Get(p.x_buffer, xo) * c.Get(p.y_buffer, yo);
          break;
        }
        default:
          acc_y[dense(p.y.dims, o)] += c.Get(p.x_buffer, xo) * c.Get(p.w_buffer, wo);
          break;
      }
    });
  });
  switch (p.kind) {
    case LibraryCallKind::kConvBackwardInput:
      ForEachIndex(p.x.dims, [&](const std::vector<int64_t>& i) {
        c.Set(p.x_buffer, TensorOffset(p.x, i), acc_x[dense(p.x.dims, i)]);
      });
      return;
    case LibraryCallKind::kConvBackwardFilter:
      ForEachIndex(p.w_dims, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> r(i.begin() + 2, i.end());
        c.Set(p.w_buffer, FilterOffset(p, i[0], i[1], r), acc_w[dense(p.w_dims, i)]);
      });
      return;
    default:
      ForEachIndex(p.y.dims, [&](const std::vector<int64_t>& i) {
        double v = acc_y[dense(p.y.dims, i)];
        if (p.kind == LibraryCallKind::kConvBiasActivationForward) {
          std::vector<int64_t> channel(i.size(), 0);  // the bias broadcasts along all but C
          channel[1] = i[1];
          v = p.conv_scale * v + c.Get(p.bias_buffer, TensorOffset(p.bias, channel));
          if (p.side_input_buffer >= 0) v += p.side_input_scale * c.Get(p.side_input_buffer, TensorOffset(p.side_input, i));
          v = Activate(p.activation, v);
        }
        c.Set(p.y_buffer, TensorOffset(p.y, i), v);
      });
      return;
  }
}

std::string Conv(const std::string& target, const std::string& a, const std::string& b, const std::string& result,
                 const std::string& attrs, const std::string& extra_params = "", const std::string& extra_ops = "",
                 const std::string& config = "") {
  return StrCat("HloModule m\nENTRY e {\n  a = ", a, " parameter(0)\n  b = ", b, " parameter(1)\n", extra_params,
                "  ROOT c = (", result, ", u8[0]) custom-call(a, b", extra_ops, "), ", attrs,
                ", custom_call_target=\"", target, "\"", config.empty() ? "" : StrCat(", backend_config=", config),
                "\n}\n");
}

absl::StatusOr<DnnConvPlan> CheckConvPlan(const std::string& text, double tol = 1e-4) {
  Call c = Prepare(text);
  if (c.inst == nullptr) return absl::InvalidArgumentError("parse");
  absl::StatusOr<DnnConvPlan> plan = PlanDnnConvolution(*c.inst);
  if (!plan.ok()) return plan.status();
  EmulateDnn(*plan, c);
  ExpectMatches(c, tol, DnnConvPlanToString(*plan));
  return plan;
}

TEST(DnnConvPlanTest, NhwcForwardDescribesStridesAndFilterOrder) {
  absl::StatusOr<DnnConvPlan> plan =
      CheckConvPlan(Conv("__dnn$convForward", "f32[2,7,7,3]", "f32[3,3,3,5]", "f32[2,4,4,5]",
                         "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  // x is NHWC in memory: N,C,H,W dims with strides 147,1,21,3.
  EXPECT_EQ(plan->x, (DnnTensor{{2, 3, 7, 7}, {147, 1, 21, 3}}));
  EXPECT_EQ(plan->y, (DnnTensor{{2, 5, 4, 4}, {80, 1, 20, 5}}));
  // 01io with o minor is neither KCRS nor KRSC: a transposed copy.
  EXPECT_EQ(plan->w_dims, (std::vector<int64_t>{5, 3, 3, 3}));
  EXPECT_EQ(plan->w_order, DnnFilterOrder::kStrided);
  EXPECT_EQ(plan->packed_order, DnnFilterOrder::kKRSC);  // NHWC activations, NHWC filter copy
  EXPECT_EQ(plan->w_strides, (std::vector<int64_t>{1, 5, 45, 15}));
  EXPECT_EQ(plan->padding, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(plan->stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(plan->dilation, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(plan->flops, 2 * 2 * 5 * 16 * 3 * 9);
  // o01i is KRSC (cuDNN's NHWC filter), oi01 KCRS.
  plan = CheckConvPlan(Conv("__dnn$convForward", "f32[2,7,7,3]", "f32[5,3,3,3]", "f32[2,7,7,5]",
                            "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f"));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->w_order, DnnFilterOrder::kKRSC);
  plan = CheckConvPlan(Conv("__dnn$convForward", "f32[2,3,7,7]", "f32[5,3,3,3]", "f32[2,5,7,7]",
                            "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01"));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->w_order, DnnFilterOrder::kKCRS);
  EXPECT_EQ(plan->x, (DnnTensor{{2, 3, 7, 7}, {147, 49, 7, 1}}));
}

// cuDNN has no backward algorithm for f32 when the filter's format differs
// from the activations' (seen on an H200): a dense KCRS filter with NHWC
// activations is copied to KRSC, a dense KRSC one with NCHW activations to
// KCRS; the emulator runs each through the strided path.
TEST(DnnConvPlanTest, TheFilterFollowsTheActivationsFormat) {
  for (const char* target : {"__dnn$convForward", "__dnn$convBackwardInput", "__dnn$convBackwardFilter"}) {
    SCOPED_TRACE(target);
    std::string t = target;
    bool filter_out = t == "__dnn$convBackwardFilter", input_out = t == "__dnn$convBackwardInput";
    auto conv = [&](const char* x, const char* w, const char* y, const char* labels) {
      // Backward forms take (y, w) -> x or (x, y) -> w.
      std::string attrs = StrCat("window={size=3x3 pad=1_1x1_1}, dim_labels=", labels);
      if (input_out) return Conv(target, y, w, x, attrs);
      if (filter_out) return Conv(target, x, y, w, attrs);
      return Conv(target, x, w, y, attrs);
    };
    absl::StatusOr<DnnConvPlan> plan =
        CheckConvPlan(conv("f32[2,7,7,3]", "f32[5,3,3,3]", "f32[2,7,7,5]", "b01f_oi01->b01f"));
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->w_order, DnnFilterOrder::kStrided);
    EXPECT_EQ(plan->packed_order, DnnFilterOrder::kKRSC);
    plan = CheckConvPlan(conv("f32[2,3,7,7]", "f32[5,3,3,3]", "f32[2,5,7,7]", "bf01_o01i->bf01"));
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->w_order, DnnFilterOrder::kStrided);
    EXPECT_EQ(plan->packed_order, DnnFilterOrder::kKCRS);
  }
}

TEST(DnnConvPlanTest, StridedGroupedDilatedForward) {
  absl::StatusOr<DnnConvPlan> plan =
      CheckConvPlan(Conv("__dnn$convForward", "f32[1,6,11,10]", "f32[4,3,3,2]", "f32[1,4,5,5]",
                         "window={size=3x2 stride=2x2 pad=1_1x0_0 rhs_dilate=2x1}, dim_labels=bf01_oi01->bf01, "
                         "feature_group_count=2"));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->groups, 2);
  EXPECT_EQ(plan->dilation, (std::vector<int64_t>{2, 1}));
}

// Depthwise (8 channels, 8 groups, MobileNetV2's 3x3 stride 2) in each
// direction: cuDNN gets the group count (cudnnSetConvolutionGroupCount) and a
// filter of one input feature per group; the emulator checks the values.
TEST(DnnConvPlanTest, DepthwiseEveryDirection) {
  const char* attrs = "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8";
  const char *x = "f32[2,9,9,8]", *w = "f32[3,3,1,8]", *y = "f32[2,5,5,8]";
  for (const std::string& text : {Conv("__dnn$convForward", x, w, y, attrs), Conv("__dnn$convBackwardInput", y, w, x, attrs),
                                  Conv("__dnn$convBackwardFilter", x, y, w, attrs)}) {
    absl::StatusOr<DnnConvPlan> plan = CheckConvPlan(text);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->groups, 8);
    EXPECT_EQ(plan->w_dims, (std::vector<int64_t>{8, 1, 3, 3}));
  }
}

TEST(DnnConvPlanTest, BackwardInputAndFilterBuffers) {
  absl::StatusOr<DnnConvPlan> plan =
      CheckConvPlan(Conv("__dnn$convBackwardInput", "f32[2,4,4,5]", "f32[3,3,3,5]", "f32[2,7,7,3]",
                         "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->y_buffer, 0);
  EXPECT_EQ(plan->w_buffer, 1);
  EXPECT_EQ(plan->x_buffer, 2);
  plan = CheckConvPlan(Conv("__dnn$convBackwardFilter", "f32[2,7,7,3]", "f32[2,4,4,5]", "f32[3,3,3,5]",
                            "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->x_buffer, 0);
  EXPECT_EQ(plan->y_buffer, 1);
  EXPECT_EQ(plan->w_buffer, 2);
  // Grouped, dilated, NCHW with a non-default input layout.
  EXPECT_TRUE(CheckConvPlan(Conv("__dnn$convBackwardFilter", "f32[3,4,9,8]{1,3,2,0}", "f32[3,6,7,7]", "f32[6,2,3,2]",
                                 "window={size=3x2 rhs_dilate=2x1 pad=1_1x0_0}, dim_labels=bf01_oi01->bf01, "
                                 "feature_group_count=2"))
                  .ok());
  EXPECT_TRUE(CheckConvPlan(Conv("__dnn$convBackwardInput", "f32[3,6,7,7]", "f32[6,2,3,2]", "f32[3,4,9,8]",
                                 "window={size=3x2 rhs_dilate=2x1 pad=1_1x0_0}, dim_labels=bf01_oi01->bf01, "
                                 "feature_group_count=2"))
                  .ok());
}

TEST(DnnConvPlanTest, FusedBiasSideInputActivation) {
  absl::StatusOr<DnnConvPlan> plan = CheckConvPlan(
      Conv("__dnn$convBiasActivationForward", "f32[2,6,6,4]", "f32[3,3,4,8]", "f32[2,6,6,8]",
           "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
           "  bias = f32[8] parameter(2)\n  side = f32[2,6,6,8]{0,3,2,1} parameter(3)\n", ", bias, side",
           R"({"cudnn_conv_backend_config":{"conv_result_scale":0.5,"side_input_scale":2,"activation_mode":"kRelu"}})"));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->bias_buffer, 2);
  EXPECT_EQ(plan->side_input_buffer, 3);
  EXPECT_EQ(plan->bias, (DnnTensor{{1, 8, 1, 1}, {8, 1, 1, 1}}));
  EXPECT_EQ(plan->activation, ConvActivation::kRelu);
  EXPECT_TRUE(CheckConvPlan(Conv("__dnn$convBiasActivationForward", "f32[1,5,5,3]", "f32[1,1,3,4]", "f32[1,5,5,4]",
                                 "window={size=1x1}, dim_labels=b01f_01io->b01f", "  bias = f32[4] parameter(2)\n",
                                 ", bias", R"({"cudnn_conv_backend_config":{"activation_mode":"kTanh"}})"))
                  .ok());
}

TEST(DnnConvPlanTest, OneDimensionalGetsAUnitSpatialDimension) {
  absl::StatusOr<DnnConvPlan> plan = CheckConvPlan(Conv("__dnn$convForward", "f32[2,9,3]", "f32[3,3,4]", "f32[2,9,4]",
                                                        "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f"));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->x.dims, (std::vector<int64_t>{2, 3, 9, 1}));
  EXPECT_EQ(plan->w_dims, (std::vector<int64_t>{4, 3, 3, 1}));
  EXPECT_EQ(plan->padding, (std::vector<int64_t>{1, 0}));
}

TEST(DnnConvPlanTest, AsymmetricPaddingAndReversalAreUnimplemented) {
  Call c = Prepare(Conv("__dnn$convForward", "f32[1,6,11,10]", "f32[4,6,3,2]", "f32[1,4,5,5]",
                        "window={size=3x2 stride=2x2 pad=1_0x0_1}, dim_labels=bf01_oi01->bf01"));
  ASSERT_NE(c.inst, nullptr);
  absl::StatusOr<DnnConvPlan> plan = PlanDnnConvolution(*c.inst);
  EXPECT_TRUE(absl::IsUnimplemented(plan.status())) << plan.status();
  c = Prepare(Conv("__dnn$convForward", "f32[2,3,7,6]", "f32[3,2,3,4]", "f32[2,4,7,6]",
                   "window={size=3x2 pad=1_1x0_1 rhs_reversal=1x0}, dim_labels=bf01_01io->bf01"));
  ASSERT_NE(c.inst, nullptr);
  plan = PlanDnnConvolution(*c.inst);
  EXPECT_TRUE(absl::IsUnimplemented(plan.status())) << plan.status();
}

}  // namespace
}  // namespace passlab
