#include "passes/gpu/reduction_degenerate_dim_remover.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

TEST(ReductionDegenerateDimRemoverTest, DropsSizeOneDims) {
  PassResult r = RunPass(std::make_unique<ReductionDegenerateDimRemover>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[1,4,1,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1,4] reduce(p, z), dimensions={2,3}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[4,6]{1,0} reshape(%p)", "f32[4]{0} reduce(", "dimensions={1}",
                               "ROOT %reshape.1 = f32[1,4]{1,0} reshape("}))
      << r.text;
}

TEST(ReductionDegenerateDimRemoverTest, KeepsReduceWithoutSizeOneDims) {
  EXPECT_FALSE(RunPass(std::make_unique<ReductionDegenerateDimRemover>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add
})").changed);
}

TEST(ReductionDegenerateDimRemoverTest, EdgeCaseOnlyDegenerateReducedDimsAndVariadic) {
  // Reducing only size-1 dims leaves a reduce over no dims, which still
  // applies the (non-identity) init value.
  PassResult r = RunPass(std::make_unique<ReductionDegenerateDimRemover>(), R"(
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  ge = pred[] compare(v0, v1), direction=GE
  v = f32[] select(ge, v0, v1)
  i = s32[] select(ge, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  p = f32[3,1] parameter(0)
  q = s32[3,1] parameter(1)
  init = f32[] constant(0.5)
  k = s32[] constant(-1)
  ROOT r = (f32[3], s32[3]) reduce(p, q, init, k), dimensions={1}, to_apply=argmax
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"(f32[3]{0}, s32[3]{0}) reduce(", "dimensions={}"})) << r.text;
}

}  // namespace
}  // namespace passlab
