#include "passes/simplifiers/hlo_dce.h"

#include "core/verify/hlo_verifier.h"
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

// XLA's hlo_dce_test.cc, HloDceTest.RemoveDeadEntryParametersAndLayout: with
// remove_dead_parameters_from_entry_computation the unused entry parameter
// goes, the later one is renumbered and the entry layout loses its entry;
// the values are those of the original with that argument left out.
TEST(HloDceTest, RemovesDeadEntryParametersAndTheirLayouts) {
  const char* text = R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0}, f32[4,5]{1,0}, f32[2,3]{1,0})->f32[2,3]{1,0}}
ENTRY e {
  p0 = f32[2,3]{1,0} parameter(0)
  p1 = f32[4,5]{1,0} parameter(1)
  p2 = f32[2,3]{1,0} parameter(2)
  ROOT add = f32[2,3]{1,0} add(p0, p2)
})";
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 7);
  absl::StatusOr<Literal> before = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(before.ok());
  HloDceOptions options;
  options.remove_dead_parameters_from_entry_computation = true;
  absl::StatusOr<bool> changed = HloDCE(options).Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  ASSERT_EQ((*m)->entry_computation()->num_parameters(), 2);
  EXPECT_EQ((*m)->entry_computation()->parameter_instruction(1)->name(), "p2");
  EXPECT_EQ((*m)->config().entry_computation_layout->ToString(), "(f32[2,3]{1,0}, f32[2,3]{1,0})->f32[2,3]{1,0}");
  EXPECT_TRUE(VerifyModule(**m).ok());
  std::vector<Literal> kept;
  kept.push_back(args[0]);
  kept.push_back(args[2]);
  absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, kept);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(CompareLiterals(*before, *after, {}).ok());
  // The default (XLA's) keeps entry parameters; aliased modules keep them too.
  auto m2 = ParseHloModule(text);
  ASSERT_TRUE(m2.ok());
  EXPECT_FALSE(*HloDCE().Run(**m2));
  auto m3 = ParseHloModule(std::string(text).replace(std::string(text).find("HloModule m,"), 12,
                                                     "HloModule m, input_output_alias={ {}: (0, {}, may-alias) },"));
  ASSERT_TRUE(m3.ok()) << m3.status().message();
  EXPECT_FALSE(*HloDCE(options).Run(**m3));
}

HloDceOptions WithCallAnalysis() {
  HloDceOptions o;
  o.use_call_analysis = true;
  return o;
}

// XLA's hlo_dce_test.cc, HloDceTest.UnusedAsyncParameter: with
// use_call_analysis the called computation's unused parameter goes, and so
// do the wrapped computation's parameter, the start's operand and its shape;
// the entry keeps both parameters.
TEST(HloDceTest, RemovesUnusedParameterThroughAsyncCall) {
  const char* text = R"(HloModule main
ENTRY main {
  arg.0 = s32[] parameter(0)
  arg.1 = s32[] parameter(1)
  call-start.0 = ((s32[], s32[]), (s32[]), s32[]) call-start(arg.0, arg.1), to_apply={
    arg.0 = s32[] parameter(0)
    arg.1 = s32[] parameter(1)
    ROOT tuple.0 = (s32[]) tuple(arg.0)
  }, async_execution_thread="thread"
  ROOT call-done.0 = (s32[]) call-done(call-start.0)
})";
  PassResult r = RunPass(std::make_unique<HloDCE>(WithCallAnalysis()), text);
  ASSERT_TRUE(r.changed) << r.text;
  EXPECT_TRUE(VerifyModule(*r.module).ok()) << r.text;
  HloComputation* entry = r.module->entry_computation();
  EXPECT_EQ(entry->num_parameters(), 2);
  HloInstruction* start = entry->root_instruction()->mutable_operand(0);
  ASSERT_EQ(start->opcode(), HloOpcode::kAsyncStart);
  ASSERT_EQ(start->operand_count(), 1);
  EXPECT_EQ(start->operand(0), entry->parameter_instruction(0));
  EXPECT_EQ(start->shape().tuple_shapes(0).tuple_shapes_size(), 1);
  EXPECT_EQ(start->async_wrapped_computation()->num_parameters(), 1);
  EXPECT_EQ(start->async_wrapped_instruction()->called_computations()[0]->num_parameters(), 1);
  // Without call analysis (XLA's default) the parameters stay.
  EXPECT_FALSE(RunPass(std::make_unique<HloDCE>(), text).changed);
}

// XLA's hlo_dce_test.cc, HloDceTest.UnusedCalledParameter: the call loses
// the operand for the callee's unused parameter; an operand left unused in
// the caller goes too, but a callee whose caller is a while keeps its
// parameter (the while cannot drop an operand).
TEST(HloDceTest, RemovesUnusedCalledParameterAndDeadOperand) {
  PassResult r = RunPass(std::make_unique<HloDCE>(WithCallAnalysis()), R"(HloModule main
callee {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT t = (s32[]) tuple(a)
}
ENTRY main {
  arg.0 = s32[] parameter(0)
  arg.1 = s32[] parameter(1)
  neg = s32[] negate(arg.1)
  ROOT call.0 = (s32[]) call(arg.0, neg), to_apply=callee
})");
  ASSERT_TRUE(r.changed) << r.text;
  EXPECT_TRUE(Matches(r.text, {"callee (a: s32[]) -> (s32[])", "NOT:negate(", "call(%arg.0), to_apply=%callee"}))
      << r.text;
  PassResult kept = RunPass(std::make_unique<HloDCE>(WithCallAnalysis()), R"(HloModule main
cond {
  p = (s32[], s32[]) parameter(0)
  ROOT c = pred[] constant(false)
}
body {
  p = (s32[], s32[]) parameter(0)
  one = s32[] constant(1)
  two = s32[] constant(2)
  ROOT p2 = (s32[], s32[]) tuple(one, two)
}
ENTRY main {
  arg.0 = s32[] parameter(0)
  t = (s32[], s32[]) tuple(arg.0, arg.0)
  ROOT w = (s32[], s32[]) while(t), condition=cond, body=body
})");
  EXPECT_TRUE(Matches(kept.text, {"cond (p: (s32[], s32[])) -> pred[]", "body (p: (s32[], s32[]))"})) << kept.text;
}

}  // namespace
}  // namespace passlab
