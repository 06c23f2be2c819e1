#include "passes/gpu/reduction_layout_normalizer.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

// xla/backends/gpu/transforms/reduction_layout_normalizer.cc: inputs and
// outputs are bitcast, never transposed (reduction_layout_normalizer_test.cc,
// LayoutCanonicalizerTest).
TEST(ReductionLayoutNormalizerTest, BitcastsInputIntoMemoryOrder) {
  // Memory order of p is [dim 2, dim 0, dim 1]; dims 0 and 1 are kept; the
  // new output [3,4] keeps the original output's memory order ({0,1}), so
  // the bitcast back moves nothing.
  PassResult r = RunPass(std::make_unique<ReductionLayoutNormalizer>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[3,4,5]{1,0,2} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,4]{0,1} reduce(p, z), dimensions={2}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[5,3,4]{2,1,0} bitcast(%p)", "f32[3,4]{0,1} reduce(", "dimensions={0}",
                               "NOT:transpose"}))
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

// XLA returns early when the only input already has the default layout,
// whatever the output's layout.
TEST(ReductionLayoutNormalizerTest, KeepsDefaultLayoutInputWithDefaultOutput) {
  EXPECT_FALSE(RunPass(std::make_unique<ReductionLayoutNormalizer>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[8,2,2,16]{3,2,1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8,16]{1,0} reduce(p, z), dimensions={1,2}, to_apply=add
})").changed);
}

TEST(ReductionLayoutNormalizerTest, EdgeCaseKeptDimsReorderedAreBitcastBack) {
  // Memory order [2, 1, 0]: the kept dims 0 and 2 come out as [5,3] laid
  // out {0,1} (dim 0 of the original output most major), which is the
  // original f32[3,5]{1,0} bitcast.
  PassResult r = RunPass(std::make_unique<ReductionLayoutNormalizer>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[3,4,5]{0,1,2} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,5] reduce(p, z), dimensions={1}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[5,4,3]{2,1,0} bitcast(%p)", "f32[5,3]{0,1} reduce(", "dimensions={1}",
                               "ROOT", "f32[3,5]{1,0} bitcast(", "NOT:transpose"}))
      << r.text;
}

// XLA's pass on a variadic reduce: every input bitcast, each output a
// get-tuple-element bitcast back (XLA's dump of the ResNet-50 step on an
// H200, step 45, bitcasts where passlab used to transpose).
TEST(ReductionLayoutNormalizerTest, VariadicReduceBitcastsEveryInputAndOutput) {
  PassResult r = RunPass(std::make_unique<ReductionLayoutNormalizer>(), R"(
argmax {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  g = pred[] compare(a, c), direction=GE
  v = f32[] select(g, a, c)
  i = s32[] select(g, b, d)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  p = f32[4,6,8]{0,2,1} parameter(0)
  q = s32[4,6,8]{0,2,1} parameter(1)
  z = f32[] constant(0)
  n = s32[] constant(0)
  ROOT r = (f32[4,8], s32[4,8]) reduce(p, q, z, n), dimensions={1}, to_apply=argmax
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[6,8,4]{2,1,0} bitcast(%p)", "s32[6,8,4]{2,1,0} bitcast(%q)",
                               "(f32[8,4]{0,1}, s32[8,4]{0,1}) reduce(", "dimensions={0}",
                               "f32[4,8]{1,0} bitcast(", "s32[4,8]{1,0} bitcast(", "ROOT", "tuple(", "NOT:transpose"}))
      << r.text;
}

}  // namespace
}  // namespace passlab
