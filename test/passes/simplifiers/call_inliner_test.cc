#include "passes/simplifiers/call_inliner.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

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
