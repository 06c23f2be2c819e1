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
  EXPECT_TRUE(Matches(r.text, {"s32[6,3,4]{2,1,0} reduce(%p, %z), dimensions={2}", "ROOT %reduce.1 = s32[3,4]{1,0} reduce(",
                               "dimensions={0}"}))
      << r.text;
}

TEST(ReductionSplitterTest, KeepsSmallOrContiguousReductions) {
  // Largest reduced dim below 128.
  EXPECT_FALSE(RunPass(std::make_unique<ReductionSplitter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[6,3,100,4] parameter(0)
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

TEST(ReductionSplitterTest, EdgeCaseSizeOneDimsDoNotCount) {
  // The size-1 dim between the reduced dims does not separate them: this
  // is a row reduction, no split.
  EXPECT_FALSE(RunPass(std::make_unique<ReductionSplitter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[3,200,1,300] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3,1] reduce(p, z), dimensions={1,3}, to_apply=add
})").changed);
}

}  // namespace
}  // namespace passlab
