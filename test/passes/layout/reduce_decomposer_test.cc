// ReduceDecomposer tests, after XLA's
// xla/hlo/transforms/expanders/reduce_decomposer_test.cc
// (ReducePerformsTransposition, ReducePerformsTranspositionAfterConvert,
// ReduceNaturalLayout, VariadicReductionDescendingLayout,
// VariadicReductionInputsDifferentLayout).
#include "passes/layout/reduce_decomposer.h"

#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<HloPassInterface> Pass() { return std::make_unique<ReduceDecomposer>(); }

TEST(ReduceDecomposerTest, OutputLayoutChangeBecomesACopy) {
  PassResult r = RunPass(Pass(), std::string(kAddF32Reducer) + R"(
ENTRY main {
  p = f32[5,3,4]{2,1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5,4]{0,1} reduce(p, z), dimensions={1}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[5,4]{1,0} reduce(", "ROOT", "f32[5,4]{0,1} copy("})) << r.text;
}

TEST(ReduceDecomposerTest, CopyGoesAfterASingleConvertUser) {
  PassResult r = RunPass(Pass(), std::string(kAddF32Reducer) + R"(
ENTRY main {
  p = f32[5,3,4]{2,1,0} parameter(0)
  z = f32[] constant(0)
  r = f32[5,4]{0,1} reduce(p, z), dimensions={1}, to_apply=add
  ROOT c = f16[5,4]{0,1} convert(r)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[5,4]{1,0} reduce(", "f16[5,4]{1,0} convert(", "ROOT", "f16[5,4]{0,1} copy("}))
      << r.text;
}

TEST(ReduceDecomposerTest, KeepsReduceWithTheInputsLayout) {
  EXPECT_FALSE(RunPass(Pass(), std::string(kAddF32Reducer) + R"(
ENTRY main {
  p = f32[5,3,4]{0,1,2} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5,4]{0,1} reduce(p, z), dimensions={1}, to_apply=add
})").changed);
}

TEST(ReduceDecomposerTest, VariadicInputsGetTheFirstInputsLayout) {
  PassResult r = RunPass(Pass(), R"(
argmax {
  a = f32[] parameter(0)
  ai = u32[] parameter(1)
  b = f32[] parameter(2)
  bi = u32[] parameter(3)
  gt = pred[] compare(b, a), direction=GT
  m = f32[] select(gt, b, a)
  i = u32[] select(gt, bi, ai)
  ROOT t = (f32[], u32[]) tuple(m, i)
}

ENTRY main {
  x = f32[2,3,16]{2,1,0} parameter(0)
  idx = u32[2,3,16]{1,2,0} parameter(1)
  z = f32[] constant(0)
  zi = u32[] constant(0)
  ROOT r = (f32[2,3]{0,1}, u32[2,3]{0,1}) reduce(x, idx, z, zi), dimensions={2}, to_apply=argmax
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"u32[2,3,16]{2,1,0} copy(", "(f32[2,3]{1,0}, u32[2,3]{1,0}) reduce(",
                               "f32[2,3]{0,1} copy(", "u32[2,3]{0,1} copy(", "ROOT", "tuple("}))
      << r.text;
}

TEST(ReduceDecomposerTest, OptionKeepsContiguousReductions) {
  // A row reduction of 1024 elements is one the GPU emitter handles in any
  // output layout.
  EXPECT_FALSE(RunPass(std::make_unique<ReduceDecomposer>(
                           ReduceDecomposerOptions{.allow_custom_layout_for_contiguous_reductions = true}),
                       std::string(kAddF32Reducer) + R"(
ENTRY main {
  p = f32[4,8,1024]{2,1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4,8]{0,1} reduce(p, z), dimensions={2}, to_apply=add
})")
                   .changed);
}

}  // namespace
}  // namespace passlab
