#include "passes/simplifiers/slice_sinker.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

TEST(SliceSinkerTest, SinksSlicesCoveringTheSources) {
  PassResult r = RunPass(std::make_unique<SliceSinker>(), R"(
ENTRY e {
  a = f32[8,4] parameter(0)
  b = f32[8,4] parameter(1)
  a0 = f32[3,4] slice(a), slice={[0:3], [0:4]}
  b0 = f32[3,4] slice(b), slice={[0:3], [0:4]}
  a1 = f32[5,4] slice(a), slice={[3:8], [0:4]}
  b1 = f32[5,4] slice(b), slice={[3:8], [0:4]}
  m0 = f32[3,4] multiply(a0, b0)
  m1 = f32[5,4] multiply(a1, b1)
  ROOT t = (f32[3,4], f32[5,4]) tuple(m0, m1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[8,4]{1,0} multiply(%a, %b)", "slice(", "slice={[0:3], [0:4]}", "slice(",
                               "slice={[3:8], [0:4]}", "NOT:f32[3,4]{1,0} multiply("}))
      << r.text;
}

TEST(SliceSinkerTest, EdgeCaseOverlappingSlicesAndConvert) {
  // Overlapping slices cover more than the source; the convert's result type
  // carries over to the sunk op.
  PassResult r = RunPass(std::make_unique<SliceSinker>(), R"(
ENTRY e {
  a = f32[6] parameter(0)
  s0 = f32[4] slice(a), slice={[0:4]}
  s1 = f32[4] slice(a), slice={[2:6]}
  c0 = s32[4] convert(s0)
  c1 = s32[4] convert(s1)
  ROOT t = (s32[4], s32[4]) tuple(c0, c1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[6]{0} convert(%a)", "s32[4]{0} slice(", "s32[4]{0} slice("})) << r.text;
}

TEST(SliceSinkerTest, LeavesSlicesThatDoNotCoverTheSource) {
  EXPECT_FALSE(RunPass(std::make_unique<SliceSinker>(), R"(
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  a0 = f32[3] slice(a), slice={[0:3]}
  b0 = f32[3] slice(b), slice={[0:3]}
  ROOT m = f32[3] add(a0, b0)
})").changed);
}

TEST(SliceSinkerTest, LeavesOpsReadingDifferentSlices) {
  // The add reads two different slices: no op on whole sources equals it.
  EXPECT_FALSE(RunPass(std::make_unique<SliceSinker>(), R"(
ENTRY e {
  a = f32[8] parameter(0)
  lo = f32[4] slice(a), slice={[0:4]}
  hi = f32[4] slice(a), slice={[4:8]}
  ROOT m = f32[4] add(lo, hi)
})").changed);
}

TEST(SliceSinkerTest, CorpusSlicesComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" slice(", [] { return std::make_unique<SliceSinker>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(stats.changed, 0);
}

}  // namespace
}  // namespace passlab
