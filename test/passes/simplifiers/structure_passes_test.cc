#include "passes/simplifiers/conditional_simplifier.h"
#include "passes/simplifiers/flatten_call_graph.h"
#include "passes/simplifiers/transpose_folding.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(TransposeFoldingTest, FoldsIntoDotAndConvolution) {
  PassResult r = RunPass(std::make_unique<TransposeFolding>(), R"(
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[4,3] parameter(1)
  at = f32[2,3] transpose(a), dimensions={1,0}
  bt = f32[3,4] transpose(b), dimensions={1,0}
  d = f32[2,4] dot(at, bt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[1,4,4,2] parameter(2)
  k = f32[2,3,3,5] parameter(3)
  kt = f32[3,3,2,5] transpose(k), dimensions={1,2,0,3}
  c = f32[1,4,4,5] convolution(x, kt), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[2,4], f32[1,4,4,5]) tuple(d, c)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={1}",
                               "convolution(%x, %k)", "dim_labels=b01f_i01o->b01f", "NOT:transpose("}))
      << r.text;
}

TEST(TransposeFoldingTest, KeepsTransposesThatReorderFreeDims) {
  PassResult r = RunPass(std::make_unique<TransposeFolding>(), R"(
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[4,5] parameter(1)
  at = f32[3,2,4] transpose(a), dimensions={1,0,2}
  ROOT d = f32[3,2,5] dot(at, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
})");
  EXPECT_FALSE(r.changed);
}

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

TEST(FlattenCallGraphTest, ClonesSharedBodies) {
  PassResult r = RunPass(std::make_unique<FlattenCallGraph>(), R"(
HloModule m
f { x = f32[] parameter(0)  ROOT n = f32[] negate(x) }
ENTRY e {
  p = f32[] parameter(0)
  a = f32[] call(p), to_apply=f
  ROOT b = f32[] call(a), to_apply=f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%f.clone", "to_apply=%f.clone"})) << r.text;
}

// XLA's FlattenCallGraph gives every caller its own copy, reducers included
// (xla/hlo/transforms/simplifiers/flatten_call_graph.cc).
TEST(FlattenCallGraphTest, ClonesSharedReducersToo) {
  PassResult r = RunPass(std::make_unique<FlattenCallGraph>(), R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  a = f32[] reduce(p, z), dimensions={0}, to_apply=add
  b = f32[] reduce(p, z), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[]) tuple(a, b)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"to_apply=%add", "to_apply=%add.clone"})) << r.text;
}

// XLA: FlattenCallGraphTest.SkipCloningForCalls_NoCloningAllCallersAreKCalls
// and SkipCloningForCalls_MixedCallAndWhileCallers.
TEST(FlattenCallGraphTest, SkipCloningForCallsKeepsCallOnlyComputationsShared) {
  const std::string calls_only = R"(
HloModule m
f { x = f32[] parameter(0)  ROOT n = f32[] negate(x) }
ENTRY e {
  p = f32[] parameter(0)
  a = f32[] call(p), to_apply=f
  ROOT b = f32[] call(a), to_apply=f
})";
  EXPECT_FALSE(RunPass(std::make_unique<FlattenCallGraph>(FlattenCallGraphOptions{.skip_cloning_for_calls = true}),
                       calls_only)
                   .changed);
  PassResult r = RunPass(std::make_unique<FlattenCallGraph>(FlattenCallGraphOptions{.skip_cloning_for_calls = true}),
                         R"(
HloModule m
f { x = f32[] parameter(0)  ROOT n = f32[] negate(x) }
c { x = f32[] parameter(0)  z = f32[] constant(0)  ROOT lt = pred[] compare(x, z), direction=LT }
ENTRY e {
  p = f32[] parameter(0)
  a = f32[] call(p), to_apply=f
  ROOT w = f32[] while(a), condition=c, body=f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%f.clone", "body=%f.clone"})) << r.text;
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

#include "passes/simplifiers/sort_simplifier.h"

namespace passlab {
namespace {

const char* kSortModule = R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  e = f32[] parameter(4)
  f = f32[] parameter(5)
  ROOT l = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[5] parameter(0)
  v = s32[5] iota(), iota_dimension=0
  w = f32[5] parameter(1)
  s = (f32[5], s32[5], f32[5]) sort(k, v, w), dimensions={0}, to_apply=lt
  ROOT g = s32[5] get-tuple-element(s), index=USED
})";

TEST(SortSimplifierTest, DropsUnusedOperands) {
  std::string text = kSortModule;
  text.replace(text.find("USED"), 4, "1");
  PassResult r = RunPass(std::make_unique<SortSimplifier>(), text);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[5]{0}, s32[5]{0}) sort(%k, %v)", "NOT:sort(%k, %v, %w)"})) << r.text;
}

TEST(SortSimplifierTest, KeepsOperandsTheComparatorReads) {
  // Only the key (read by the comparator) is used: nothing to drop but w... and
  // v, so the sort narrows to the key alone, returning an array.
  std::string text = kSortModule;
  text.replace(text.find("s32[5] get-tuple-element(s), index=USED"), 39, "f32[5] get-tuple-element(s), index=0");
  PassResult r = RunPass(std::make_unique<SortSimplifier>(), text);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %sort = f32[5]{0} sort(%k)"})) << r.text;
}

TEST(SortSimplifierTest, EdgeCaseAllOutputsUsed) {
  PassResult r = RunPass(std::make_unique<SortSimplifier>(), R"(
HloModule m
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT l = pred[] compare(a, b), direction=LT }
ENTRY e {
  k = f32[5] parameter(0)
  ROOT s = f32[5] sort(k), dimensions={0}, to_apply=lt
})");
  EXPECT_FALSE(r.changed);
}

}  // namespace
}  // namespace passlab

#include "passes/simplifiers/while_loop_simplifier.h"

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

}  // namespace
}  // namespace passlab

#include "passes/simplifiers/while_loop_constant_sinking.h"

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

}  // namespace
}  // namespace passlab

namespace passlab {
namespace {

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
