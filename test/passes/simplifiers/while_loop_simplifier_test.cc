#include "passes/simplifiers/while_loop_simplifier.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

std::string Loop(int64_t start, int64_t bound) {
  return "HloModule m\n"
         "cond { s = (s32[], f32[4]) parameter(0)  i = s32[] get-tuple-element(s), index=0\n"
         "       n = s32[] constant(" + std::to_string(bound) + ")  ROOT lt = pred[] compare(i, n), direction=LT }\n"
         "body { s = (s32[], f32[4]) parameter(0)  i = s32[] get-tuple-element(s), index=0\n"
         "       x = f32[4] get-tuple-element(s), index=1  one = s32[] constant(1)\n"
         "       i1 = s32[] add(i, one)  x1 = f32[4] exponential(x)\n"
         "       ROOT t = (s32[], f32[4]) tuple(i1, x1) }\n"
         "ENTRY e { p = f32[4] parameter(0)  z = s32[] constant(" + std::to_string(start) + ")\n"
         "  init = (s32[], f32[4]) tuple(z, p)\n"
         "  w = (s32[], f32[4]) while(init), condition=cond, body=body\n"
         "  ROOT r = f32[4] get-tuple-element(w), index=1 }\n";
}

TEST(WhileLoopSimplifierTest, ZeroTripLoopBecomesItsInit) {
  PassResult r = RunPass(std::make_unique<WhileLoopSimplifier>(), Loop(5, 3));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"NOT:while(", "NOT:exponential("})) << r.text;
}

TEST(WhileLoopSimplifierTest, OneTripLoopIsInlined) {
  PassResult r = RunPass(std::make_unique<WhileLoopSimplifier>(), Loop(2, 3));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"exponential(", "NOT:while("})) << r.text;
}

TEST(WhileLoopSimplifierTest, LongerLoopsStay) {
  PassResult r = RunPass(std::make_unique<WhileLoopSimplifier>(), Loop(0, 3));
  EXPECT_FALSE(r.changed);
  auto m = ParseHloModule(Loop(0, 3));
  ASSERT_TRUE(m.ok());
  for (HloInstruction* i : (*m)->entry_computation()->instructions()) {
    if (i->opcode() == HloOpcode::kWhile) {
      EXPECT_EQ(ComputeWhileTripCount(*i), 3);
    }
  }
}

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

}  // namespace
}  // namespace passlab
