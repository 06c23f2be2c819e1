#include "passes/simplifiers/while_loop_invariant_code_motion.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(WhileLoopInvariantCodeMotionTest, HoistsInvariantComputation) {
  PassResult r = RunPass(std::make_unique<WhileLoopInvariantCodeMotion>(), R"(
cond {
  p = (s32[], f32[8], f32[8], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=3
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8], f32[8], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc = f32[8] get-tuple-element(p), index=1
  x = f32[8] get-tuple-element(p), index=2
  ex = f32[8] exponential(x)
  tx = f32[8] tanh(ex)
  acc1 = f32[8] add(acc, tx)
  n = s32[] get-tuple-element(p), index=3
  ROOT t = (s32[], f32[8], f32[8], s32[]) tuple(i1, acc1, x, n)
}
ENTRY e {
  a = f32[8] parameter(0)
  x = f32[8] parameter(1)
  n = s32[] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[8], f32[8], s32[]) tuple(zero, a, x, n)
  w = (s32[], f32[8], f32[8], s32[]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
})");
  EXPECT_TRUE(r.changed);
  // exp and tanh run once, before the loop; the body reads tanh's value from
  // a new loop element.
  EXPECT_TRUE(Matches(r.text, {"ENTRY", "exponential(%x)", "tanh(", "(s32[], f32[8]{0}, f32[8]{0}, s32[], f32[8]{0}) while("}))
      << r.text;
  size_t body = r.text.find("body");
  size_t entry = r.text.find("ENTRY");
  EXPECT_EQ(r.text.substr(body, entry - body).find("exponential"), std::string::npos) << r.text;
}

TEST(WhileLoopInvariantCodeMotionTest, KeepsVariantAndCheapInstructions) {
  // The exp depends on the accumulator (variant); the broadcast of a
  // constant is not worth a loop element.
  EXPECT_FALSE(RunPass(std::make_unique<WhileLoopInvariantCodeMotion>(), R"(
cond {
  p = (s32[], f32[8], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc = f32[8] get-tuple-element(p), index=1
  h = f32[] constant(0.5)
  hb = f32[8] broadcast(h), dimensions={}
  m = f32[8] multiply(acc, hb)
  e = f32[8] exponential(m)
  n = s32[] get-tuple-element(p), index=2
  ROOT t = (s32[], f32[8], s32[]) tuple(i1, e, n)
}
ENTRY e {
  a = f32[8] parameter(0)
  n = s32[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[8], s32[]) tuple(zero, a, n)
  w = (s32[], f32[8], s32[]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
})").changed);
}

TEST(WhileLoopInvariantCodeMotionTest, EdgeCaseSideEffectsAndSharedBodiesStay) {
  // A body called by two loops is not rewritten (FlattenCallGraph first).
  EXPECT_FALSE(RunPass(std::make_unique<WhileLoopInvariantCodeMotion>(), R"(
cond {
  p = (s32[], f32[2], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[2], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  n = s32[] get-tuple-element(p), index=2
  nf = f32[] convert(n)
  s = f32[] sqrt(nf)
  sb = f32[2] broadcast(s), dimensions={}
  ROOT t = (s32[], f32[2], s32[]) tuple(i1, sb, n)
}
ENTRY e {
  a = f32[2] parameter(0)
  n = s32[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[2], s32[]) tuple(zero, a, n)
  w1 = (s32[], f32[2], s32[]) while(init), condition=cond, body=body
  w2 = (s32[], f32[2], s32[]) while(w1), condition=cond, body=body
  ROOT r = f32[2] get-tuple-element(w2), index=1
})").changed);
}

// XLA: WhileLoopInvariantCodeMotionTest.SharedCalleeOneHoistedOneNot: the
// condition another loop shares is copied, not changed under that loop.
TEST(WhileLoopInvariantCodeMotionTest, HoistsWithASharedCondition) {
  PassResult r = RunPass(std::make_unique<WhileLoopInvariantCodeMotion>(), R"(
body_hoist {
  p = (s32[2], s32[2]) parameter(0)
  a = s32[2] get-tuple-element(p), index=0
  e = s32[2] multiply(a, a)
  ROOT t = (s32[2], s32[2]) tuple(a, e)
}
body_other {
  p = (s32[2], s32[2]) parameter(0)
  a = s32[2] get-tuple-element(p), index=0
  b = s32[2] get-tuple-element(p), index=1
  ROOT t = (s32[2], s32[2]) tuple(b, a)
}
cond {
  p = (s32[2], s32[2]) parameter(0)
  ROOT r = pred[] constant(false)
}
ENTRY e {
  x = (s32[2], s32[2]) parameter(0)
  w0 = (s32[2], s32[2]) while(x), condition=cond, body=body_hoist
  ROOT w1 = (s32[2], s32[2]) while(w0), condition=cond, body=body_other
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%cond.clone", "multiply(", "condition=%cond.clone", "condition=%cond,"})) << r.text;
}

}  // namespace
}  // namespace passlab
