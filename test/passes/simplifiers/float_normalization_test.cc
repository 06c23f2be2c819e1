#include "core/verify/hlo_verifier.h"
#include "passes/simplifiers/float_normalization.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

TEST(FloatNormalizationTest, NameFollowsXla) {
  EXPECT_EQ(FloatNormalization().name(), "float-normalization-bf16");
  EXPECT_EQ(FloatNormalization({.support = std::make_shared<FloatSupport>(PrimitiveType::kF16)}).name(),
            "float-normalization-f16");
}

TEST(FloatNormalizationTest, UnsupportedOpComputesInF32) {
  PassResult r = RunPass(std::make_unique<FloatNormalization>(), R"(
ENTRY e {
  p = bf16[8] parameter(0)
  ROOT t = bf16[8] tanh(p)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[8]{0} convert(%p)", "%t = f32[8]{0} tanh(", "ROOT %convert", "bf16[8]{0} convert(%t)"}))
      << r.text;
}

TEST(FloatNormalizationTest, KeepsSupportedBf16Ops) {
  // add and multiply run in bf16 on the GPU-like table; reshape and
  // broadcast move data.
  EXPECT_FALSE(RunPass(std::make_unique<FloatNormalization>(), R"(
ENTRY e {
  a = bf16[2,4] parameter(0)
  b = bf16[2,4] parameter(1)
  m = bf16[2,4] multiply(a, b)
  s = bf16[2,4] add(m, a)
  ROOT r = bf16[8] reshape(s)
})").changed);
}

constexpr char kMixed[] = R"(
ENTRY e {
  a = bf16[4] parameter(0)
  b = f32[4] parameter(1)
  t = bf16[4] tanh(a)
  w = f32[4] convert(t)
  c = bf16[4] convert(b)
  d = bf16[4] subtract(t, c)
  ROOT r = (f32[4], bf16[4]) tuple(w, d)
})";

TEST(FloatNormalizationTest, WideningUserKeepsRoundTripWithoutExcessPrecision) {
  // tanh runs in f32 and is rounded back to bf16 for its users; without
  // excess precision the f32 convert still reads the rounded value, and the
  // bf16 subtract (supported on the GPU-like table) is left alone.
  PassResult r = RunPass(std::make_unique<FloatNormalization>(
                             FloatNormalizationOptions{.allow_excess_precision = false}),
                         kMixed);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%t = f32[4]{0} tanh(", "%convert.1 = bf16[4]{0} convert(%t)", "%w = f32[4]{0} convert(%convert.1)",
                               "%d = bf16[4]{0} subtract(%convert.1, %c)"}))
      << r.text;
}

TEST(FloatNormalizationTest, ExcessPrecisionSkipsTheRoundTrip) {
  // With XLA's default the f32 convert of tanh's result reads the f32 tanh
  // directly: more precise, so not value-equal (no RunPass here).
  auto m = ParseHloModule(kMixed, "mixed.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<bool> changed = FloatNormalization().Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  PrintOptions options;
  options.print_metadata = false;
  options.print_operand_shape = false;
  std::string text = PrintModule(**m, options);
  EXPECT_TRUE(Matches(text, {"%t = f32[4]{0} tanh(", "ROOT %r = (f32[4]{0}, bf16[4]{0}) tuple(%t, ", "NOT:%w ="}))
      << text;
  EXPECT_TRUE(VerifyModule(**m).ok());
}

TEST(FloatNormalizationTest, MixedPassThroughBecomesLow) {
  // maximum(bf16, f32 -> bf16 result) is not supported mixed on the base
  // table; max passes its operands through at output precision, so XLA
  // narrows the f32 operand instead of widening everything.
  class MaxSupport : public FloatSupport {
   public:
    bool SupportsLowPrecisionOperand(const HloInstruction& inst, int64_t i) const override {
      return inst.opcode() == HloOpcode::kMaximum || FloatSupport::SupportsLowPrecisionOperand(inst, i);
    }
    bool SupportsLowPrecisionOutput(const HloInstruction& inst) const override {
      return inst.opcode() == HloOpcode::kMaximum || FloatSupport::SupportsLowPrecisionOutput(inst);
    }
  };
  PassResult r = RunPass(std::make_unique<FloatNormalization>(FloatNormalizationOptions{.support = std::make_shared<MaxSupport>()}), R"(
ENTRY e {
  a = bf16[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT m = bf16[4] maximum(a, b)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"bf16[4]{0} convert(%b)", "ROOT %m = bf16[4]{0} maximum(%a, %convert"})) << r.text;
}

TEST(FloatNormalizationTest, EdgeCaseReduceGetsF32Reducer) {
  PassResult r = RunPass(std::make_unique<FloatNormalization>(), R"(
add_bf16 {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
}
ENTRY e {
  p = bf16[4,6] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[4] reduce(p, z), dimensions={1}, to_apply=add_bf16
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%add_bf16_f32 (", "-> f32[]", "%r = f32[4]{0} reduce(",
                               "to_apply=%add_bf16_f32", "ROOT %convert"}))
      << r.text;
}

constexpr char kBf16Dot[] = R"(
ENTRY e {
  a = bf16[2,3] parameter(0)
  b = bf16[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(FloatNormalizationTest, DotWithoutBf16SupportReadsF32) {
  // The base table supports no bf16 arithmetic: the dot's operands widen.
  PassResult r = RunPass(
      std::make_unique<FloatNormalization>(FloatNormalizationOptions{.support = std::make_shared<FloatSupport>()}),
      kBf16Dot);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[2,3]{1,0} convert(%a)", "f32[3,4]{1,0} convert(%b)", "ROOT %d = f32[2,4]"}))
      << r.text;
}

TEST(FloatNormalizationTest, KeepsMixedPrecisionDotOnGpu) {
  EXPECT_FALSE(RunPass(std::make_unique<FloatNormalization>(), kBf16Dot).changed);
}

TEST(FloatNormalizationTest, VariadicSortRunsInF32WithClonedComparator) {
  PassResult r = RunPass(std::make_unique<FloatNormalization>(), R"(
less {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = bf16[16] parameter(0)
  v = s32[16] parameter(1)
  s = (bf16[16], s32[16]) sort(k, v), dimensions={0}, to_apply=less
  ROOT keys = bf16[16] get-tuple-element(s), index=0
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%less_f32 (", "f32[16]{0} convert(%k)", "%s = (f32[16]{0}, s32[16]{0}) sort(",
                               "to_apply=%less_f32", "bf16[16]{0} convert("}))
      << r.text;
}

TEST(FloatNormalizationTest, LeavesF32Modules) {
  EXPECT_FALSE(RunPass(std::make_unique<FloatNormalization>(), R"(
ENTRY e {
  p = f32[8] parameter(0)
  ROOT t = f32[8] tanh(p)
})").changed);
}

}  // namespace
}  // namespace passlab
