#include "passes/libcall/conv_padding_legalization.h"

#include "passes/libcall/conv_rewriter.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

PassResult RunLegalization(const std::string& hlo) {
  PassResult r = RunPass(std::make_unique<ConvPaddingLegalization>(), hlo);
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

TEST(ConvPaddingLegalizationTest, AsymmetricForwardPaddingBecomesAnExplicitPad) {
  PassResult r = RunLegalization(R"(
ENTRY e {
  x = f32[1,6,6,2] parameter(0)
  w = f32[3,3,2,4] parameter(1)
  c = (f32[1,3,3,4], u8[0]) custom-call(x, w), window={size=3x3 stride=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  ROOT v = f32[1,3,3,4] get-tuple-element(c), index=0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[1,7,7,2]{3,2,1,0} pad(%x, %", "padding=0_0x0_1x0_1x0_0",
                               "window={size=3x3 stride=2x2}", "custom_call_target=\"__dnn$convForward\""}))
      << r.text;
}

// XLA's gpu conv_padding_legalization.cc (MaybePaddedAndSlicedInput):
// uneven forward padding moves into the pad entirely (positive part) and a
// slice (negative part); the call keeps none.
TEST(ConvPaddingLegalizationTest, NegativeForwardPaddingBecomesPadAndSlice) {
  PassResult r = RunLegalization(R"(
ENTRY e {
  x = f32[1,7,2] parameter(0)
  w = f32[3,2,5] parameter(1)
  c = (f32[1,3,5], u8[0]) custom-call(x, w), window={size=3 stride=2 pad=1_-1}, dim_labels=b0f_0io->b0f, custom_call_target="__dnn$convForward"
  ROOT v = f32[1,3,5] get-tuple-element(c), index=0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[1,8,2]{2,1,0} pad(%x, %", "padding=0_0x1_0x0_0", "f32[1,7,2]{2,1,0} slice(",
                               "slice={[0:1], [0:7], [0:2]}", "window={size=3 stride=2}",
                               "custom_call_target=\"__dnn$convForward\""}))
      << r.text;
  // Uneven positive padding: all of it goes into the pad (not just the
  // difference), pad=1_2 => padding=1_2, window without padding.
  r = RunLegalization(R"(
ENTRY e {
  x = f32[1,5,2] parameter(0)
  w = f32[3,2,5] parameter(1)
  c = (f32[1,6,5], u8[0]) custom-call(x, w), window={size=3 pad=1_2}, dim_labels=b0f_0io->b0f, custom_call_target="__dnn$convForward"
  ROOT v = f32[1,6,5] get-tuple-element(c), index=0
})");
  EXPECT_TRUE(Matches(r.text, {"f32[1,8,2]{2,1,0} pad(%x, %", "padding=0_0x1_2x0_0", "window={size=3}",
                               "custom_call_target=\"__dnn$convForward\""}))
      << r.text;
}

// The ResNet-50 step dump's step 26: a forward call (window reversed, rhs
// dilated, the weights as its input) with pad=1_2. XLA pads the input by
// 1_2 (f32[3,3,..] to f32[6,6,..]) and, the window dilation not kept with
// uneven padding, dilates the kernel by an interior pad (2x2 to 3x3):
// window={size=3x3 rhs_reversal=1x1}. A base dilation becomes the input
// pad's interior padding.
TEST(ConvPaddingLegalizationTest, UnevenDilatedForwardCallGetsExplicitPadsOfInputAndKernel) {
  PassResult r = RunLegalization(R"(
ENTRY e {
  w = f32[3,3,16,16] parameter(0)
  dy = f32[8,2,2,16] parameter(1)
  c = (f32[8,4,4,16], u8[0]) custom-call(w, dy), window={size=2x2 pad=1_2x1_2 rhs_dilate=2x2 rhs_reversal=1x1}, dim_labels=01bf_o01i->f01b, custom_call_target="__dnn$convForward"
  ROOT v = f32[8,4,4,16] get-tuple-element(c), index=0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[6,6,16,16]{3,2,1,0} pad(%w, %", "padding=1_2x1_2x0_0x0_0",
                               "f32[8,3,3,16]{3,2,1,0} pad(%dy, %", "padding=0_0x0_0_1x0_0_1x0_0",
                               "window={size=3x3 rhs_reversal=1x1}", "custom_call_target=\"__dnn$convForward\""}))
      << r.text;
  r = RunLegalization(R"(
ENTRY e {
  x = f32[1,4,2] parameter(0)
  w = f32[3,2,5] parameter(1)
  c = (f32[1,8,5], u8[0]) custom-call(x, w), window={size=3 pad=1_2 lhs_dilate=2}, dim_labels=b0f_0io->b0f, custom_call_target="__dnn$convForward"
  ROOT v = f32[1,8,5] get-tuple-element(c), index=0
})");
  EXPECT_TRUE(Matches(r.text, {"f32[1,10,2]{2,1,0} pad(%x, %", "padding=0_0x1_2_1x0_0", "window={size=3}",
                               "custom_call_target=\"__dnn$convForward\""}))
      << r.text;
}

// Backward filter (CanonicalizeBackwardFilterConvolution): only the
// difference of uneven padding moves into the pad; negative padding is left
// alone (XLA's TODO b/32744257; ConvRewriter never creates it).
TEST(ConvPaddingLegalizationTest, FilterGradientPadsTheDifferenceAndKeepsNegativePadding) {
  PassResult r = RunLegalization(R"(
ENTRY e {
  x = f32[1,7,2] parameter(0)
  dy = f32[1,4,5] parameter(1)
  c = (f32[3,2,5], u8[0]) custom-call(x, dy), window={size=3 stride=2 pad=1_2}, dim_labels=b0f_0io->b0f, custom_call_target="__dnn$convBackwardFilter"
  ROOT v = f32[3,2,5] get-tuple-element(c), index=0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[1,8,2]{2,1,0} pad(%x, %", "padding=0_0x0_1x0_0", "window={size=3 stride=2 pad=1_1}",
                               "custom_call_target=\"__dnn$convBackwardFilter\""}))
      << r.text;
  EXPECT_FALSE(RunLegalization(R"(
ENTRY e {
  x = f32[1,7,2] parameter(0)
  dy = f32[1,3,5] parameter(1)
  c = (f32[3,2,5], u8[0]) custom-call(x, dy), window={size=3 stride=2 pad=1_-1}, dim_labels=b0f_0io->b0f, custom_call_target="__dnn$convBackwardFilter"
  ROOT v = f32[3,2,5] get-tuple-element(c), index=0
})").changed);
}

TEST(ConvPaddingLegalizationTest, AsymmetricBackwardInputComputesALargerGradientAndSlicesIt) {
  PassResult r = RunLegalization(R"(
ENTRY e {
  dy = f32[1,3,3,4] parameter(0)
  w = f32[3,3,2,4] parameter(1)
  c = (f32[1,6,6,2], u8[0]) custom-call(dy, w), window={size=3x3 stride=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convBackwardInput"
  ROOT v = f32[1,6,6,2] get-tuple-element(c), index=0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[1,7,7,2]{3,2,1,0}, u8[0]{0}) custom-call(%dy, %w)", "window={size=3x3 stride=2x2}",
                               "custom_call_target=\"__dnn$convBackwardInput\"", "f32[1,6,6,2]{3,2,1,0} slice(",
                               "slice={[0:1], [0:6], [0:6], [0:2]}"}))
      << r.text;
}

TEST(ConvPaddingLegalizationTest, KeepsSymmetricPaddingAndPlainConvolutions) {
  EXPECT_FALSE(RunLegalization(R"(
ENTRY e {
  x = f32[1,6,6,2] parameter(0)
  w = f32[3,3,2,4] parameter(1)
  c = (f32[1,3,3,4], u8[0]) custom-call(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  v = f32[1,3,3,4] get-tuple-element(c), index=0
  d = f32[1,3,3,4] convolution(x, w), window={size=3x3 stride=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[1,3,3,4], f32[1,3,3,4]) tuple(v, d)
})").changed);
}

TEST(ConvPaddingLegalizationTest, EdgeCaseFusedCallWithSideInputKeepsItsOtherOperands) {
  PassResult r = RunLegalization(R"(
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  w = f32[2,2,2,3] parameter(1)
  b = f32[3] parameter(2)
  y = f32[1,5,5,3] parameter(3)
  c = (f32[1,5,5,3], u8[0]) custom-call(x, w, b, y), window={size=2x2 pad=0_1x1_0}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convBiasActivationForward", backend_config={"cudnn_conv_backend_config":{"activation_mode":"kRelu","side_input_scale":1}}
  ROOT v = f32[1,5,5,3] get-tuple-element(c), index=0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"padding=0_0x0_1x1_0x0_0", "custom-call(%pad, %w, %b, %y)", "window={size=2x2}",
                               "\"activation_mode\":\"kRelu\""}))
      << r.text;
}

TEST(ConvPaddingLegalizationTest, CorpusConvolutionCallsStillComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" convolution(", [] {
    auto p = std::make_unique<HloPassPipeline>("conv+padding");
    p->AddPass<ConvRewriter>();
    p->AddPass<ConvPaddingLegalization>();
    return p;
  });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus";
  EXPECT_GT(stats.evaluated, 10);
}

}  // namespace
}  // namespace passlab
