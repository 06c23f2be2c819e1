// DotMerger tests, ported from XLA's
// xla/hlo/transforms/simplifiers/dot_merger_test.cc (test names kept; each
// XLA test builds DotMerger(max_size_to_merge=INT64_MAX) unless noted).
// RunPass also checks that the values are the same before and after.
#include <limits>

#include "core/verify/hlo_verifier.h"
#include "passes/simplifiers/dot_merger.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

int64_t CountOpcode(const HloModule& m, HloOpcode op) {
  int64_t n = 0;
  for (HloInstruction* i : m.entry_computation()->instructions()) n += i->opcode() == op ? 1 : 0;
  return n;
}

std::unique_ptr<DotMerger> Unbounded() {
  return std::make_unique<DotMerger>(DotMergerOptions{.max_size_to_merge = std::numeric_limits<int64_t>::max()});
}

// XLA: DotMergerTest.MergeRHS. The concatenation lists the operands by
// decreasing power of two dividing n (10 and 50: both 2), then decreasing n.
TEST(DotMergerTest, MergeRHS) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs  = f32[200,100] parameter(0)
  rhs0 = f32[100, 10] parameter(1)
  rhs1 = f32[100, 50] parameter(2)
  dot0 = f32[200, 10] dot(lhs, rhs0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1 = f32[200, 50] dot(lhs, rhs1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[200,10], f32[200,50], f32[200,100]) tuple(dot0, dot1, lhs)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 1) << r.text;
  EXPECT_TRUE(Matches(r.text, {"f32[100,60]{1,0} concatenate(%rhs1, %rhs0), dimensions={1}",
                               "f32[200,60]{1,0} dot(%lhs, %concatenate)", "slice={[0:200], [50:60]}",
                               "slice={[0:200], [0:50]}", "tuple(%slice.1, %slice, %lhs)"}))
      << r.text;
}

// XLA: DotMergerTest.MergeRHSSortedByPowerOfTwo.
TEST(DotMergerTest, MergeRHSSortedByPowerOfTwo) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs  = f32[20,10] parameter(0)
  rhs0 = f32[10, 10] parameter(1)
  rhs1 = f32[10, 50] parameter(2)
  rhs2 = f32[10, 64] parameter(3)
  rhs3 = f32[10, 24] parameter(4)
  dot0 = f32[20, 10] dot(lhs, rhs0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1 = f32[20, 50] dot(lhs, rhs1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot2 = f32[20, 64] dot(lhs, rhs2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot3 = f32[20, 24] dot(lhs, rhs3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[20,10], f32[20,50], f32[20,64], f32[20,24]) tuple(dot0, dot1, dot2, dot3)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 1) << r.text;
  EXPECT_TRUE(Matches(r.text, {"concatenate(%rhs2, %rhs3, %rhs1, %rhs0), dimensions={1}"})) << r.text;
}

// XLA: DotMergerTest.MergeLHSWithRHS: the shared operand is the lhs of one
// dot and, transposed, the rhs of the other.
TEST(DotMergerTest, MergeLHSWithRHS) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  common = f32[4,32] parameter(0)
  rhs0 = f32[32,8] parameter(2)
  dot0 = f32[4,8] dot(common, rhs0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  lhs1 = f32[2,32] parameter(1)
  common_t = f32[32,4] transpose(common), dimensions={1,0}
  dot1 = f32[2,4] dot(lhs1, common_t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[4,8], f32[2,4]) tuple(dot0, dot1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 1) << r.text;
  EXPECT_TRUE(Matches(r.text, {"f32[10,4]{1,0} dot(%concatenate, %common)", "f32[8,4]{1,0} slice(%dot)",
                               "f32[4,8]{1,0} transpose(%slice)", "f32[2,4]{1,0} slice(%dot)"}))
      << r.text;
}

// XLA: DotMergerTest.MergeThree and NoMergeThreeDueToCycle.
TEST(DotMergerTest, MergeThree) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs0 = f32[10,20] parameter(0)
  lhs1 = f32[30,20] parameter(1)
  lhs2 = f32[50,20] parameter(2)
  rhs  = f32[20, 5] parameter(3)
  dot0 = f32[10, 5] dot(lhs0, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1 = f32[30, 5] dot(lhs1, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot2 = f32[50, 5] dot(lhs2, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[10,5], f32[30,5], f32[50,5]) tuple(dot0, dot1, dot2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 1) << r.text;
  EXPECT_TRUE(Matches(r.text, {"f32[90,20]{1,0} concatenate(%lhs2, %lhs1, %lhs0), dimensions={0}",
                               "f32[90,5]{1,0} dot(%concatenate, %rhs)"}))
      << r.text;
}

TEST(DotMergerTest, NoMergeThreeDueToCycle) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs0 = f32[10,20] parameter(0)
  lhs1 = f32[30,20] parameter(1)
  rhs  = f32[20, 5] parameter(2)
  dot0 = f32[10, 5] dot(lhs0, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1 = f32[30, 5] dot(lhs1, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  lhs2 = f32[50,20] pad(dot0, zero), padding=40_0x15_0
  dot2 = f32[50, 5] dot(lhs2, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[10,5], f32[30,5], f32[50,5]) tuple(dot0, dot1, dot2)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 2) << r.text;
  EXPECT_TRUE(Matches(r.text, {"concatenate(%lhs1, %lhs0)", "f32[50,5]{1,0} dot(%lhs2, %rhs)"})) << r.text;
}

// XLA: DotMergerTest.NoMergeDataDependency.
TEST(DotMergerTest, NoMergeDataDependency) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs0 = f32[10,20] parameter(0)
  rhs  = f32[20, 5] parameter(1)
  dot0 = f32[10, 5] dot(lhs0, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  lhs1 = f32[30,20] pad(dot0, zero), padding=20_0x15_0
  dot1 = f32[30, 5] dot(lhs1, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[10,5], f32[30,5]) tuple(dot0, dot1)
})");
  EXPECT_FALSE(r.changed);
}

// XLA: DotMergerTest.MergeWithMultipleNonCandidates: with this limit only
// the two smallest dots fit in one merge.
TEST(DotMergerTest, MergeWithMultipleNonCandidates) {
  const std::string hlo = R"(
ENTRY main {
  lhs0 = f32[100,200] parameter(0)
  lhs1 = f32[300,200] parameter(1)
  lhs2 = f32[500,200] parameter(2)
  rhs  = f32[200, 50] parameter(3)
  dot0 = f32[100, 50] dot(lhs0, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1 = f32[300, 50] dot(lhs1, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot2 = f32[500, 50] dot(lhs2, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[100,50], f32[300,50], f32[500,50]) tuple(dot0, dot1, dot2)
})";
  PassResult r = RunPass(std::make_unique<DotMerger>(DotMergerOptions{.max_size_to_merge = 140000}), hlo);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 2) << r.text;
  EXPECT_TRUE(Matches(r.text, {"concatenate(%lhs1, %lhs0)", "dot(%lhs2, %rhs)"})) << r.text;
}

// XLA: DotMergerTest.MergeRespectsMaxSizeThreshold: the concatenated
// operand plus result of the group must fit.
TEST(DotMergerTest, MergeRespectsMaxSizeThreshold) {
  const std::string hlo = R"(
ENTRY main {
  lhs  = f32[200,100] parameter(0)
  rhs0 = f32[100, 10] parameter(1)
  rhs1 = f32[100, 50] parameter(2)
  dot0 = f32[200, 10] dot(lhs, rhs0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1 = f32[200, 50] dot(lhs, rhs1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[200,10], f32[200,50]) tuple(dot0, dot1)
})";
  EXPECT_FALSE(RunPass(std::make_unique<DotMerger>(DotMergerOptions{.max_size_to_merge = 5000}), hlo).changed);
  EXPECT_TRUE(RunPass(std::make_unique<DotMerger>(DotMergerOptions{.max_size_to_merge = 20000}), hlo).changed);
}

// XLA: DotMergerTest.MergeMultipleContractingDims: the shared operand's
// adjacent contracting dimensions are collapsed into one.
TEST(DotMergerTest, MergeMultipleContractingDims) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs0 = f32[10,10,10] parameter(0)
  lhs1 = f32[10,10,10] parameter(1)
  rhs  = f32[10,10,10] parameter(2)
  dot0 = f32[10,10] dot(lhs0, rhs), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
  dot1 = f32[10,10] dot(lhs1, rhs), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
  ROOT tuple = (f32[10,10], f32[10,10]) tuple(dot0, dot1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kTranspose), 0) << r.text;
  EXPECT_TRUE(Matches(r.text, {"f32[100,10]{1,0} reshape(%lhs0)", "f32[100,10]{1,0} reshape(%lhs1)",
                               "f32[100,20]{1,0} concatenate(", "f32[100,10]{1,0} reshape(%rhs)",
                               "f32[20,10]{1,0} dot(%concatenate, %reshape), lhs_contracting_dims={0}, "
                               "rhs_contracting_dims={0}"}))
      << r.text;
}

// XLA: DotMergerTest.MergeWithDegenerateNonContractingDimsInSharedOperand:
// size-1 dimensions are dropped from the shared operand and put back on the
// results.
TEST(DotMergerTest, MergeWithDegenerateNonContractingDimsInSharedOperand) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs  = f32[1,100] parameter(0)
  rhs0 = f32[100, 10] parameter(1)
  rhs1 = f32[100, 50] parameter(2)
  dot0 = f32[1, 10] dot(lhs, rhs0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1 = f32[1, 50] dot(lhs, rhs1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[1,10], f32[1,50]) tuple(dot0, dot1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[100]{0} reshape(%lhs)", "concatenate(%rhs1, %rhs0)", "f32[60]{0} dot(",
                               "f32[1,10]{1,0} reshape(", "f32[1,50]{1,0} reshape("}))
      << r.text;
}

// XLA: DotMergerTest.MergeOneConcatOperandMissingNonContractingDim.
TEST(DotMergerTest, MergeOneConcatOperandMissingNonContractingDim) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs  = f32[2, 10, 5] parameter(0)
  rhs0 = f32[2, 10, 20] parameter(1)
  rhs1 = f32[2, 10] parameter(2)
  dot0 = f32[2, 5, 20] dot(lhs, rhs0), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
  dot1 = f32[2, 5] dot(lhs, rhs1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT tuple = (f32[2, 5, 20], f32[2, 5]) tuple(dot0, dot1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[2,10,1]{2,1,0} reshape(%rhs1)", "concatenate(%rhs0, %reshape)",
                               "f32[2,5,21]{2,1,0} dot(%lhs, %concatenate)", "f32[2,5]{1,0} reshape("}))
      << r.text;
}

// XLA: DotMergerTest.MergeWithMultipleConsumerChains: transposes and
// reshapes after a merged dot that cancel out disappear.
TEST(DotMergerTest, MergeWithMultipleConsumerChains) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs  = f32[20,10] parameter(0)
  rhs0 = f32[10, 10] parameter(1)
  rhs1 = f32[10, 50] parameter(2)
  dot0 = f32[20, 10] dot(lhs, rhs0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1 = f32[20, 50] dot(lhs, rhs1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot0_t = f32[10, 20] transpose(dot0), dimensions={1,0}
  dot0_t_inv = f32[20, 10] transpose(dot0_t), dimensions={1,0}
  dot0_r1 = f32[2, 10, 10] reshape(dot0)
  dot0_r2 = f32[20, 10] reshape(dot0_r1)
  ROOT tuple = (f32[20,10], f32[20,10], f32[20,50]) tuple(dot0_t_inv, dot0_r2, dot1)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kTranspose), 0) << r.text;
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kReshape), 0) << r.text;
  EXPECT_TRUE(Matches(r.text, {"tuple(%slice.1, %slice.1, %slice)"})) << r.text;
}

// XLA: DotMergerTest.MergeLHSRemovesDeadTransposes.
TEST(DotMergerTest, MergeLHSRemovesDeadTransposes) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs0 = f32[20,10] parameter(0)
  lhs0_t = f32[10,20] transpose(lhs0), dimensions={1,0}
  lhs1 = f32[20,30] parameter(1)
  lhs1_t = f32[30,20] transpose(lhs1), dimensions={1,0}
  rhs  = f32[20, 5] parameter(2)
  dot0 = f32[10, 5] dot(lhs0_t, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1 = f32[30, 5] dot(lhs1_t, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[10,5], f32[30,5]) tuple(dot0, dot1)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"NOT:%lhs0_t", "NOT:%lhs1_t", "tuple(%slice"})) << r.text;
}

// XLA: DotMergerTest.NoMergeDifferentRhsContractingDims (the shared
// operand's dimensions differ in role) and NoMergeDifferentLhsTypes.
TEST(DotMergerTest, NoMergeDifferentSharedRolesOrTypes) {
  EXPECT_FALSE(RunPass(Unbounded(), R"(
ENTRY main {
  lhs0 = f32[10,10] parameter(0)
  lhs1 = f32[10,10] parameter(1)
  rhs  = f32[10,10] parameter(2)
  dot0 = f32[10,10] dot(lhs0, rhs), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  dot1 = f32[10,10] dot(lhs1, rhs), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  ROOT tuple = (f32[10,10], f32[10,10]) tuple(dot0, dot1)
})").changed);
  EXPECT_FALSE(RunPass(Unbounded(), R"(
ENTRY main {
  lhs0 = f32[10,10] parameter(0)
  lhs1 = f16[10,10] parameter(1)
  rhs  = f32[10,10] parameter(2)
  dot0 = f32[10,10] dot(lhs0, rhs), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  dot1 = f32[10,10] dot(lhs1, rhs), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT tuple = (f32[10,10], f32[10,10]) tuple(dot0, dot1)
})").changed);
}

// XLA: DotMergerTest.MergeDifferentLhsContractingDims: only the shared
// operand's roles must agree; the other operands are brought to one form.
TEST(DotMergerTest, MergeDifferentLhsContractingDims) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs0 = f32[10,10] parameter(0)
  lhs1 = f32[10,10] parameter(1)
  rhs  = f32[10,10] parameter(2)
  dot0 = f32[10,10] dot(lhs0, rhs), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  dot1 = f32[10,10] dot(lhs1, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (f32[10,10], f32[10,10]) tuple(dot0, dot1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"transpose(%lhs1)", "concatenate(%lhs0, %transpose), dimensions={1}",
                               "f32[20,10]{1,0} dot(%concatenate, %rhs)"}))
      << r.text;
}

// XLA: DotMergerTest.NoMergeSubByteUpcast.
TEST(DotMergerTest, NoMergeSubByteUpcast) {
  EXPECT_FALSE(RunPass(Unbounded(), R"(
ENTRY main {
  lhs0_s4 = s4[20,10] parameter(0)
  lhs1_s4 = s4[20,10] parameter(1)
  lhs0    = bf16[20,10] convert(lhs0_s4)
  lhs1    = bf16[20,10] convert(lhs1_s4)
  rhs     = bf16[10,10] parameter(2)
  dot0    = bf16[20,10] dot(lhs0, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1    = bf16[20,10] dot(lhs1, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (bf16[20,10], bf16[20,10]) tuple(dot0, dot1)
})").changed);
}

// XLA: DotMergerTest.MergeRHSPreservesMetadata: the merged dot takes the
// metadata of the first dot of the group that has an op name.
TEST(DotMergerTest, MergeRHSPreservesMetadata) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  lhs  = f32[20,10] parameter(0)
  rhs0 = f32[10, 10] parameter(1)
  rhs1 = f32[10, 50] parameter(2)
  dot0 = f32[20, 10] dot(lhs, rhs0), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="op1"}
  dot1 = f32[20, 50] dot(lhs, rhs1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="op2"}
  ROOT tuple = (f32[20,10], f32[20,50]) tuple(dot0, dot1)
})");
  ASSERT_TRUE(r.changed);
  for (HloInstruction* inst : r.module->entry_computation()->instructions()) {
    if (inst->opcode() == HloOpcode::kDot) EXPECT_EQ(inst->metadata().op_name, "op2");
  }
}

// XLA: DotMergerTest.MergeComplexShapesAndEvaluate: batch, contracting and
// free dimensions spread over transposes and reshapes of one source; RunPass
// compares the values.
TEST(DotMergerTest, MergeComplexShapesAndEvaluate) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY main {
  shared_param = f32[4,5,10,20,6,7] parameter(0)
  param_lhs_0 = f32[32,4,5,20,10] parameter(1)
  shared_transpose_0 = f32[4,5,20,10,6,7] transpose(shared_param), dimensions={0,1,3,2,4,5}
  shared_reshape_0 = f32[4,5,20,10,3,14] reshape(shared_transpose_0)
  dot_0 = f32[4,5,32,3,14] dot(param_lhs_0, shared_reshape_0), lhs_batch_dims={1,2}, rhs_batch_dims={0,1}, lhs_contracting_dims={3,4}, rhs_contracting_dims={2,3}
  param_rhs_1 = f32[10,2,5,4,3,20] parameter(2)
  shared_transpose_1 = f32[4,5,10,20,7,6] transpose(shared_param), dimensions={0,1,2,3,5,4}
  dot_1 = f32[5,4,7,6,2,3] dot(shared_transpose_1, param_rhs_1), lhs_batch_dims={1,0}, rhs_batch_dims={2,3}, lhs_contracting_dims={2,3}, rhs_contracting_dims={0,5}
  dot_1_reshape = f32[5,2,2,14,18] reshape(dot_1)
  dot_1_transpose = f32[5,2,18,2,14] transpose(dot_1_reshape), dimensions={0,2,4,1,3}
  ROOT res = (f32[4,5,32,3,14], f32[5,2,18,2,14]) tuple(dot_0, dot_1_transpose)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 1) << r.text;
}

// passlab: a dot merged in one class is not merged again in another, and
// dots of another element type stay apart.
TEST(DotMergerTest, MergesOnlyMatchingTypesAndEachDotOnce) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY e {
  x = f32[4,4] parameter(0)
  w0 = f32[4,3] parameter(1)
  w1 = f32[3,4] parameter(2)
  w2 = bf16[4,3] parameter(3)
  d0 = f32[4,3] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[4,3] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  d2 = f32[4,3] dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[4,3], f32[4,3], f32[4,3]) tuple(d0, d1, d2)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 2) << r.text;
  EXPECT_TRUE(Matches(r.text, {"dot(%x, %w2)"})) << r.text;
}

// passlab edge case: a dot at the root, vector operands.
TEST(DotMergerTest, EdgeCaseVectorSharedOperand) {
  PassResult r = RunPass(Unbounded(), R"(
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[2,5] parameter(1)
  v = f32[5] parameter(2)
  d0 = f32[3] dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[2] dot(b, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = f32[2] negate(d1)
  ROOT t = (f32[3], f32[2]) tuple(d0, n)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[5,5]{1,0} concatenate(%b, %a), dimensions={0}", "f32[5]{0} dot("})) << r.text;
}

}  // namespace
}  // namespace passlab
