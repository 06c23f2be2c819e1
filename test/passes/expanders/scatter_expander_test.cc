#include "passes/expanders/gpu_scatter_expander.h"
#include "passes/expanders/scatter_expander.h"
#include "core/verify/hlo_verifier.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

constexpr char kAddF32[] = R"(
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::unique_ptr<ScatterExpander> All() {
  return std::make_unique<ScatterExpander>(ScatterExpander::Mode::kEliminateAllScatters);
}

TEST(ScatterExpanderTest, ExpandsRowScatterIntoLoop) {
  PassResult r = RunPass(All(), std::string(kAddF32) + R"(
ENTRY e {
  op = f32[5,3] parameter(0)
  idx = s32[4] parameter(1)
  upd = f32[4,3] parameter(2)
  ROOT s = f32[5,3] scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"dynamic-slice(", "map(", "to_apply=%add_f32", "dynamic-update-slice(", "while(",
                               "NOT:scatter("}))
      << r.text;
}

TEST(ScatterExpanderTest, OutOfBoundsUpdatesAreSkipped) {
  // Index -1 and 4 (window of 2 rows into 5 rows: valid starts 0..3) and 9
  // are out of bounds; only index 1 and 3 apply. The evaluator check in
  // RunPass compares with XLA's semantics; the constant result is checked
  // here too.
  PassResult r = RunPass(All(), std::string(kAddF32) + R"(
ENTRY e {
  op = f32[5,2] constant({{0,0},{0,0},{0,0},{0,0},{0,0}})
  idx = s32[4,1] constant({{-1},{1},{4},{3}})
  upd = f32[4,2,2] constant({{{1,1},{1,1}},{{2,2},{2,2}},{{4,4},{4,4}},{{8,8},{8,8}}})
  ROOT s = f32[5,2] scatter(op, idx, upd), update_window_dims={1,2}, inserted_window_dims={},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(*r.module, {});
  ASSERT_TRUE(out.ok()) << out.status().message();
  std::vector<double> expected = {0, 0, 2, 2, 2, 2, 8, 8, 8, 8};
  for (int64_t k = 0; k < 10; ++k) EXPECT_EQ(out->GetDouble(k), expected[k]) << "element " << k;
}

TEST(ScatterExpanderTest, GeneralDimensionNumbers) {
  // index_vector_dim in the middle, two scatter dims of the indices, the
  // window's dims interleaved in the updates, a 2-d index vector mapped
  // out of order onto the operand.
  PassResult r = RunPass(All(), std::string(kAddF32) + R"(
ENTRY e {
  op = f32[4,6,5] parameter(0)
  idx = s32[2,2,3] constant({{{1,3,0},{0,2,5}},{{2,0,1},{3,4,4}}})
  upd = f32[2,4,3] parameter(1)
  ROOT s = f32[4,6,5] scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0,2},
      scatter_dims_to_operand_dims={2,0}, index_vector_dim=1, to_apply=add_f32
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"transpose(", "while(", "NOT:scatter("})) << r.text;
}

TEST(ScatterExpanderTest, VariadicScatterAndBatchingDims) {
  PassResult r = RunPass(All(), R"(
add_pair {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = s32[] maximum(a1, b1)
  ROOT t = (f32[], s32[]) tuple(s0, s1)
}

ENTRY e {
  op0 = f32[3,4] parameter(0)
  op1 = s32[3,4] parameter(1)
  idx = s32[3,2] constant({{0,3},{2,2},{1,5}})
  u0 = f32[3,2] parameter(2)
  u1 = s32[3,2] parameter(3)
  ROOT s = (f32[3,4], s32[3,4]) scatter(op0, op1, idx, u0, u1), update_window_dims={},
      inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0},
      scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=add_pair
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"add_pair_output_0", "call(", "get-tuple-element(", "NOT:scatter("})) << r.text;
}

TEST(ScatterExpanderTest, EdgeCaseEmptyUpdatesForwardOperand) {
  PassResult r = RunPass(All(), std::string(kAddF32) + R"(
ENTRY e {
  op = f32[5] parameter(0)
  idx = s32[0,1] parameter(1)
  upd = f32[0] parameter(2)
  ROOT s = f32[5] scatter(op, idx, upd), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"NOT:scatter(", "NOT:while("})) << r.text;
}

TEST(ScatterExpanderTest, MismatchedUpdatesAreAnError) {
  auto m = ParseHloModule(std::string(kAddF32) + R"(
ENTRY e {
  op = f32[5,3] parameter(0)
  idx = s32[4] parameter(1)
  upd = f32[3,3] parameter(2)
  ROOT s = f32[5,3] scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
})", "bad.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<bool> r = ScatterExpander().Run(**m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("scatter 's'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("do not match"), std::string::npos) << r.status().message();
}

TEST(ScatterExpanderTest, SimpleModeKeepsMultiIndexScatter) {
  auto pass = std::make_unique<ScatterExpander>(ScatterExpander::Mode::kEliminateSimpleScatters);
  PassResult r = RunPass(std::move(pass), std::string(kAddF32) + R"(
ENTRY e {
  op = f32[5,3] parameter(0)
  idx = s32[2] parameter(1)
  upd = f32[2,3] parameter(2)
  ROOT s = f32[5,3] scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
})");
  EXPECT_FALSE(r.changed);
}

TEST(ScatterExpanderTest, SimpleModeExpandsSingleIndexScatter) {
  auto pass = std::make_unique<ScatterExpander>(ScatterExpander::Mode::kEliminateSimpleScatters);
  PassResult r = RunPass(std::move(pass), std::string(kAddF32) + R"(
ENTRY e {
  op = f32[5,3] parameter(0)
  idx = s32[1] constant({7})
  upd = f32[3] parameter(1)
  ROOT s = f32[5,3] scatter(op, idx, upd), update_window_dims={0}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add_f32
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[] constant(1)", "while(", "NOT:scatter("})) << r.text;
}

TEST(ScatterExpanderTest, IndeterministicModeKeepsIntegerAdd) {
  auto pass = std::make_unique<ScatterExpander>(ScatterExpander::Mode::kEliminateIndeterministicScatters);
  PassResult r = RunPass(std::move(pass), R"(
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  op = s32[5] parameter(0)
  idx = s32[3,1] parameter(1)
  upd = s32[3] parameter(2)
  ROOT s = s32[5] scatter(op, idx, upd), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_s32
})");
  EXPECT_FALSE(r.changed);
}

TEST(ScatterExpanderTest, IndeterministicModeExpandsFloatAdd) {
  auto pass = std::make_unique<ScatterExpander>(ScatterExpander::Mode::kEliminateIndeterministicScatters);
  PassResult r = RunPass(std::move(pass), std::string(kAddF32) + R"(
ENTRY e {
  op = f32[5] parameter(0)
  idx = s32[3,1] parameter(1)
  upd = f32[3] parameter(2)
  ROOT s = f32[5] scatter(op, idx, upd), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
})");
  EXPECT_TRUE(r.changed);
}

TEST(GpuScatterExpanderTest, KeepsScatterTheGpuEmitterHandles) {
  PassResult r = RunPass(std::make_unique<GpuScatterExpander>(), std::string(kAddF32) + R"(
ENTRY e {
  op = f32[5,3] parameter(0)
  idx = s32[4] parameter(1)
  upd = f32[4,3] parameter(2)
  ROOT s = f32[5,3] scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
})");
  EXPECT_FALSE(r.changed);
}

constexpr char kVariadic[] = R"(
add_pair {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = f32[] add(a1, b1)
  ROOT t = (f32[], f32[]) tuple(s0, s1)
}
ENTRY e {
  op0 = f32[5] parameter(0)
  op1 = f32[5] parameter(1)
  idx = s32[3,1] parameter(2)
  u0 = f32[3] parameter(3)
  u1 = f32[3] parameter(4)
  ROOT s = (f32[5], f32[5]) scatter(op0, op1, idx, u0, u1), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, UNIQUE to_apply=add_pair
})";

TEST(GpuScatterExpanderTest, ExpandsVariadicScatterWithNonUniqueIndices) {
  std::string hlo = kVariadic;
  hlo.replace(hlo.find("UNIQUE "), 7, "");
  PassResult r = RunPass(std::make_unique<GpuScatterExpander>(), hlo);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"while(", "NOT:scatter("})) << r.text;
}

TEST(GpuScatterExpanderTest, KeepsVariadicScatterWithUniqueIndices) {
  std::string hlo = kVariadic;
  hlo.replace(hlo.find("UNIQUE "), 7, "unique_indices=true, ");
  EXPECT_FALSE(RunPass(std::make_unique<GpuScatterExpander>(), hlo).changed);
}

TEST(GpuScatterExpanderTest, ExpandsC128Scatter) {
  PassResult r = RunPass(std::make_unique<GpuScatterExpander>(), R"(
add_c128 {
  a = c128[] parameter(0)
  b = c128[] parameter(1)
  ROOT s = c128[] add(a, b)
}
ENTRY e {
  op = c128[4] parameter(0)
  idx = s32[2,1] parameter(1)
  upd = c128[2] parameter(2)
  ROOT s = c128[4] scatter(op, idx, upd), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_c128
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"NOT:scatter("})) << r.text;
}

}  // namespace
}  // namespace passlab
