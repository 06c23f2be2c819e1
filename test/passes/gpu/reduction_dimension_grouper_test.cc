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
  EXPECT_TRUE(Matches(r.text, {"f32[2,12,5,6]{3,2,1,0} bitcast(%p)", "ROOT %", "f32[2,5]{1,0} reduce(",
                               "dimensions={1,3}"}))
      << r.text;
}

// XLA's reduction_dimension_grouper_test.cc, ReductionWithGroupingVariadic:
// every input is bitcast; the reduce keeps its own result shape.
TEST(ReductionDimensionGrouperTest, GroupsVariadicInputs) {
  PassResult r = RunPass(std::make_unique<ReductionDimensionGrouper>(), R"(
argmax {
  running_max = f32[] parameter(0)
  running_max_idx = u32[] parameter(1)
  current_value = f32[] parameter(2)
  current_value_idx = u32[] parameter(3)
  cmp_code = pred[] compare(current_value, running_max), direction=GT
  new_max = f32[] select(cmp_code, current_value, running_max)
  new_idx = u32[] select(cmp_code, current_value_idx, running_max_idx)
  ROOT out = (f32[], u32[]) tuple(new_max, new_idx)
}

ENTRY main {
  input = f32[100,10,32,3]{3,2,1,0} parameter(0)
  idxs = u32[100,10,32,3]{3,2,1,0} parameter(1)
  zero = f32[] constant(0)
  zero_idx = u32[] constant(0)
  ROOT out = (f32[100,10]{1,0}, u32[100,10]{1,0}) reduce(input, idxs, zero, zero_idx), dimensions={2,3}, to_apply=argmax
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[100,10,96]{2,1,0} bitcast(%input)", "u32[100,10,96]{2,1,0} bitcast(%idxs)",
                               "(f32[100,10]{1,0}, u32[100,10]{1,0}) reduce(", "dimensions={2}"}))
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
