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

TEST(DotMergerTest, MergesDotsSharingLhs) {
  PassResult r = RunPass(std::make_unique<DotMerger>(), R"(
ENTRY e {
  x = f32[8,6] parameter(0)
  w0 = f32[6,3] parameter(1)
  w1 = f32[6,5] parameter(2)
  d0 = f32[8,3] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[8,5] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[8,3], f32[8,5]) tuple(d0, d1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[6,8]{1,0} concatenate(%w0, %w1), dimensions={1}", "f32[8,8]{1,0} dot(%x, ",
                               "f32[8,3]{1,0} slice(", "slice={[0:8], [0:3]}", "f32[8,5]{1,0} slice(",
                               "slice={[0:8], [3:8]}"}))
      << r.text;
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 1);
}

TEST(DotMergerTest, MergesBatchedDotsSharingRhsAndChainsThree) {
  PassResult r = RunPass(std::make_unique<DotMerger>(), R"(
ENTRY e {
  a0 = f32[2,3,4] parameter(0)
  a1 = f32[2,5,4] parameter(1)
  a2 = f32[2,1,4] parameter(2)
  w = f32[2,4,7] parameter(3)
  d0 = f32[2,3,7] dot(a0, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  d1 = f32[2,5,7] dot(a1, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  d2 = f32[2,1,7] dot(a2, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT t = (f32[2,3,7], f32[2,5,7], f32[2,1,7]) tuple(d0, d1, d2)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 1) << r.text;
  EXPECT_TRUE(Matches(r.text, {"f32[2,9,7]{2,1,0} dot("})) << r.text;
}

TEST(DotMergerTest, ManyDotsGiveOneFlatConcatAndDirectSlices) {
  PassResult r = RunPass(std::make_unique<DotMerger>(), R"(
ENTRY e {
  x = f32[8,6] parameter(0)
  w0 = f32[6,1] parameter(1)
  w1 = f32[6,2] parameter(2)
  w2 = f32[6,3] parameter(3)
  w3 = f32[6,4] parameter(4)
  d0 = f32[8,1] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[8,2] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[8,3] dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[8,4] dot(x, w3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[8,1], f32[8,2], f32[8,3], f32[8,4]) tuple(d0, d1, d2, d3)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 1) << r.text;
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kConcatenate), 1) << r.text;
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kSlice), 4) << r.text;
  EXPECT_TRUE(Matches(r.text, {"f32[6,10]{1,0} concatenate(%w0, %w1, %w2, %w3), dimensions={1}",
                               "slice={[0:8], [0:1]}", "slice={[0:8], [1:3]}", "slice={[0:8], [3:6]}",
                               "slice={[0:8], [6:10]}"}))
      << r.text;
}

TEST(DotMergerTest, MergesSharedOperandOnDifferentSides) {
  // a = x . wa, b = wb . x^T  =>  one dot x . concat(wa, wb^T).
  PassResult r = RunPass(std::make_unique<DotMerger>(), R"(
ENTRY e {
  x = f32[8,6] parameter(0)
  wa = f32[6,3] parameter(1)
  wb = f32[5,6] parameter(2)
  xt = f32[6,8] transpose(x), dimensions={1,0}
  a = f32[8,3] dot(x, wa), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[5,8] dot(wb, xt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[8,3], f32[5,8]) tuple(a, b)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 1) << r.text;
  EXPECT_TRUE(Matches(r.text, {"f32[6,5]{1,0} transpose(%wb)", "f32[6,8]{1,0} concatenate(%wa, ",
                               "f32[8,8]{1,0} dot(%x, ", "f32[8,5]{1,0} slice(", "f32[5,8]{1,0} transpose("}))
      << r.text;
}

TEST(DotMergerTest, MergesSharedOperandOnDifferentSidesEitherOrder) {
  // The rhs user comes first, and the lhs is the transposed one.
  PassResult r = RunPass(std::make_unique<DotMerger>(), R"(
ENTRY e {
  z = f32[6,8] parameter(0)
  wa = f32[6,3] parameter(1)
  wb = f32[5,6] parameter(2)
  b = f32[5,8] dot(wb, z), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[8,6] transpose(z), dimensions={1,0}
  a = f32[8,3] dot(y, wa), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[5,8], f32[8,3]) tuple(b, a)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountOpcode(*r.module, HloOpcode::kDot), 1) << r.text;
}

TEST(DotMergerTest, KeepsDependentDots) {
  // d1 reads d0: merging would make the dot depend on itself.
  PassResult r = RunPass(std::make_unique<DotMerger>(), R"(
ENTRY e {
  x = f32[4,4] parameter(0)
  w = f32[4,4] parameter(1)
  d0 = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[4,4] dot(x, d0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[4,4], f32[4,4]) tuple(d0, d1)
})");
  EXPECT_FALSE(r.changed);
}

constexpr char kPair[] = R"(
ENTRY e {
  x = f32[16,16] parameter(0)
  w0 = f32[16,16] parameter(1)
  w1 = f32[16,16] parameter(2)
  d0 = f32[16,16] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[16,16] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT a = f32[16,16] add(d0, d1)
})";

TEST(DotMergerTest, ByteThresholdGuardsBigDots) {
  // Each dot touches 3 * 16*16*4 = 3072 bytes.
  EXPECT_FALSE(RunPass(std::make_unique<DotMerger>(DotMergerOptions{.max_size_to_merge = 3071}), kPair).changed);
  EXPECT_TRUE(RunPass(std::make_unique<DotMerger>(DotMergerOptions{.max_size_to_merge = 3072}), kPair).changed);
}

TEST(DotMergerTest, KeepsDotsWithDifferentDimensionNumbersOrTypes) {
  EXPECT_FALSE(RunPass(std::make_unique<DotMerger>(), R"(
ENTRY e {
  x = f32[4,4] parameter(0)
  w0 = f32[4,3] parameter(1)
  w1 = f32[3,4] parameter(2)
  w2 = bf16[4,3] parameter(3)
  d0 = f32[4,3] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[4,3] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  d2 = f32[4,3] dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[4,3], f32[4,3], f32[4,3]) tuple(d0, d1, d2)
})").changed);
}

TEST(DotMergerTest, EdgeCaseRootDotAndVectorOperands) {
  // The shared rhs is a vector; the differing lhs operands have one free
  // dimension each; results feed a tuple root through different users.
  PassResult r = RunPass(std::make_unique<DotMerger>(), R"(
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
  EXPECT_TRUE(Matches(r.text, {"f32[5,5]{1,0} concatenate(%a, %b), dimensions={0}", "f32[5]{0} dot("})) << r.text;
}

}  // namespace
}  // namespace passlab
