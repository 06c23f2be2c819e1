#include "passes/gpu/reduction_splitter.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

TEST(ReductionSplitterTest, SplitsOffLargestReducedDim) {
  PassResult r = RunPass(std::make_unique<ReductionSplitter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[6,3,200,4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3,4] reduce(p, z), dimensions={0,2}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[6,3,4]{2,1,0} reduce(%p, %z), dimensions={2}", "ROOT %", "s32[3,4]{1,0} reduce(",
                               "dimensions={0}"}))
      << r.text;
}

// XLA's reduction_splitter_test.cc, DontSplitReductionWithSmallDimensions:
// with ignore_small_dims (XLA:GPU's setting) a largest reduced dimension of
// 8 or fewer elements is not split; without it, it is.
TEST(ReductionSplitterTest, SmallDimsSplitOnlyWithoutIgnoreSmallDims) {
  const std::string hlo = std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[16,8,1024,8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16,1024] reduce(p, z), dimensions={3,1}, to_apply=add
})";
  EXPECT_FALSE(RunPass(std::make_unique<ReductionSplitter>(), hlo).changed);
  PassResult r = RunPass(std::make_unique<ReductionSplitter>(ReductionSplitterOptions{.ignore_small_dims = false}), hlo);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // Equal sizes: the first reduced dimension listed (3) goes first.
  EXPECT_TRUE(Matches(r.text, {"f32[16,8,1024]{2,1,0} reduce(%p, %z), dimensions={3}", "dimensions={1}"})) << r.text;
}

TEST(ReductionSplitterTest, KeepsSmallOrContiguousReductions) {
  // Largest reduced dim of 8 elements.
  EXPECT_FALSE(RunPass(std::make_unique<ReductionSplitter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[6,3,8,4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3,4] reduce(p, z), dimensions={0,2}, to_apply=add
})").changed);
  // A row reduction ([R, K, R]) is contiguous enough for the emitter.
  EXPECT_FALSE(RunPass(std::make_unique<ReductionSplitter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[200,3,200] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3] reduce(p, z), dimensions={0,2}, to_apply=add
})").changed);
}

TEST(ReductionSplitterTest, EdgeCaseSizeOneDimsCount) {
  // As XLA's IsReductionFromOrToContiguousDimensions, a size-1 dimension
  // between the reduced ones separates them (ReductionDegenerateDimRemover
  // runs first in XLA:GPU's pipeline and removes it): split, 300 first.
  PassResult r = RunPass(std::make_unique<ReductionSplitter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[3,200,1,300] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3,1] reduce(p, z), dimensions={1,3}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[3,200,1]{2,1,0} reduce(%p, %z), dimensions={3}", "dimensions={1}"})) << r.text;
}

}  // namespace
}  // namespace passlab
