// SimplifyFPConversions follows XLA's
// xla/hlo/transforms/simplifiers/simplify_fp_conversions_test.cc
// (DoesNotChangeSingleConvert, SimplifiesF32ToBF16ToF32,
// SimplifiesF64ToF16ToF32ToBF16). Collapsing a lossy round trip changes
// values (XLA allows it under xla_allow_excess_precision), so those ports
// run the pass without RunPass's before/after value check; the
// evaluator-checked cases below use chains whose intermediate types hold
// the input exactly.
#include "passes/simplifiers/simplify_fp_conversions.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

// Runs the pass alone (no value check) and returns the module.
std::unique_ptr<HloModule> RunUnchecked(const std::string& hlo, bool* changed) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(hlo, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  HloPassPipeline pipeline("test");
  pipeline.AddPass<SimplifyFPConversions>();
  absl::StatusOr<bool> c = pipeline.Run(**m);
  EXPECT_TRUE(c.ok()) << c.status().message();
  *changed = c.ok() && *c;
  EXPECT_TRUE(VerifyModule(**m).ok());
  return std::move(*m);
}

std::string Text(const HloModule& m) {
  PrintOptions options;
  options.print_metadata = false;
  options.print_operand_shape = false;
  return PrintModule(m, options);
}

// XLA: DoesNotChangeSingleConvert.
TEST(SimplifyFPConversionsTest, KeepsSingleConvert) {
  PassResult r = RunPass(std::make_unique<SimplifyFPConversions>(), R"(
HloModule test
ENTRY entry {
  p0 = f32[2,3] parameter(0)
  c0 = bf16[2,3] convert(p0)
  ROOT ret = (bf16[2,3]) tuple(c0)
})");
  EXPECT_FALSE(r.changed);
}

// XLA: SimplifiesF32ToBF16ToF32. The result is the parameter itself, more
// precise than the rounded round trip.
TEST(SimplifyFPConversionsTest, RemovesLossyF32ToBF16ToF32RoundTrip) {
  const std::string hlo = R"(
HloModule test
ENTRY entry {
  p0 = f32[2,3] parameter(0)
  c0 = bf16[2,3] convert(p0)
  c1 = f32[2,3] convert(c0)
  ROOT ret = (f32[2,3]) tuple(c1)
})";
  bool changed = false;
  std::unique_ptr<HloModule> m = RunUnchecked(hlo, &changed);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(changed);
  EXPECT_TRUE(Matches(Text(*m), {"ROOT %ret = (f32[2,3]{1,0}) tuple(%p0)", "NOT:convert("})) << Text(*m);
  // The values change: 1 + 2^-10 is not a bf16, and now survives.
  Literal arg = Literal::FromDoubles(Shape(PrimitiveType::kF32, {2, 3}), {1 + 1.0 / 1024, 2, 3, 4, 5, 6});
  std::vector<Literal> args;
  args.push_back(std::move(arg));
  auto original = ParseHloModule(hlo, "test.hlo");
  ASSERT_TRUE(original.ok());
  absl::StatusOr<Literal> before = HloEvaluator().Evaluate(**original, args);
  absl::StatusOr<Literal> after = HloEvaluator().Evaluate(*m, args);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(before->tuple_elements()[0].GetDouble(0), 1.0);
  EXPECT_EQ(after->tuple_elements()[0].GetDouble(0), 1 + 1.0 / 1024);
}

// XLA: SimplifiesF64ToF16ToF32ToBF16: one convert from the chain's input.
TEST(SimplifyFPConversionsTest, CollapsesF64ToF16ToF32ToBF16) {
  bool changed = false;
  std::unique_ptr<HloModule> m = RunUnchecked(R"(
HloModule test
ENTRY entry {
  p0 = f64[2,3] parameter(0)
  c0 = f16[2,3] convert(p0)
  c1 = f32[2,3] convert(c0)
  c2 = bf16[2,3] convert(c1)
  ROOT ret = (bf16[2,3]) tuple(c2)
})", &changed);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(changed);
  const HloInstruction* root = m->entry_computation()->root_instruction();
  const HloInstruction* c = root->operand(0);
  EXPECT_EQ(c->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(c->shape().element_type(), PrimitiveType::kBF16);
  EXPECT_EQ(c->operand(0)->opcode(), HloOpcode::kParameter);
  EXPECT_EQ(m->entry_computation()->instruction_count(), 3) << Text(*m);
}

TEST(SimplifyFPConversionsTest, RemovesExactBF16ToF32ToBF16RoundTrip) {
  PassResult r = RunPass(std::make_unique<SimplifyFPConversions>(), R"(
HloModule test
ENTRY entry {
  p0 = bf16[4,8] parameter(0)
  c0 = f32[4,8] convert(p0)
  c1 = bf16[4,8] convert(c0)
  ROOT n = bf16[4,8] negate(c1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT %n = bf16[4,8]{1,0} negate(%p0)", "NOT:convert("})) << r.text;
}

TEST(SimplifyFPConversionsTest, CollapsesWideningChainToOneConvert) {
  // bf16 -> f32 -> f64 -> f16: every intermediate holds a bf16 exactly, so
  // one bf16 -> f16 convert rounds the same way.
  PassResult r = RunPass(std::make_unique<SimplifyFPConversions>(), R"(
HloModule test
ENTRY entry {
  p0 = bf16[16] parameter(0)
  c0 = f32[16] convert(p0)
  c1 = f64[16] convert(c0)
  ROOT c2 = f16[16] convert(c1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT %", "f16[16]{0} convert(%p0)", "NOT:f32[16]", "NOT:f64[16]"})) << r.text;
}

TEST(SimplifyFPConversionsTest, CollapsesChainFromIntegerInput) {
  // Only the converts' results must be floats: s8 -> f32 -> f16 becomes
  // s8 -> f16 (exact either way for s8).
  PassResult r = RunPass(std::make_unique<SimplifyFPConversions>(), R"(
HloModule test
ENTRY entry {
  p0 = s8[8] parameter(0)
  c0 = f32[8] convert(p0)
  ROOT c1 = f16[8] convert(c0)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %", "f16[8]{0} convert(%p0)"})) << r.text;
}

TEST(SimplifyFPConversionsTest, KeepsChainThroughIntegerConvert) {
  // f32 -> s32 -> f32 truncates; an integer convert ends the chain.
  PassResult r = RunPass(std::make_unique<SimplifyFPConversions>(), R"(
HloModule test
ENTRY entry {
  p0 = f32[8] parameter(0)
  c0 = s32[8] convert(p0)
  ROOT c1 = f32[8] convert(c0)
})");
  EXPECT_FALSE(r.changed);
}

TEST(SimplifyFPConversionsTest, KeepsConvertsSeparatedByOtherOps) {
  PassResult r = RunPass(std::make_unique<SimplifyFPConversions>(), R"(
HloModule test
ENTRY entry {
  p0 = f32[8] parameter(0)
  c0 = f64[8] convert(p0)
  n = f64[8] negate(c0)
  ROOT c1 = f32[8] convert(n)
})");
  EXPECT_FALSE(r.changed);
}

TEST(SimplifyFPConversionsTest, EdgeCaseSharedIntermediateStaysForOtherUsers) {
  // c0 feeds the chain and an add: the chain collapses, c0 stays.
  PassResult r = RunPass(std::make_unique<SimplifyFPConversions>(), R"(
HloModule test
ENTRY entry {
  p0 = f32[8] parameter(0)
  c0 = f64[8] convert(p0)
  c1 = f32[8] convert(c0)
  a = f64[8] add(c0, c0)
  ROOT t = (f32[8], f64[8]) tuple(c1, a)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%c0 = f64[8]{0} convert(%p0)", "tuple(%p0, %a)"})) << r.text;
}

TEST(SimplifyFPConversionsTest, EdgeCaseRewritesInsideFusedComputations) {
  PassResult r = RunPass(std::make_unique<SimplifyFPConversions>(), R"(
HloModule test
fused {
  fp = bf16[8] parameter(0)
  f0 = f32[8] convert(fp)
  f1 = bf16[8] convert(f0)
  ROOT fn = bf16[8] negate(f1)
}
ENTRY entry {
  p0 = bf16[8] parameter(0)
  ROOT f = bf16[8] fusion(p0), kind=kLoop, calls=fused
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT %fn = bf16[8]{0} negate(%fp)"})) << r.text;
}

}  // namespace
}  // namespace passlab
