#include "passes/simplifiers/hlo_cse.h"
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


// XLA: HloCseTest.WhileLoopsIdenticalConditionsAndBodiesSameInput: called
// computations count as equal when they are structurally identical.
TEST(HloCseTest, MergesLoopsWithIdenticalComputations) {
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
HloModule m
body { p = (f32[], f32[]) parameter(0)  a = f32[] get-tuple-element(p), index=0
       b = f32[] get-tuple-element(p), index=1  s = f32[] add(a, b)  ROOT t = (f32[], f32[]) tuple(a, s) }
c0 { p = (f32[], f32[]) parameter(0)  ROOT k = pred[] constant(false) }
c1 { p = (f32[], f32[]) parameter(0)  ROOT k = pred[] constant(false) }
ENTRY e { x = f32[] constant(1)  y = f32[] constant(2)  t = (f32[], f32[]) tuple(x, y)
  w0 = (f32[], f32[]) while(t), condition=c0, body=body
  w1 = (f32[], f32[]) while(t), condition=c1, body=body
  ROOT r = ((f32[], f32[]), (f32[], f32[])) tuple(w0, w1) })");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"tuple(%w0, %w0)", "NOT:%w1 ="})) << r.text;
}

// XLA: CseKey and IdenticalIgnoringCommutativeOperandOrder: add(a, b) and
// add(b, a) are one value; subtract is not commutative.
TEST(HloCseTest, MergesCommutedOperands) {
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] add(a, b)
  y = f32[4] add(b, a)
  s = f32[4] subtract(a, b)
  d = f32[4] subtract(b, a)
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(x, y, s, d)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"tuple(%x, %x, %s, %d)"})) << r.text;
}

// XLA: HloCseTest.DoNotCombineOpsWithDifferentSdyShardingFrontendAttrs,
// CombineOpsWithSameSdyShardingFrontendAttrs and Domain.
TEST(HloCseTest, RespectsSdyShardingAttributesAndMergesDomains) {
  const std::string sdy = R"(
ENTRY e {
  c = s32[1] parameter(0)
  a = s32[1] custom-call(c), custom_call_target="Sharding", frontend_attributes={xla.sdy.sharding="A"}
  b = s32[1] custom-call(c), custom_call_target="Sharding", frontend_attributes={xla.sdy.sharding="SAME"}
  ROOT t = (s32[1], s32[1]) tuple(a, b)
})";
  EXPECT_FALSE(RunPass(std::make_unique<HloCSE>(), sdy).changed);
  std::string same = sdy;
  same.replace(same.find("\"A\""), 3, "\"SAME\"");
  EXPECT_TRUE(RunPass(std::make_unique<HloCSE>(), same).changed);
  PassResult r = RunPass(std::make_unique<HloCSE>(HloCseOptions{.is_layout_sensitive = false}), R"(
ENTRY e {
  p = f32[] parameter(0), sharding={maximal device=0}
  d0 = f32[] domain(p), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
  d1 = f32[] domain(p), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
  d2 = f32[] domain(p), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=2}}
  ROOT t = (f32[], f32[], f32[]) tuple(d0, d1, d2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"tuple(%d0, %d0, %d2)"})) << r.text;
}

// XLA: HloCseTest.IdenticalInstructionsDifferentLayoutsInsensitive.
TEST(HloCseTest, LayoutInsensitiveMergesAcrossLayouts) {
  PassResult r = RunPass(std::make_unique<HloCSE>(HloCseOptions{.is_layout_sensitive = false}), R"(
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c1 = f32[2,3]{1,0} negate(p)
  c2 = f32[2,3]{0,1} negate(p)
  ROOT t = (f32[2,3]{1,0}, f32[2,3]{0,1}) tuple(c1, c2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"tuple(%c1, %c1)"})) << r.text;
}

// XLA: HloCseTest.Iota: iotas along different dimensions are different
// operands (found by the GPU pipeline's sort expansion).
TEST(HloCseTest, KeepsIotasOfDifferentDimensionsApart) {
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
ENTRY e {
  i0 = s32[2,3] iota(), iota_dimension=0
  i1 = s32[2,3] iota(), iota_dimension=1
  i2 = s32[2,3] iota(), iota_dimension=1
  c = s32[2,3] parameter(0)
  a = s32[2,3] multiply(i0, c)
  b = s32[2,3] multiply(i1, c)
  d = s32[2,3] multiply(i2, c)
  ROOT t = (s32[2,3], s32[2,3], s32[2,3]) tuple(a, b, d)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"tuple(%a, %b, %b)"})) << r.text;
}

}  // namespace
}  // namespace passlab

namespace passlab {
namespace {

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
