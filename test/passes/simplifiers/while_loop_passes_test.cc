// The while-loop state rewrites of simplify-while-loops and
// while-loop-invariant-code-motion. (Trip-count rules are in
// simplifiers_test.cc.)
#include "passes/simplifiers/while_loop_invariant_code_motion.h"
#include "passes/simplifiers/while_loop_simplifier.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

// A loop of 5 iterations (unknown to the trip-count rule: the bound is a
// parameter) whose state is (i, acc, unused, bound).
constexpr char kLoopWithUnusedElement[] = R"(
cond {
  p = (s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=3
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc = f32[4] get-tuple-element(p), index=1
  acc1 = f32[4] add(acc, acc)
  u = f32[4] get-tuple-element(p), index=2
  u1 = f32[4] exponential(u)
  n = s32[] get-tuple-element(p), index=3
  ROOT t = (s32[], f32[4], f32[4], s32[]) tuple(i1, acc1, u1, n)
}
ENTRY e {
  x = f32[4] parameter(0)
  n = s32[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4], s32[]) tuple(zero, x, x, n)
  w = (s32[], f32[4], f32[4], s32[]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
})";

TEST(WhileLoopSimplifierTest, RemovesUnusedLoopElement) {
  PassResult r = RunPass(std::make_unique<WhileLoopSimplifier>(), kLoopWithUnusedElement);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(s32[], f32[4]{0}, s32[]) while(", "NOT:exponential"})) << r.text;
}

TEST(WhileLoopSimplifierTest, KeepsElementsTheConditionOrOtherElementsRead) {
  // Element 2 feeds element 1: it must stay.
  std::string hlo = kLoopWithUnusedElement;
  hlo.replace(hlo.find("acc1 = f32[4] add(acc, acc)"), 27, "acc1 = f32[4] add(acc, u)");
  PassResult r = RunPass(std::make_unique<WhileLoopSimplifier>(), hlo);
  EXPECT_FALSE(r.changed) << r.text;
}

// XLA's TryRemoveRepeatedWhileTupleIndices
// (xla/service/while_loop_simplifier.cc): elements the body passes through
// unchanged from the same initial value are one element. Elements merely
// updated alike (sine of each) are not merged.
TEST(WhileLoopSimplifierTest, MergesRepeatedPassThroughElements) {
  PassResult r = RunPass(std::make_unique<WhileLoopSimplifier>(), R"(
cond {
  p = (s32[], f32[3], f32[3], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=3
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[3], f32[3], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  a = f32[3] get-tuple-element(p), index=1
  b = f32[3] get-tuple-element(p), index=2
  n = s32[] get-tuple-element(p), index=3
  ROOT t = (s32[], f32[3], f32[3], s32[]) tuple(i1, a, b, n)
}
ENTRY e {
  x = f32[3] parameter(0)
  n = s32[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[3], f32[3], s32[]) tuple(zero, x, x, n)
  w = (s32[], f32[3], f32[3], s32[]) while(init), condition=cond, body=body
  ga = f32[3] get-tuple-element(w), index=1
  gb = f32[3] get-tuple-element(w), index=2
  ROOT s = f32[3] subtract(ga, gb)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(s32[], f32[3]{0}, s32[]) while("})) << r.text;
}

// XLA: WhileLoopSimplifierTest.RemoveUnusedLoopOperandsCheckMetadata: a
// loop at the root still loses a pass-through element the loop does not
// need; its value after the loop is its initial value.
TEST(WhileLoopSimplifierTest, RootLoopDropsPassThroughElement) {
  PassResult r = RunPass(std::make_unique<WhileLoopSimplifier>(), R"(
body {
  p = (s32[], s32[], s32[]) parameter(0)
  a = s32[] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  b1 = s32[] add(b, one)
  c = s32[] get-tuple-element(p), index=2
  ROOT t = (s32[], s32[], s32[]) tuple(a, b1, c)
}
cond {
  p = (s32[], s32[], s32[]) parameter(0)
  c = s32[] get-tuple-element(p), index=2
  b = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(b, c), direction=LT
}
ENTRY e {
  x = s32[] parameter(0)
  y = s32[] constant(0)
  z = s32[] constant(5)
  init = (s32[], s32[], s32[]) tuple(x, y, z)
  ROOT w = (s32[], s32[], s32[]) while(init), condition=cond, body=body, metadata={op_name="while"}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"get-tuple-element(%init), index=0", "%w.1 = (s32[], s32[]) while(",
                               "ROOT %tuple"}))
      << r.text;
}

// XLA: WhileLoopSimplifierTest.RemoveConstantFromLoopCarry: an element that
// starts as a constant and that the body sets to the same constant leaves
// the state.
TEST(WhileLoopSimplifierTest, RemovesConstantLoopElement) {
  PassResult r = RunPass(std::make_unique<WhileLoopSimplifier>(), R"(
body {
  p = (s32[], s32[2], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  k = s32[2] get-tuple-element(p), index=1
  kc = s32[2] constant({1, 1})
  n = s32[] get-tuple-element(p), index=2
  ROOT t = (s32[], s32[2], s32[]) tuple(i1, kc, n)
}
cond {
  p = (s32[], s32[2], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=2
  k = s32[2] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  zero = s32[] constant(0)
  k = s32[2] constant({1, 1})
  n = s32[] parameter(0)
  init = (s32[], s32[2], s32[]) tuple(zero, k, n)
  ROOT w = (s32[], s32[2], s32[]) while(init), condition=cond, body=body
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(s32[], s32[]) while(", "tuple(%get-tuple-element"})) << r.text;
}

TEST(WhileLoopSimplifierTest, FlattensNestedState) {
  PassResult r = RunPass(std::make_unique<WhileLoopSimplifier>(), R"(
cond {
  p = (s32[], (f32[2], s32[])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  inner = (f32[2], s32[]) get-tuple-element(p), index=1
  n = s32[] get-tuple-element(inner), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], (f32[2], s32[])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  inner = (f32[2], s32[]) get-tuple-element(p), index=1
  v = f32[2] get-tuple-element(inner), index=0
  v1 = f32[2] multiply(v, v)
  n = s32[] get-tuple-element(inner), index=1
  in1 = (f32[2], s32[]) tuple(v1, n)
  ROOT t = (s32[], (f32[2], s32[])) tuple(i1, in1)
}
ENTRY e {
  x = f32[2] parameter(0)
  n = s32[] parameter(1)
  zero = s32[] constant(0)
  in0 = (f32[2], s32[]) tuple(x, n)
  init = (s32[], (f32[2], s32[])) tuple(zero, in0)
  w = (s32[], (f32[2], s32[])) while(init), condition=cond, body=body
  ROOT r = (f32[2], s32[]) get-tuple-element(w), index=1
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(s32[], f32[2]{0}, s32[]) while("})) << r.text;
}

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

}  // namespace
}  // namespace passlab

namespace passlab {
namespace {

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
