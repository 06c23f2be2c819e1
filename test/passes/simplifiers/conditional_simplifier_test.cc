#include "passes/simplifiers/conditional_simplifier.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(ConditionalSimplifierTest, InlinesTheTakenBranch) {
  PassResult r = RunPass(std::make_unique<ConditionalSimplifier>(), R"(
HloModule m
b0 { x = f32[2] parameter(0)  ROOT n = f32[2] negate(x) }
b1 { x = f32[2] parameter(0)  ROOT e = f32[2] exponential(x) }
ENTRY e {
  p = f32[2] parameter(0)
  i = s32[] constant(7)
  ROOT c = f32[2] conditional(i, p, p), branch_computations={b0, b1}
})");
  EXPECT_TRUE(r.changed);  // index 7 is out of range: the last branch
  // Like XLA, the branches stay in the module until DCE removes them.
  EXPECT_TRUE(Matches(r.text, {"ENTRY", "ROOT %e.1 = f32[2]{0} exponential(%p)", "NOT:conditional("})) << r.text;
}

// A data-dependent index that is not a pred, or expensive branches (XLA:
// anything but elementwise ops and cheap data movement), keep the
// conditional.
TEST(ConditionalSimplifierTest, KeepsDataDependentConditionals) {
  EXPECT_FALSE(RunPass(std::make_unique<ConditionalSimplifier>(), R"(
HloModule m
b0 { x = f32[2] parameter(0)  ROOT n = f32[2] negate(x) }
b1 { x = f32[2] parameter(0)  ROOT e = f32[2] exponential(x) }
ENTRY e {
  p = f32[2] parameter(0)
  i = s32[] parameter(1)
  ROOT c = f32[2] conditional(i, p, p), branch_computations={b0, b1}
})").changed);
  EXPECT_FALSE(RunPass(std::make_unique<ConditionalSimplifier>(), R"(
HloModule m
b0 { x = f32[2] parameter(0)  ROOT n = f32[2] reverse(x), dimensions={0} }
b1 { x = f32[2] parameter(0)  ROOT e = f32[2] exponential(x) }
ENTRY e {
  p = f32[2] parameter(0)
  i = pred[] parameter(1)
  ROOT c = f32[2] conditional(i, p, p), true_computation=b0, false_computation=b1
})").changed);
}

// XLA: ConditionalSimplifierTest.SecondTupleElementUnusedAndRemoved: result
// elements nobody reads leave the (cloned) branches.
TEST(ConditionalSimplifierTest, RemovesUnreadResultElements) {
  PassResult r = RunPass(std::make_unique<ConditionalSimplifier>(), R"(
HloModule m
b0 { x = f32[2] parameter(0)  n = f32[2] negate(x)  e = f32[2] exponential(x)  ROOT t = (f32[2], f32[2]) tuple(n, e) }
b1 { x = f32[2] parameter(0)  ROOT t = (f32[2], f32[2]) tuple(x, x) }
ENTRY e {
  p = f32[2] parameter(0)
  i = s32[] parameter(1)
  c = (f32[2], f32[2]) conditional(i, p, p), branch_computations={b0, b1}
  ROOT g = f32[2] get-tuple-element(c), index=1
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%b0.clone", "%c = (f32[2]{0}) conditional(", "branch_computations={%b0.clone, %b1.clone}",
                               "get-tuple-element(%c), index=0"}))
      << r.text;
}

// XLA: ConditionalSimplifierTest.SimplifyConditionalWithTokens (the select
// form): a cheap two-branch conditional on a pred becomes both branches and
// a select.
TEST(ConditionalSimplifierTest, CheapPredConditionalBecomesSelect) {
  PassResult r = RunPass(std::make_unique<ConditionalSimplifier>(), R"(
HloModule m
b0 { x = f32[2] parameter(0)  ROOT n = f32[2] negate(x) }
b1 { x = f32[2] parameter(0)  ROOT a = f32[2] abs(x) }
ENTRY e {
  p = f32[2] parameter(0)
  i = pred[] parameter(1)
  ROOT c = f32[2] conditional(i, p, p), true_computation=b0, false_computation=b1
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"pred[2]{0} broadcast(%i)", "select(", "NOT: conditional("})) << r.text;
}

// XLA: ConditionalSimplifierTest.RespectsUninlineableAttribute.
TEST(ConditionalSimplifierTest, KeepsUninlineableBranchAsCall) {
  PassResult r = RunPass(std::make_unique<ConditionalSimplifier>(), R"(
HloModule m
b0 { x = f32[2] parameter(0)  ROOT n = f32[2] negate(x) }
ENTRY e {
  p = f32[2] parameter(0)
  i = s32[] constant(0)
  ROOT c = f32[2] conditional(i, p), branch_computations={b0}, frontend_attributes={inlineable="false"}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"call(%p), to_apply=%b0"})) << r.text;
}

// XLA: ConditionalSimplifierTest.TrivalOperandsRemoved: tuple elements of a
// branch operand the branch never reads leave the operand.
TEST(ConditionalSimplifierTest, RemovesUnreadOperandElements) {
  PassResult r = RunPass(std::make_unique<ConditionalSimplifier>(), R"(
HloModule m
b0 { t = (f32[2], f32[2]) parameter(0)  x = f32[2] get-tuple-element(t), index=0  ROOT n = f32[2] negate(x) }
b1 { t = (f32[2], f32[2]) parameter(0)  x = f32[2] get-tuple-element(t), index=0  ROOT n = f32[2] exponential(x) }
ENTRY e {
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  t = (f32[2], f32[2]) tuple(p, q)
  i = s32[] parameter(2)
  ROOT c = f32[2] conditional(i, t, t), branch_computations={b0, b1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%b0.clone (t.", ": (f32[2])) -> f32[2]", "branch_computations={%b0.clone, %b1.clone}"}))
      << r.text;
}

}  // namespace
}  // namespace passlab
