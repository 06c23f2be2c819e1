#include "passes/expanders/gather_expander.h"

#include "test/passes/checked_pass_util.h"
#include "test/passes/gather_test_modules.h"

namespace passlab {
namespace {

using gather_test::kGeneralGather;
using gather_test::kRowGather;

TEST(GatherExpanderTest, ExpandsIntoLoop) {
  PassResult r = RunPass(std::make_unique<GatherExpander>(), kRowGather);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"dynamic-slice(", "dynamic-update-slice(", "while(", "NOT:gather("})) << r.text;
}

TEST(GatherExpanderTest, GeneralDimensionNumbersAndClampedIndices) {
  PassResult r = RunPass(std::make_unique<GatherExpander>(), kGeneralGather);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"while(", "NOT:gather("})) << r.text;
  // Check one clamped window by value too: batch (1,1) has index vector
  // idx[1,:,1] = (2,9), naming operand dims 1 then 0; dim 0 clamps 9 -> 3,
  // so output [1,:,1,:] reads op[3:5, 2, 0:2].
  std::vector<Literal> args;
  Literal op(Shape(PrimitiveType::kF32, {5, 6, 4}));
  for (int64_t k = 0; k < op.element_count(); ++k) op.SetDouble(k, static_cast<double>(k));
  args.push_back(std::move(op));
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(*r.module, args);
  ASSERT_TRUE(out.ok()) << out.status().message();
  // out[1, a, 1, c] = op[3 + a, 2, c] = (3 + a) * 24 + 2 * 4 + c.
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t c = 0; c < 2; ++c) {
      int64_t linear = ((1 * 2 + a) * 2 + 1) * 2 + c;
      EXPECT_EQ(out->GetDouble(linear), (3 + a) * 24 + 8 + c) << a << "," << c;
    }
  }
}

// XLA's gather_expander_test.cc, AvoidDegenerateDims: scalar indices stay
// rank 1 ([2], not [2,1]) and the accumulator has no collapsed dimension:
// the loop state is (s32[], s32[3,3], s32[2], s32[2,3]); the loop body
// reads index i with a dynamic-slice of the indices and writes row i.
TEST(GatherExpanderTest, LoopStateHasNoDegenerateDims) {
  PassResult r = RunPass(std::make_unique<GatherExpander>(), R"(
ENTRY main {
  operand = s32[3,3] parameter(0)
  indices = s32[2] parameter(1)
  ROOT gather = s32[3,2] gather(operand, indices), offset_dims={0}, collapsed_slice_dims={1},
      start_index_map={1}, index_vector_dim=1, slice_sizes={3, 1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[1]{0} dynamic-slice(", "s32[3,1]{1,0} dynamic-slice(",
                               "s32[2,3]{1,0} dynamic-update-slice(",
                               "(s32[], s32[3,3]{1,0}, s32[2]{0}, s32[2,3]{1,0}) while(", "s32[3,2]{1,0} transpose("}))
      << r.text;
}

// XLA's GatherToLoopWithBatchDimsAndCollapsedDims: the operand start of a
// batching dimension is the iteration's coordinate along the matching
// indices dimension: i mod 7 for the minor one, i / 7 / 2 for the major.
TEST(GatherExpanderTest, BatchingDimensionCoordinatesFromTheIteration) {
  PassResult r = RunPass(std::make_unique<GatherExpander>(), R"(
ENTRY main {
  operand = s32[7,3,4,5] parameter(0)
  indices = s32[5,2,7] parameter(1)
  ROOT gather = s32[5,3,2,7] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={2},
      start_index_map={2}, index_vector_dim=3, operand_batching_dims={0,3}, start_indices_batching_dims={2,0},
      slice_sizes={1,3,1,1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[] constant(7)", "s32[] remainder(", "s32[] divide(", "s32[] constant(2)",
                               "s32[4]{0} concatenate(", "s32[1,3,1,1]{3,2,1,0} dynamic-slice(",
                               "s32[70]{0} reshape(%indices)"}))
      << r.text;
}

TEST(GatherExpanderTest, BatchingDimensions) {
  PassResult r = RunPass(std::make_unique<GatherExpander>(), R"(
ENTRY e {
  op = f32[3,5,2] parameter(0)
  idx = s32[3,4,1] constant({{{0},{4},{2},{1}},{{3},{3},{0},{7}},{{1},{2},{3},{4}}})
  ROOT g = f32[3,4,2] gather(op, idx), offset_dims={2}, collapsed_slice_dims={1},
      operand_batching_dims={0}, start_indices_batching_dims={0},
      start_index_map={1}, index_vector_dim=2, slice_sizes={1,1,2}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
}

TEST(GatherExpanderTest, SimpleModeKeepsMultiIndexGather) {
  auto pass = std::make_unique<GatherExpander>(GatherExpander::Mode::kEliminateSimpleGathers);
  EXPECT_FALSE(RunPass(std::move(pass), kRowGather).changed);
}

// XLA's gather_expander.cc has no loop-free path for one index vector: it
// builds a while loop of one trip (later passes simplify it).
TEST(GatherExpanderTest, SimpleModeSingleIndexIsOneTripLoop) {
  auto pass = std::make_unique<GatherExpander>(GatherExpander::Mode::kEliminateSimpleGathers);
  PassResult r = RunPass(std::move(pass), R"(
ENTRY e {
  op = f32[7,4] parameter(0)
  idx = s32[1,2] constant({{9,-1}})
  ROOT g = f32[1,3] gather(op, idx), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,3}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[1,3]{1,0} dynamic-slice(", "while(", "NOT:gather("})) << r.text;
}

TEST(GatherExpanderTest, SimpleModeWholeOperandIsBroadcast) {
  auto pass = std::make_unique<GatherExpander>(GatherExpander::Mode::kEliminateSimpleGathers);
  PassResult r = RunPass(std::move(pass), R"(
ENTRY e {
  op = f32[3,4] parameter(0)
  idx = s32[5,1] parameter(1)
  ROOT g = f32[3,5,4] gather(op, idx), offset_dims={0,2}, collapsed_slice_dims={},
      start_index_map={1}, index_vector_dim=1, slice_sizes={3,4}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // As XLA: the operand reshaped without its collapsed dimensions (none).
  EXPECT_TRUE(Matches(r.text, {"f32[3,4]{1,0} reshape(%op)", "broadcast(%reshape), dimensions={0,2}", "NOT:while(",
                               "NOT:gather("}))
      << r.text;
}

TEST(GatherExpanderTest, LeavesZeroElementGather) {
  EXPECT_FALSE(RunPass(std::make_unique<GatherExpander>(), R"(
ENTRY e {
  op = f32[7,4] parameter(0)
  idx = s32[0,1] parameter(1)
  ROOT g = f32[0,4] gather(op, idx), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})").changed);
}

}  // namespace
}  // namespace passlab
