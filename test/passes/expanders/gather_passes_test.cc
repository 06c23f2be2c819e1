#include "core/verify/hlo_verifier.h"
#include "passes/expanders/gather_expander.h"
#include "passes/simplifiers/gather_simplifier.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

// Embedding lookup: rows of a table by a [2,3] index array.
constexpr char kRowGather[] = R"(
ENTRY e {
  table = f32[7,4] parameter(0)
  idx = s32[2,3] parameter(1)
  ROOT g = f32[2,3,4] gather(table, idx), offset_dims={2}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=2, slice_sizes={1,4}
})";

// Index vectors in the middle of the indices, mapped out of order onto a
// rank-3 operand; offset dims interleaved with batch dims in the output.
constexpr char kGeneralGather[] = R"(
ENTRY e {
  op = f32[5,6,4] parameter(0)
  idx = s32[3,2,2] constant({{{1,4},{0,0}},{{3,2},{5,9}},{{-2,1},{2,3}}})
  ROOT g = f32[3,2,2,2] gather(op, idx), offset_dims={1,3}, collapsed_slice_dims={1},
      start_index_map={1,0}, index_vector_dim=1, slice_sizes={2,1,2}
})";

// As XLA's gather_simplifier.cc: the implicit index vector dimension gets a
// trailing 1 ([2,3] -> [2,3,1]), the batch dimensions collapse ([6,1]); the
// canonical gather keeps start_index_map; the collapsed dimension is
// reshaped away and the batch dimension split again.
TEST(GatherSimplifierTest, CanonicalizesRowGather) {
  PassResult r = RunPass(std::make_unique<GatherSimplifier>(), kRowGather);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[2,3,1]{2,1,0} reshape(%idx)", "s32[6,1]{1,0} reshape(",
                               "f32[6,1,4]{2,1,0} gather(", "offset_dims={1,2}", "collapsed_slice_dims={}",
                               "start_index_map={0}", "index_vector_dim=1", "slice_sizes={1,4}",
                               "f32[6,4]{1,0} reshape(", "ROOT %reshape", "f32[2,3,4]{2,1,0} reshape("}))
      << r.text;
  for (HloInstruction* inst : r.module->entry_computation()->instructions()) {
    if (inst->opcode() == HloOpcode::kGather) {
      EXPECT_TRUE(GatherSimplifier::IsSimplifiedGather(*inst));
    }
  }
}

// XLA leaves start_index_map (here {1,0}) as it is and transposes only the
// index vector dimension of the indices to the end.
TEST(GatherSimplifierTest, GeneralDimensionNumbersAndClampedIndices) {
  // Index (5,9) and (-2,1) are out of bounds: gather clamps them; RunPass
  // compares against the evaluator's gather.
  PassResult r = RunPass(std::make_unique<GatherSimplifier>(), kGeneralGather);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[3,2,2]{2,1,0} transpose(%idx), dimensions={0,2,1}", "start_index_map={1,0}",
                               "NOT:transpose(%op"}))
      << r.text;
}

// XLA's gather_simplifier_test.cc, RewritesScalarOperandGatherToBroadcast.
TEST(GatherSimplifierTest, ScalarOperandBecomesBroadcast) {
  PassResult r = RunPass(std::make_unique<GatherSimplifier>(), R"(
ENTRY e {
  operand = f32[] parameter(0)
  indices = s32[7,0] parameter(1)
  ROOT gather = f32[7] gather(operand, indices), offset_dims={}, collapsed_slice_dims={},
      start_index_map={}, index_vector_dim=1, slice_sizes={}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %broadcast = f32[7]{0} broadcast(%operand), dimensions={}", "NOT:gather("}))
      << r.text;
}

TEST(GatherSimplifierTest, LeavesCanonicalGather) {
  EXPECT_FALSE(RunPass(std::make_unique<GatherSimplifier>(), R"(
ENTRY e {
  op = f32[7,4] parameter(0)
  idx = s32[5,2] parameter(1)
  ROOT g = f32[5,2,3] gather(op, idx), offset_dims={1,2}, collapsed_slice_dims={},
      start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}
})").changed);
}

TEST(GatherSimplifierTest, EdgeCaseZeroSliceBecomesBroadcast) {
  PassResult r = RunPass(std::make_unique<GatherSimplifier>(), R"(
ENTRY e {
  op = f32[7,4] parameter(0)
  idx = s32[3] parameter(1)
  ROOT g = f32[3,0] gather(op, idx), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %broadcast = f32[3,0]", "NOT:gather("})) << r.text;
}

TEST(GatherSimplifierTest, ScalarIndexGather) {
  // One index vector, given as a rank-1 array with index_vector_dim=0: the
  // output has no batch dimension.
  PassResult r = RunPass(std::make_unique<GatherSimplifier>(), R"(
ENTRY e {
  op = f32[7,4] parameter(0)
  idx = s32[2] parameter(1)
  ROOT g = f32[3] gather(op, idx), offset_dims={0}, collapsed_slice_dims={0},
      start_index_map={1,0}, index_vector_dim=0, slice_sizes={1,3}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
}

TEST(GatherSimplifierTest, BadShapeIsAnError) {
  auto m = ParseHloModule(R"(
ENTRY e {
  op = f32[7,4] parameter(0)
  idx = s32[2,3] parameter(1)
  ROOT g = f32[2,3,5] gather(op, idx), offset_dims={2}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=2, slice_sizes={1,4}
})", "bad.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<bool> r = GatherSimplifier().Run(**m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gather 'g'"), std::string::npos) << r.status().message();
}

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
