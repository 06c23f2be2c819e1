#include "passes/gpu/reduction_layout_normalizer.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

TEST(ReductionLayoutNormalizerTest, TransposesInputIntoMemoryOrder) {
  // Memory order of p is [dim 2, dim 0, dim 1]; dims 0 and 1 are kept and
  // come back in the original output order.
  PassResult r = RunPass(std::make_unique<ReductionLayoutNormalizer>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[3,4,5]{1,0,2} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,4]{0,1} reduce(p, z), dimensions={2}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[5,3,4]{2,1,0} transpose(%p), dimensions={2,0,1}", "f32[3,4]{1,0} reduce(",
                               "dimensions={0}", "NOT:ROOT %r = f32[3,4]{0,1} reduce"}))
      << r.text;
}

TEST(ReductionLayoutNormalizerTest, KeepsDefaultLayouts) {
  EXPECT_FALSE(RunPass(std::make_unique<ReductionLayoutNormalizer>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[3,4,5]{2,1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(p, z), dimensions={1,2}, to_apply=add
})").changed);
}

TEST(ReductionLayoutNormalizerTest, EdgeCaseKeptDimsReorderedNeedTransposeBack) {
  // Memory order [2, 1, 0]: the kept dims 0 and 2 come out as [2, 0] and
  // are transposed back.
  PassResult r = RunPass(std::make_unique<ReductionLayoutNormalizer>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[3,4,5]{0,1,2} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,5] reduce(p, z), dimensions={1}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[5,4,3]{2,1,0} transpose(%p)", "f32[5,3]{1,0} reduce(", "dimensions={1}",
                               "ROOT %transpose.1 = f32[3,5]{1,0} transpose("}))
      << r.text;
}

}  // namespace
}  // namespace passlab
