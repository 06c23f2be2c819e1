#include "passes/simplifiers/call_inliner.h"
#include "passes/simplifiers/tuple_simplifier.h"
#include "passes/simplifiers/zero_sized_hlo_elimination.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(TupleSimplifierTest, FoldsGteOfTupleAndTupleOfGtes) {
  PassResult r = RunPass(std::make_unique<TupleSimplifier>(), R"(
ENTRY e {
  p = (f32[2], s32[]) parameter(0)
  a = f32[2] parameter(1)
  t = (f32[2], f32[2]) tuple(a, a)
  g = f32[2] get-tuple-element(t), index=1
  g0 = f32[2] get-tuple-element(p), index=0
  g1 = s32[] get-tuple-element(p), index=1
  re = (f32[2], s32[]) tuple(g0, g1)
  ROOT out = ((f32[2], s32[]), f32[2]) tuple(re, g)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %out = ((f32[2]{0}, s32[]), f32[2]{0}) tuple(%p, %a)"}));
}

TEST(TupleSimplifierTest, KeepsPartialOrReorderedTuples) {
  PassResult r = RunPass(std::make_unique<TupleSimplifier>(), R"(
ENTRY e {
  p = (f32[2], f32[2]) parameter(0)
  g0 = f32[2] get-tuple-element(p), index=0
  g1 = f32[2] get-tuple-element(p), index=1
  ROOT swapped = (f32[2], f32[2]) tuple(g1, g0)
})");
  EXPECT_FALSE(r.changed);
}

TEST(TupleSimplifierTest, EdgeCaseEmptyTupleAndNesting) {
  PassResult r = RunPass(std::make_unique<TupleSimplifier>(), R"(
ENTRY e {
  e0 = () tuple()
  a = f32[] parameter(0)
  inner = (f32[]) tuple(a)
  outer = ((f32[]), ()) tuple(inner, e0)
  g = (f32[]) get-tuple-element(outer), index=0
  ROOT x = f32[] get-tuple-element(g), index=0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %a = f32[] parameter(0)"}));
}

TEST(ZeroSizedHloEliminationTest, ReplacesEmptyArrays) {
  PassResult r = RunPass(std::make_unique<ZeroSizedHloElimination>(), R"(
ENTRY e {
  p = f32[0,4] parameter(0)
  n = f32[0,4] negate(p)
  ROOT a = f32[0,4] add(n, n)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"constant({  })", "NOT:negate"})) << r.text;
}

TEST(ZeroSizedHloEliminationTest, KeepsNonEmptyAndSideEffects) {
  PassResult r = RunPass(std::make_unique<ZeroSizedHloElimination>(), R"(
ENTRY e {
  p = f32[0] parameter(0)
  c = f32[0] custom-call(p), custom_call_target="x", custom_call_has_side_effect=true
  q = f32[3] parameter(1)
  ROOT t = (f32[0], f32[3]) tuple(c, q)
})");
  EXPECT_FALSE(r.changed);
}

TEST(CallInlinerTest, InlinesNestedCalls) {
  PassResult r = RunPass(std::make_unique<CallInliner>(), R"(
HloModule m
inner {
  x = f32[] parameter(0)
  ROOT e = f32[] exponential(x)
}
outer {
  y = f32[] parameter(0)
  c = f32[] call(y), to_apply=inner
  ROOT n = f32[] negate(c)
}
ENTRY main {
  p = f32[] parameter(0)
  ROOT r = f32[] call(p), to_apply=outer
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ENTRY %main", "exponential(%p)", "negate(", "NOT:call(", "NOT:inner",
                               "NOT:outer"}));
}

TEST(CallInlinerTest, NothingToInline) {
  PassResult r = RunPass(std::make_unique<CallInliner>(), "ENTRY e { ROOT p = f32[] parameter(0) }");
  EXPECT_FALSE(r.changed);
}

TEST(CallInlinerTest, EdgeCaseCalleeUsedTwiceAndNameClash) {
  PassResult r = RunPass(std::make_unique<CallInliner>(), R"(
HloModule m
f {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
ENTRY main {
  p = f32[] parameter(0)
  n = f32[] call(p), to_apply=f
  ROOT m = f32[] call(n), to_apply=f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%n.1 = f32[] negate(%p)", "ROOT %n.2 = f32[] negate(%n.1)", "NOT:call("}));
}


// XLA: CallInlinerTest.DontInlineCallWithAttributeInlineableFalse and
// UseShardyMhloToHloShmapBodyNotInlined.
TEST(CallInlinerTest, KeepsCallsMarkedLateOrShardMapBodies) {
  PassResult late = RunPass(std::make_unique<CallInliner>(), R"(
HloModule m
f { x = f32[] parameter(0)  ROOT n = f32[] negate(x) }
ENTRY e { p = f32[] parameter(0)  ROOT c = f32[] call(p), to_apply=f, frontend_attributes={inlineable="false"} })");
  EXPECT_FALSE(late.changed);
  const std::string shmap = R"(
HloModule m
prefix_shmap_body_suffix { x = f32[] parameter(0)  ROOT n = f32[] negate(x) }
ENTRY e { p = f32[] parameter(0)  ROOT c = f32[] call(p), to_apply=prefix_shmap_body_suffix })";
  EXPECT_FALSE(RunPass(std::make_unique<CallInliner>(CallInlinerOptions{.use_shardy_partitioner = true}), shmap).changed);
  EXPECT_TRUE(RunPass(std::make_unique<CallInliner>(), shmap).changed);
}

// XLA: CallInlinerTest.InlineSingleUseCalleesOnly.
TEST(CallInlinerTest, SingleCallSiteInlinesOnlyComputationsCalledOnce) {
  PassResult r = RunPass(std::make_unique<CallInliner>(CallInlinerOptions{.single_call_site = true}), R"(
HloModule m
once { x = f32[] parameter(0)  ROOT n = f32[] negate(x) }
twice { x = f32[] parameter(0)  ROOT e = f32[] exponential(x) }
ENTRY e { p = f32[] parameter(0)  a = f32[] call(p), to_apply=once  b = f32[] call(a), to_apply=twice
  ROOT c = f32[] call(b), to_apply=twice })");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"negate(%p)", "call(%n", "to_apply=%twice", "to_apply=%twice", "NOT:to_apply=%once"})) << r.text;
}

// XLA: CallInlinerTest.InliningMergesOpMetadataRecursively: the call's
// op_name prefixes the inlined instructions' op_names, also inside loops.
TEST(CallInlinerTest, PrefixesOpNamesWithTheCallsOpName) {
  PassResult r = RunPass(std::make_unique<CallInliner>(), R"(
HloModule m
cond { x = f32[4] parameter(0)  ROOT c = pred[] constant(false), metadata={op_name="while/cond"} }
body { x = f32[4] parameter(0)  ROOT n = f32[4] negate(x), metadata={op_name="while/body"} }
callee { x = f32[4] parameter(0)  ROOT w = f32[4] while(x), condition=cond, body=body, metadata={op_name="while"} }
ENTRY e { p = f32[4] parameter(0)  ROOT r = f32[4] call(p), to_apply=callee, metadata={op_name="x"} })");
  EXPECT_TRUE(r.changed);
  PrintOptions options;
  std::string text = PrintModule(*r.module, options);
  EXPECT_TRUE(Matches(text, {"op_name=\"x/while/cond\"", "op_name=\"x/while/body\"", "op_name=\"x/while\""})) << text;
}

}  // namespace
}  // namespace passlab

#include "passes/simplifiers/hlo_constant_folding.h"

namespace passlab {
namespace {

TEST(ConstantFoldingTest, FoldsConstantExpressions) {
  PassResult r = RunPass(std::make_unique<HloConstantFolding>(), R"(
ENTRY e {
  p = s32[2] parameter(0)
  a = s32[2] constant({1, 2})
  b = s32[2] constant({10, 20})
  s = s32[2] add(a, b)
  n = s32[2] negate(s)
  ROOT m = s32[2] multiply(p, n)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"constant({-11, -22})", "ROOT %m = s32[2]{0} multiply(%p, %constant", "NOT:add("}))
      << r.text;
}

TEST(ConstantFoldingTest, LeavesParametersAndBroadcastsAlone) {
  PassResult r = RunPass(std::make_unique<HloConstantFolding>(), R"(
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(2)
  b = f32[1000,1000] broadcast(c), dimensions={}
  n = f32[4] negate(p)
  ROOT t = (f32[1000,1000], f32[4]) tuple(b, n)
})");
  EXPECT_FALSE(r.changed);
}

TEST(ConstantFoldingTest, EdgeCaseTuplesAndIntegerEdges) {
  PassResult r = RunPass(std::make_unique<HloConstantFolding>(), R"(
ENTRY e {
  a = s32[] constant(-2147483648)
  b = s32[] constant(-1)
  d = s32[] divide(a, b)
  z = s32[] constant(0)
  q = s32[] divide(b, z)
  ROOT t = (s32[], s32[]) tuple(d, q)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"constant(-2147483648)", "constant(-1)", "tuple("})) << r.text;
}

}  // namespace
}  // namespace passlab
