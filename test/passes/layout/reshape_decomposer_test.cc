// ReshapeDecomposer tests, after XLA's
// xla/hlo/transforms/expanders/reshape_decomposer_test.cc (IsBitcast,
// AlignableInput, AlignableOutput, NotAlignable).
#include "passes/layout/reshape_decomposer.h"

#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<HloPassInterface> Pass() { return std::make_unique<ReshapeDecomposer>(); }

TEST(ReshapeDecomposerTest, BitcastReshapeBecomesBitcast) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[8]{0} parameter(0)
  ROOT r = f32[4,2]{1,0} reshape(p)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT", "f32[4,2]{1,0} bitcast(", "NOT: reshape(", "NOT: copy("})) << r.text;
}

TEST(ReshapeDecomposerTest, CopiesTheOperandWhenTheOutputLayoutAllowsABitcast) {
  // [4,2,3]{2,0,1} -> [8,3]{1,0}: no bitcast, but the operand copied to
  // {2,1,0} is one.
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[4,2,3]{2,0,1} parameter(0)
  ROOT r = f32[8,3]{1,0} reshape(p)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[4,2,3]{2,1,0} copy(", "ROOT", "f32[8,3]{1,0} bitcast("})) << r.text;
}

TEST(ReshapeDecomposerTest, CopiesTheResultWhenOnlyTheInputAligns) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[8,3]{1,0} parameter(0)
  ROOT r = f32[4,2,3]{0,1,2} reshape(p)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[4,2,3]{2,1,0} bitcast(", "ROOT", "f32[4,2,3]{0,1,2} copy("})) << r.text;
}

TEST(ReshapeDecomposerTest, NeitherSideAlignsGoesThroughDescendingLayouts) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[4,2,3,8]{0,2,1,3} parameter(0)
  ROOT r = f32[8,3,2,4]{0,2,1,3} reshape(p)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[4,2,3,8]{3,2,1,0} copy(", "f32[8,3,2,4]{3,2,1,0} bitcast(", "ROOT",
                               "f32[8,3,2,4]{0,2,1,3} copy("}))
      << r.text;
}

TEST(ReshapeDecomposerTest, EdgeCaseDegenerateDimensionsGoMostMajor) {
  // [6]{0} -> [1,2,1,3]{0,1,2,3} is no bitcast; aligned to the input the
  // size-1 dimensions take the most major places.
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[6,5]{0,1} parameter(0)
  ROOT r = f32[1,2,1,3,5]{0,1,2,3,4} reshape(p)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT", "copy("})) << r.text;
}

TEST(ReshapeDecomposerTest, KeepsModulesWithoutReshapes) {
  EXPECT_FALSE(RunPass(Pass(), R"(
ENTRY main {
  p = f32[4,2]{0,1} parameter(0)
  ROOT t = f32[2,4]{1,0} transpose(p), dimensions={1,0}
})").changed);
}

}  // namespace
}  // namespace passlab
