#include "passes/simplifiers/conditional_canonicalizer.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

TEST(ConditionalCanonicalizerTest, TuplesArrayResult) {
  PassResult r = RunPass(std::make_unique<ConditionalCanonicalizer>(), R"(
on_true {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
on_false {
  y = f32[4] parameter(0)
  ROOT e = f32[4] exponential(y)
}
ENTRY e {
  p = pred[] parameter(0)
  a = f32[4] parameter(1)
  c = f32[4] conditional(p, a, a), true_computation=on_true, false_computation=on_false
  ROOT m = f32[4] multiply(c, a)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"on_true", "ROOT %tuple", "(f32[4]{0}) tuple(", "on_false", "ROOT %tuple",
                               "(f32[4]{0}) conditional(", "get-tuple-element(", "index=0", "multiply("}))
      << r.text;
}

TEST(ConditionalCanonicalizerTest, EdgeCaseSharedBranchIsCloned) {
  // Both branches and a call use `neg`: each branch gets a clone with a
  // tupled root, and the call keeps `neg` with its array root.
  PassResult r = RunPass(std::make_unique<ConditionalCanonicalizer>(), R"(
neg {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
pair {
  y = f32[2] parameter(0)
  ROOT t = (f32[2]) tuple(y)
}
ENTRY e {
  i = s32[] parameter(0)
  a = f32[2] parameter(1)
  t = (f32[2]) conditional(i, a, a), branch_computations={pair, pair}
  g = f32[2] get-tuple-element(t), index=0
  c = f32[2] conditional(i, g, g), branch_computations={neg, neg}
  k = f32[2] call(a), to_apply=neg
  ROOT s = f32[2] add(c, k)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%neg (x: f32[2]) -> f32[2]", "ROOT %n = f32[2]{0} negate(", "neg.clone", "ROOT %tuple", "neg.clone.1", "ROOT %tuple",
                               "(f32[2]{0}) conditional(", "get-tuple-element(", "call("})) << r.text;
}

TEST(ConditionalCanonicalizerTest, LeavesTupleResults) {
  EXPECT_FALSE(RunPass(std::make_unique<ConditionalCanonicalizer>(), R"(
b0 {
  x = f32[2] parameter(0)
  ROOT t = (f32[2]) tuple(x)
}
ENTRY e {
  i = s32[] parameter(0)
  a = f32[2] parameter(1)
  ROOT t = (f32[2]) conditional(i, a), branch_computations={b0}
})").changed);
}

TEST(ConditionalCanonicalizerTest, CorpusConditionalsComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" conditional(", [] { return std::make_unique<ConditionalCanonicalizer>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(stats.changed, 0);
}

}  // namespace
}  // namespace passlab
