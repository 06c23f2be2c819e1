#include "passes/gpu/reduction_dimension_grouper.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

TEST(ReductionDimensionGrouperTest, GroupsAdjacentReducedDims) {
  PassResult r = RunPass(std::make_unique<ReductionDimensionGrouper>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[2,3,4,5,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,5] reduce(p, z), dimensions={1,2,4}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[2,12,5,6]{3,2,1,0} reshape(%p)", "ROOT %r", "f32[2,5]{1,0} reduce(",
                               "dimensions={1,3}"}))
      << r.text;
}

TEST(ReductionDimensionGrouperTest, KeepsSeparatedReducedDims) {
  EXPECT_FALSE(RunPass(std::make_unique<ReductionDimensionGrouper>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(p, z), dimensions={0,2}, to_apply=add
})").changed);
}

TEST(ReductionDimensionGrouperTest, EdgeCaseNonDefaultLayoutIsLeftToTheNormalizer) {
  EXPECT_FALSE(RunPass(std::make_unique<ReductionDimensionGrouper>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[2,3,4]{0,1,2} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(p, z), dimensions={1,2}, to_apply=add
})").changed);
}

}  // namespace
}  // namespace passlab
