#include "passes/simplifiers/gather_simplifier.h"

#include "test/passes/checked_pass_util.h"
#include "test/passes/gather_test_modules.h"

namespace passlab {
namespace {

using gather_test::kGeneralGather;
using gather_test::kRowGather;

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

}  // namespace
}  // namespace passlab
