// AlgebraicSimplifier's convolution operand swap (enable_conv_operand_swap),
// after XLA's SwapConvolutionOperandsIfBeneficial
// (xla/hlo/transforms/simplifiers/conv_operand_swapper.cc), which XLA's
// AlgebraicSimplifier::HandleConvolution calls, and XLA:GPU's use of it
// (GetAlgebraicSimplifierOptions in xla/service/gpu/gpu_compiler.cc: on in
// the layout-insensitive mode, with ConvRewriter::ConvIsLowerable as
// conv_is_lowerable_callback; off in the others). Every RunPass case also
// checks that the module computes the same values before and after.
#include "core/ir/hlo_computation.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"
#include "passes/simplifiers/algebraic_simplifier.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

AlgebraicSimplifierOptions OneSweep() {
  AlgebraicSimplifierOptions o;
  o.run_to_fixed_point = false;
  return o;
}

PassResult Simplify(const std::string& hlo, AlgebraicSimplifierOptions options = OneSweep()) {
  return RunPass(std::make_unique<AlgebraicSimplifier>(options), hlo);
}

// xla/hlo/transforms/simplifiers/algebraic_simplifier_test.cc SwapConvOperands
// and conv_operand_swapper_test.cc SwapConvOperands, at XLA's sizes (too
// large to evaluate; the scaled copy below checks the values): a 32x32
// reversed window padded 30 over a 3x3 input becomes a 3x3 reversed window
// padded 1 over the 32x32 one, the operands swapped.
TEST(AlgsimpConvOperandSwapTest, SwapConvOperandsAtXlaSizes) {
  auto m = ParseHloModule(R"(HloModule m
ENTRY test {
  a = f32[3,3,160,160] parameter(0)
  b = f32[128,32,32,160] parameter(1)
  ROOT c = f32[128,32,32,160] convolution(a, b), window={size=32x32 pad=30_30x30_30 rhs_reversal=1x1}, dim_labels=01bf_o01i->f01b
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<bool> changed = AlgebraicSimplifier(OneSweep()).Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  const HloInstruction* conv = (*m)->entry_computation()->root_instruction();
  ASSERT_EQ(conv->opcode(), HloOpcode::kConvolution);
  EXPECT_EQ(conv->operand(0)->name(), "b");  // the window was reversed: no reverse
  EXPECT_EQ(conv->operand(1)->name(), "a");
  EXPECT_EQ(conv->window().ToString(), "{size=3x3 pad=1_1x1_1 rhs_reversal=1x1}");
  EXPECT_EQ(conv->attrs().conv_dnums->ToString(), "b01f_01oi->b01f");
}

// The same case scaled down (3x3 input, 6x6 reversed window padded 4).
TEST(AlgsimpConvOperandSwapTest, SwapConvOperandsKeepsValues) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  a = f32[3,3,5,4] parameter(0)
  b = f32[2,6,6,4] parameter(1)
  ROOT c = f32[2,6,6,5] convolution(a, b), window={size=6x6 pad=4_4x4_4 rhs_reversal=1x1}, dim_labels=01bf_o01i->f01b
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %convolution", "f32[2,6,6,5]{3,2,1,0} convolution(%b, %a)",
                               "window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}", "dim_labels=b01f_01oi->b01f",
                               "NOT:reverse("}))
      << r.text;
}

// ResNet's stride-1 3x3 convolution on a 2x2 activation (layer4 at 64x64
// images): the weight, reversed, becomes the input and the activation a 2x2
// kernel; the result's batch and features trade places in the labels.
TEST(AlgsimpConvOperandSwapTest, SwapsResNetConvOnTwoByTwoActivation) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,8,2,2] parameter(0)
  w = f32[6,8,3,3] parameter(1)
  ROOT y = f32[2,6,2,2] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[6,8,3,3]{3,2,1,0} reverse(%w), dimensions={2,3}",
                               "f32[2,6,2,2]{3,2,1,0} convolution(%reverse", ", %x)",
                               "window={size=2x2 rhs_reversal=1x1}, dim_labels=bf01_oi01->fb01"}))
      << r.text;
}

// The kernel no larger than the input: nothing to gain. A filter gradient's
// 2x2 kernel over a 2x2 input padded 1 costs the same either way (4 = 4).
TEST(AlgsimpConvOperandSwapTest, KeepsConvWhenSwapIsNoBetter) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,8,8,8] parameter(0)
  w = f32[6,8,3,3] parameter(1)
  ROOT y = f32[2,6,8,8] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})");
  EXPECT_FALSE(r.changed) << r.text;
  r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,8,2,2] parameter(0)
  dy = f32[2,6,2,2] parameter(1)
  ROOT dw = f32[8,6,3,3] convolution(x, dy), window={size=2x2 pad=1_1x1_1}, dim_labels=fb01_io01->bf01
})");
  EXPECT_FALSE(r.changed) << r.text;
  // A 1-element input padded to a full correlation counts as the kernel's
  // size (3 = 3); padded less, it counts as 1 and the swap pays.
  r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,3,1] parameter(0)
  w = f32[4,3,3] parameter(1)
  ROOT y = f32[2,4,3] convolution(x, w), window={size=3 pad=2_2}, dim_labels=bf0_oi0->bf0
})");
  EXPECT_FALSE(r.changed) << r.text;
  r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,3,1] parameter(0)
  w = f32[4,3,3] parameter(1)
  ROOT y = f32[2,4,1] convolution(x, w), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"window={size=1 pad=-1_-1 rhs_reversal=1}"})) << r.text;
}

// Only ungrouped convolutions (XLA: "Current logic only handles non-grouped
// convolutions").
TEST(AlgsimpConvOperandSwapTest, KeepsGroupedConvolutions) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,8,2,2] parameter(0)
  w = f32[6,4,3,3] parameter(1)
  ROOT y = f32[2,6,2,2] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=2
})");
  EXPECT_FALSE(r.changed) << r.text;
  r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[4,8,2,2] parameter(0)
  w = f32[6,8,3,3] parameter(1)
  ROOT y = f32[2,6,2,2] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, batch_group_count=2
})");
  EXPECT_FALSE(r.changed) << r.text;
}

const char kResNetConv[] = R"(HloModule m
ENTRY test {
  x = f32[2,8,2,2] parameter(0)
  w = f32[6,8,3,3] parameter(1)
  ROOT y = f32[2,6,2,2] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})";

// XLA's SwapConvOperands: only with enable_conv_operand_swap and never when
// layout sensitive; the option is settable as a pass option.
TEST(AlgsimpConvOperandSwapTest, OptionAndLayoutSensitivityTurnItOff) {
  AlgebraicSimplifierOptions off = OneSweep();
  off.enable_conv_operand_swap = false;
  EXPECT_FALSE(Simplify(kResNetConv, off).changed);
  AlgebraicSimplifierOptions layout_sensitive = OneSweep();
  layout_sensitive.is_layout_sensitive = true;
  EXPECT_FALSE(Simplify(kResNetConv, layout_sensitive).changed);

  PassOptionValues values(AlgebraicSimplifier::OptionSpecs());
  EXPECT_TRUE(AlgebraicSimplifier::OptionsFrom(values).enable_conv_operand_swap);  // XLA's default
  ASSERT_TRUE(values.Set("algsimp", "enable_conv_operand_swap", "false").ok());
  absl::StatusOr<std::unique_ptr<HloPassInterface>> pass = CreateRegisteredPass("algsimp", values);
  ASSERT_TRUE(pass.ok());
  EXPECT_FALSE(RunPass(std::move(*pass), kResNetConv).changed);
}

// An unknown conv_is_lowerable_callback is an error naming the option.
TEST(AlgsimpConvOperandSwapTest, UnknownLowerableCallbackIsAnError) {
  auto m = ParseHloModule(kResNetConv);
  ASSERT_TRUE(m.ok());
  AlgebraicSimplifierOptions o;
  o.conv_is_lowerable_callback = "cudnn";
  absl::StatusOr<bool> changed = AlgebraicSimplifier(o).Run(**m);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("conv_is_lowerable_callback"), std::string::npos)
      << changed.status().message();
}

// A pure contraction dimension (kernel as large as the unpadded input) keeps
// its window; the other is swapped and reversed. The result is reversed in
// one of two dimensions, which no form of the GPU conv rewriter takes, so
// with XLA:GPU's callback (ConvRewriter::ConvIsLowerable) the swap is not
// made.
TEST(AlgsimpConvOperandSwapTest, ContractionDimStaysAndCallbackCanRefuse) {
  const std::string hlo = R"(HloModule m
ENTRY test {
  x = f32[2,3,4,2] parameter(0)
  w = f32[5,3,4,3] parameter(1)
  ROOT y = f32[2,5,1,2] convolution(x, w), window={size=4x3 pad=0_0x1_1}, dim_labels=bf01_oi01->bf01
})";
  PassResult r = Simplify(hlo);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"reverse(%w), dimensions={3}", "convolution(%reverse", ", %x)",
                               "window={size=4x2 rhs_reversal=0x1}, dim_labels=bf01_oi01->fb01"}))
      << r.text;
  AlgebraicSimplifierOptions gpu = OneSweep();
  gpu.conv_is_lowerable_callback = "conv-rewriter";
  r = Simplify(hlo, gpu);
  EXPECT_FALSE(r.changed) << r.text;
  // The fully reversed 2-D result is a forward convolution to it.
  EXPECT_TRUE(Simplify(kResNetConv, gpu).changed);
}

// Dilations trade places (the input's base dilation becomes the window's
// dilation and back), the stride stays, the padding keeps the result's
// size; a group dimension (base dilation = kernel size, stride = kernel size
// - 1; here of the input's size, each output one product) stays. The values show each rewrite is the same convolution.
TEST(AlgsimpConvOperandSwapTest, DilationsStridesAndGroupDims) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,3,2] parameter(0)
  w = f32[4,3,5] parameter(1)
  ROOT y = f32[2,4,3] convolution(x, w), window={size=5 pad=2_2 lhs_dilate=2}, dim_labels=bf0_oi0->bf0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"window={size=2 rhs_dilate=2 rhs_reversal=1}"})) << r.text;
  r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,3,2] parameter(0)
  w = f32[4,3,3] parameter(1)
  ROOT y = f32[2,4,2] convolution(x, w), window={size=3 pad=2_2 rhs_dilate=2}, dim_labels=bf0_oi0->bf0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"window={size=2 pad=-1_-1 lhs_dilate=2 rhs_reversal=1}"})) << r.text;
  r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,3,3] parameter(0)
  w = f32[4,3,5] parameter(1)
  ROOT y = f32[2,4,2] convolution(x, w), window={size=5 stride=2 pad=2_2}, dim_labels=bf0_oi0->bf0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"window={size=3 stride=2 rhs_reversal=1}"})) << r.text;
  r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,3,2,2] parameter(0)
  w = f32[4,3,2,5] parameter(1)
  ROOT y = f32[2,4,2,4] convolution(x, w), window={size=2x5 pad=0_0x3_3 lhs_dilate=2x1}, dim_labels=bf01_oi01->bf01
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"reverse(%w), dimensions={3}",
                               "window={size=2x2 lhs_dilate=2x1 rhs_reversal=0x1}"}))
      << r.text;
}

// The operands' precisions swap with them.
TEST(AlgsimpConvOperandSwapTest, OperandPrecisionsSwap) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  x = f32[2,8,2,2] parameter(0)
  w = f32[6,8,3,3] parameter(1)
  ROOT y = f32[2,6,2,2] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, operand_precision={high,highest}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"operand_precision={highest,high}"})) << r.text;
}

// The regression it fixes: through the gpu pipeline's optimization and
// conv_canonicalization pipelines, ResNet's 3x3 convolution on a 2x2
// activation becomes a forward convolution call (the swapped, reversed
// convolution), not a filter-gradient call with a transposed weight as it
// does with the swap turned off (MatchBackwardFilter's kernel-larger-than-
// result rule).
TEST(AlgsimpConvOperandSwapTest, GpuPipelineLowersSwappedConvToForwardCall) {
  const std::string hlo = R"(HloModule m
ENTRY test {
  x = f32[8,16,2,2] parameter(0)
  w = f32[16,16,3,3] parameter(1)
  ROOT y = f32[8,16,2,2] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})";
  auto run = [&](bool swap) {
    auto m = ParseHloModule(hlo);
    EXPECT_TRUE(m.ok()) << m.status().message();
    std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 7);
    absl::StatusOr<Literal> before = HloEvaluator().Evaluate(**m, args);
    EXPECT_TRUE(before.ok()) << before.status().message();
    HloPassPipeline pipeline("test");
    pipeline.AddPass<HloPassFixBase>(BuildOptimizationPipeline(), 1);
    pipeline.AddPass<HloPassFixBase>(BuildConvCanonicalizationPipeline(), 1);
    if (!swap) {
      absl::StatusOr<PassOptionOverrides> o = ParsePassOptionOverrides({"algsimp.enable_conv_operand_swap=false"});
      EXPECT_TRUE(o.ok());
      EXPECT_TRUE(ApplyPassOptions(pipeline, *o).ok());
    }
    absl::StatusOr<bool> changed = pipeline.Run(**m);
    EXPECT_TRUE(changed.ok()) << changed.status().message();
    absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
    EXPECT_TRUE(after.ok()) << after.status().message();
    if (before.ok() && after.ok()) {
      absl::Status same = CompareLiterals(*before, *after, {.abs = 1e-4, .rel = 1e-4});
      EXPECT_TRUE(same.ok()) << same.message();
    }
    return PrintModule(**m);
  };
  std::string swapped = run(true);
  EXPECT_TRUE(Matches(swapped, {"reverse(", "window={size=2x2 rhs_reversal=1x1}",
                                "custom_call_target=\"__dnn$convForward\"", "NOT:__dnn$convBackwardFilter",
                                "NOT:convolution("}))
      << swapped;
  std::string unswapped = run(false);
  EXPECT_TRUE(Matches(unswapped, {"custom_call_target=\"__dnn$convBackwardFilter\"", "NOT:__dnn$convForward"}))
      << unswapped;
}

}  // namespace
}  // namespace passlab
