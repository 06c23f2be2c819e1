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
  EXPECT_TRUE(Matches(r.text, {"f32[4,6]{1,0} bitcast(%p)", "f32[4]{0} reduce(", "dimensions={1}", "ROOT %",
                               "f32[1,4]{1,0} bitcast("}))
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

// XLA's reduction_degenerate_dim_remover_test.cc,
// DegenerateWithEmptyDimension: when only size-1 dimensions are reduced the
// reduce becomes a bitcast of its input (XLA does not apply the init value,
// an identity here).
TEST(ReductionDegenerateDimRemoverTest, EdgeCaseOnlyDegenerateReducedDimsBecomeBitcast) {
  PassResult r = RunPass(std::make_unique<ReductionDegenerateDimRemover>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  input = f32[1,3,1,4,1,5,1] parameter(0)
  zero = f32[] constant(0)
  ROOT out = f32[3,4,5,1] reduce(input, zero), dimensions={0,2,4}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT %", "f32[3,4,5,1]{3,2,1,0} bitcast(%input)", "NOT: reduce("})) << r.text;
}

// A variadic reduce keeps its tuple: each result is bitcast back from the
// reduce over the real dimensions.
TEST(ReductionDegenerateDimRemoverTest, EdgeCaseVariadic) {
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
  p = f32[3,1,5] parameter(0)
  q = s32[3,1,5] parameter(1)
  init = f32[] constant(-inf)
  k = s32[] constant(-1)
  ROOT r = (f32[3,1], s32[3,1]) reduce(p, q, init, k), dimensions={2}, to_apply=argmax
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[3,5]{1,0} bitcast(%p)", "s32[3,5]{1,0} bitcast(%q)", "(f32[3]{0}, s32[3]{0}) reduce(",
                               "dimensions={1}", "f32[3,1]{1,0} bitcast(", "s32[3,1]{1,0} bitcast(", "ROOT %"}))
      << r.text;
}

}  // namespace
}  // namespace passlab
