#include "passes/simplifiers/while_loop_constant_sinking.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

const char* kSinkLoop = R"(
HloModule m
cond { s = (s32[], f32[4]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       n = s32[] constant(3)  ROOT lt = pred[] compare(i, n), direction=LT }
body { s = (s32[], f32[4]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       c = f32[4] get-tuple-element(s), index=1  one = s32[] constant(1)
       i1 = s32[] add(i, one)  ROOT t = (s32[], f32[4]) tuple(i1, c) }
ENTRY e { z = s32[] constant(0)  k = f32[4] constant({1, 2, 3, 4})
  init = (s32[], f32[4]) tuple(z, k)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body })";

TEST(WhileLoopConstantSinkingTest, PassThroughConstantsAreSunk) {
  // Here the constant is only passed through: nothing reads it but the root.
  EXPECT_FALSE(RunPass(std::make_unique<WhileLoopConstantSinking>(), kSinkLoop).changed);
  // Here the loop bound is the carried constant: the condition's read sinks.
  PassResult r = RunPass(std::make_unique<WhileLoopConstantSinking>(), R"(
HloModule m
cond { s = (s32[], s32[]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       n = s32[] get-tuple-element(s), index=1  ROOT lt = pred[] compare(i, n), direction=LT }
body { s = (s32[], s32[]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       n = s32[] get-tuple-element(s), index=1  one = s32[] constant(1)
       i1 = s32[] add(i, one)  ROOT t = (s32[], s32[]) tuple(i1, n) }
ENTRY e { z = s32[] constant(0)  limit = s32[] constant(4)
  init = (s32[], s32[]) tuple(z, limit)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body })");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%cond.sunk", "%limit.sunk = s32[] constant(4)", "compare(%i.1, %limit.sunk)", "condition=%cond.sunk"})) << r.text;
}

TEST(WhileLoopConstantSinkingTest, ChangingValuesStay) {
  PassResult r = RunPass(std::make_unique<WhileLoopConstantSinking>(), R"(
HloModule m
cond { s = (s32[], s32[]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       n = s32[] get-tuple-element(s), index=1  ROOT lt = pred[] compare(i, n), direction=LT }
body { s = (s32[], s32[]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       n = s32[] get-tuple-element(s), index=1  one = s32[] constant(1)
       i1 = s32[] add(i, one)  n1 = s32[] subtract(n, one)  ROOT t = (s32[], s32[]) tuple(i1, n1) }
ENTRY e { z = s32[] constant(0)  limit = s32[] constant(8)
  init = (s32[], s32[]) tuple(z, limit)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body })");
  EXPECT_FALSE(r.changed);
}

// XLA: WhileLoopConstantSinkingTest.SinkWithSharedBody: the body is cloned
// ("body.sunk") so the other loop's copy keeps reading its own constant.
TEST(WhileLoopConstantSinkingTest, ClonesSharedBodies) {
  PassResult r = RunPass(std::make_unique<WhileLoopConstantSinking>(), R"(
HloModule m
body { s = (f32[2], f32[2]) parameter(0)  a = f32[2] get-tuple-element(s), index=0
       b = f32[2] get-tuple-element(s), index=1  x = f32[2] add(a, b)  ROOT t = (f32[2], f32[2]) tuple(x, b) }
cond { s = (f32[2], f32[2]) parameter(0)  ROOT r = pred[] constant(false) }
ENTRY e { p = f32[2] parameter(0)  c0 = f32[2] constant({1, 2})  c1 = f32[2] constant({2, 1})
  i0 = (f32[2], f32[2]) tuple(p, c0)  w0 = (f32[2], f32[2]) while(i0), condition=cond, body=body
  i1 = (f32[2], f32[2]) tuple(p, c1)  w1 = (f32[2], f32[2]) while(i1), condition=cond, body=body
  ROOT t = ((f32[2], f32[2]), (f32[2], f32[2])) tuple(w0, w1) })");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%body.sunk", "constant({1, 2})", "%body.sunk", "constant({2, 1})",
                               "body=%body.sunk", "body=%body.sunk"}))
      << r.text;
}

// XLA: WhileLoopConstantSinkingTest.SinkBroadcastOfConstant (option).
TEST(WhileLoopConstantSinkingTest, SinksBroadcastOfConstantOnlyWhenAsked) {
  const std::string hlo = R"(
HloModule m
body { s = (f32[4], f32[4]) parameter(0)  a = f32[4] get-tuple-element(s), index=0
       b = f32[4] get-tuple-element(s), index=1  x = f32[4] add(a, b)  ROOT t = (f32[4], f32[4]) tuple(x, b) }
cond { s = (f32[4], f32[4]) parameter(0)  ROOT r = pred[] constant(false) }
ENTRY e { p = f32[4] parameter(0)  c = f32[] constant(3)  b = f32[4] broadcast(c), dimensions={}
  i = (f32[4], f32[4]) tuple(p, b)  ROOT w = (f32[4], f32[4]) while(i), condition=cond, body=body })";
  EXPECT_FALSE(RunPass(std::make_unique<WhileLoopConstantSinking>(), hlo).changed);
  PassResult r = RunPass(
      std::make_unique<WhileLoopConstantSinking>(WhileLoopConstantSinkingOptions{.sink_broadcast_of_constants = true}),
      hlo);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%body.sunk", "broadcast(%c.sunk)"})) << r.text;
}

}  // namespace
}  // namespace passlab
