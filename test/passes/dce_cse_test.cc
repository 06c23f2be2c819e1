#include "passes/simplifiers/hlo_cse.h"
#include "passes/simplifiers/hlo_dce.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(HloDceTest, RemovesDeadChains) {
  PassResult r = RunPass(std::make_unique<HloDCE>(), R"(
ENTRY e {
  p = f32[4] parameter(0)
  dead1 = f32[4] exponential(p)
  dead2 = f32[4] add(dead1, dead1)
  ROOT n = f32[4] negate(p)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%p = ", "ROOT %n = ", "NOT:dead1", "NOT:dead2"}));
}

TEST(HloDceTest, KeepsSideEffectsParametersAndRoot) {
  PassResult r = RunPass(std::make_unique<HloDCE>(), R"(
ENTRY e {
  p = f32[4] parameter(0)
  unused = f32[4] parameter(1)
  t = token[] after-all()
  o = token[] outfeed(p, t), outfeed_shape=f32[4]
  cc = f32[4] custom-call(p), custom_call_target="log", custom_call_has_side_effect=true
  ROOT n = f32[4] negate(p)
})");
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%unused = ", "outfeed(", "custom-call("}));
}

TEST(HloDceTest, RemovesUnusedComputationsAndDeadWhileBodies) {
  PassResult r = RunPass(std::make_unique<HloDCE>(), R"(
HloModule m
orphan {
  ROOT x = f32[] parameter(0)
}
ENTRY e {
  p = f32[] parameter(0)
  c = f32[] call(p), to_apply=orphan
  ROOT n = f32[] negate(p)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ENTRY", "NOT:orphan", "NOT:call("}));
}

TEST(HloCseTest, MergesIdenticalInstructionsAndConstants) {
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  b1 = f32[4] broadcast(c1), dimensions={}
  b2 = f32[4] broadcast(c2), dimensions={}
  m1 = f32[4] multiply(p, b1)
  m2 = f32[4] multiply(p, b2)
  ROOT a = f32[4] add(m1, m2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%c1 = ", "%b1 = ", "%m1 = ", "add(%m1, %m1)", "NOT:%c2", "NOT:%m2"}));
}

TEST(HloCseTest, KeepsDifferentAttributesAndRandomness) {
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
ENTRY e {
  p = f32[4,4] parameter(0)
  t1 = f32[4,4] transpose(p), dimensions={1,0}
  t2 = f32[4,4] transpose(p), dimensions={0,1}
  z = f32[] constant(0)
  o = f32[] constant(1)
  r1 = f32[4,4] rng(z, o), distribution=rng_uniform
  r2 = f32[4,4] rng(z, o), distribution=rng_uniform
  a = f32[4,4] add(t1, t2)
  b = f32[4,4] add(r1, r2)
  ROOT s = f32[4,4] add(a, b)
})");
  EXPECT_FALSE(r.changed);
}

TEST(HloCseTest, EdgeCaseLayoutsMatter) {
  // Same values, different layouts: not interchangeable.
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c1 = f32[2,3]{1,0} copy(p)
  c2 = f32[2,3]{0,1} copy(p)
  ROOT t = (f32[2,3]{1,0}, f32[2,3]{0,1}) tuple(c1, c2)
})");
  EXPECT_FALSE(r.changed);
}

}  // namespace
}  // namespace passlab
