#include "passes/simplifiers/dot_dimension_sorter.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

TEST(DotDimensionSorterTest, SortsConsecutiveUnsortedLhs) {
  PassResult r = RunPass(std::make_unique<DotDimensionSorter>(), R"(
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[4,5,3] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,2}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // The pairs (2,0) and (1,2) stay paired.
  EXPECT_TRUE(Matches(r.text, {"lhs_contracting_dims={1,2}", "rhs_contracting_dims={2,0}"})) << r.text;
}

TEST(DotDimensionSorterTest, SortsByLayoutNotByDimensionNumber) {
  // In memory (major to minor) a is [1][2][0]: dims 1 and 2 are consecutive
  // and {1,2} is already memory order; b's {2,1} is the other way round in
  // its default layout, and b's side is consecutive too: lhs is sorted, so
  // nothing may change.
  EXPECT_FALSE(RunPass(std::make_unique<DotDimensionSorter>(), R"(
ENTRY e {
  a = f32[2,3,4]{0,2,1} parameter(0)
  b = f32[5,4,3] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={2,1}
})").changed);
  // With layout {1,2,0}, a's {1,2} runs against memory order, and so does
  // b's {2,1}: both sides are consecutive and unsorted; sorting the lhs into
  // memory order sorts b's side too.
  PassResult r = RunPass(std::make_unique<DotDimensionSorter>(), R"(
ENTRY e {
  a = f32[2,3,4]{1,2,0} parameter(0)
  b = f32[5,4,3] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={2,1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"lhs_contracting_dims={2,1}", "rhs_contracting_dims={1,2}"})) << r.text;
}

TEST(DotDimensionSorterTest, EdgeCaseSortsRhsWhenLhsIsNotConsecutive) {
  PassResult r = RunPass(std::make_unique<DotDimensionSorter>(), R"(
ENTRY e {
  a = f32[3,2,4] parameter(0)
  b = f32[5,4,3] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={0,2}, rhs_contracting_dims={2,1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"lhs_contracting_dims={2,0}", "rhs_contracting_dims={1,2}"})) << r.text;
}

TEST(DotDimensionSorterTest, LeavesSortedAndSingleContractingDims) {
  EXPECT_FALSE(RunPass(std::make_unique<DotDimensionSorter>(), R"(
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[3,4,5] parameter(1)
  d = f32[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
  x = f32[2,3] parameter(2)
  y = f32[3,5] parameter(3)
  m = f32[2,5] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[2,5] add(d, m)
})").changed);
}

TEST(DotDimensionSorterTest, CorpusDotsComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" dot(", [] { return std::make_unique<DotDimensionSorter>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  // The corpus's multi-contracting dots are bf16 or large: they are checked
  // for verification here, for values in the hand-written tests above.
  EXPECT_GT(stats.changed, 0);
}

}  // namespace
}  // namespace passlab
