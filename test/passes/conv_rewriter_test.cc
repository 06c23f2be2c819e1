#include "passes/libcall/conv_rewriter.h"

#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

PassResult RunConvRewriter(const std::string& hlo) {
  PassResult r = RunPass(std::make_unique<ConvRewriter>(), hlo);
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

TEST(ConvRewriterTest, ForwardConvolutionBecomesConvForwardCall) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT c = f32[2,4,4,8] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[2,4,4,8]{3,2,1,0}, u8[0]{0}) custom-call(%x, %w)",
                               "window={size=3x3 stride=2x2 pad=1_1x1_1}", "dim_labels=b01f_01io->b01f",
                               "custom_call_target=\"__dnn$convForward\"", "ROOT", "get-tuple-element(", "index=0",
                               "NOT: convolution("}))
      << r.text;
}

// The input gradient of the convolution above, as models/autodiff (and JAX)
// write it: lhs_dilation = stride, reversed kernel, features swapped.
constexpr char kBackwardInput[] = R"(
ENTRY e {
  dy = f32[2,4,4,8] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT dx = f32[2,8,8,3] convolution(dy, w), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2 rhs_reversal=1x1}, dim_labels=b01f_01oi->b01f
})";

TEST(ConvRewriterTest, LhsDilatedReversedConvolutionBecomesBackwardInput) {
  PassResult r = RunConvRewriter(kBackwardInput);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[2,8,8,3]{3,2,1,0}, u8[0]{0}) custom-call(%dy, %w)",
                               "window={size=3x3 stride=2x2 pad=1_1x1_1}", "dim_labels=b01f_01io->b01f",
                               "custom_call_target=\"__dnn$convBackwardInput\""}))
      << r.text;
}

TEST(ConvRewriterTest, ReverseOpOnTheKernelIsABackwardInputToo) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  dy = f32[2,4,4,8] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  rw = f32[3,3,3,8] reverse(w), dimensions={0,1}
  ROOT dx = f32[2,8,8,3] convolution(dy, rw), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01oi->b01f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%dy, %w)", "window={size=3x3 stride=2x2 pad=1_1x1_1}",
                               "custom_call_target=\"__dnn$convBackwardInput\"", "NOT:reverse("}))
      << r.text;
}

TEST(ConvRewriterTest, RhsDilatedConvolutionBecomesBackwardFilter) {
  // The filter gradient of the strided convolution: x with batch and feature
  // swapped, the output gradient as a kernel dilated by the stride.
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  dy = f32[2,4,4,8] parameter(1)
  ROOT dw = f32[3,3,3,8] convolution(x, dy), window={size=4x4 pad=1_0x1_0 rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[3,3,3,8]{3,2,1,0}, u8[0]{0}) custom-call(%x, %dy)",
                               "window={size=3x3 stride=2x2 pad=1_1x1_1}", "dim_labels=b01f_01io->b01f",
                               "custom_call_target=\"__dnn$convBackwardFilter\""}))
      << r.text;
}

TEST(ConvRewriterTest, StrideOneFilterGradientIsRecognisedByItsLargeWindow) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  dy = f32[2,6,6,8] parameter(1)
  ROOT dw = f32[3,3,3,8] convolution(x, dy), window={size=6x6 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"window={size=3x3 pad=1_1x1_1}", "dim_labels=b01f_01io->b01f",
                               "custom_call_target=\"__dnn$convBackwardFilter\""}))
      << r.text;
}

TEST(ConvRewriterTest, FilterGradientWithUnevenPaddingKeepsTheNearestValidHighPadding) {
  // Forward: 1x1, stride 2, no padding over 7 pixels (output 4): the
  // gradient's window ends exactly at the border, so high padding 0.
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[1,7,2] parameter(0)
  dy = f32[1,4,5] parameter(1)
  ROOT dw = f32[1,2,5] convolution(x, dy), window={size=4 rhs_dilate=2}, dim_labels=f0b_i0o->0bf
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"window={size=1 stride=2}", "dim_labels=b0f_0io->b0f",
                               "custom_call_target=\"__dnn$convBackwardFilter\""}))
      << r.text;
}

TEST(ConvRewriterTest, GroupedForwardConvolutionKeepsItsGroups) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[1,5,5,4] parameter(0)
  w = f32[3,3,2,6] parameter(1)
  ROOT c = f32[1,5,5,6] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"feature_group_count=2", "custom_call_target=\"__dnn$convForward\""})) << r.text;
}

// The filter gradient of a depthwise convolution (4 channels, 4 groups,
// 3x3, stride 2) as JAX and PyTorch/XLA write it: batch_group_count = the
// groups. XLA's conv_rewriter.cc (MatchBackwardFilter, then CreateGpuConv
// with conv->batch_group_count()) makes it a grouped backward-filter call.
TEST(ConvRewriterTest, DepthwiseFilterGradientWithBatchGroupsBecomesGroupedBackwardFilter) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[2,8,8,4] parameter(0)
  dy = f32[2,4,4,4] parameter(1)
  ROOT dw = f32[3,3,1,4] convolution(x, dy), window={size=4x4 pad=1_0x1_0 rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf, batch_group_count=4
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[3,3,1,4]{3,2,1,0}, u8[0]{0}) custom-call(%x, %dy)",
                               "window={size=3x3 stride=2x2 pad=1_1x1_1}", "dim_labels=b01f_01io->b01f",
                               "feature_group_count=4", "custom_call_target=\"__dnn$convBackwardFilter\"",
                               "NOT:batch_group_count", "NOT: convolution("}))
      << r.text;
}

TEST(ConvRewriterTest, GroupedFilterGradientWithBatchGroupsBecomesGroupedBackwardFilter) {
  // Forward: x f32[2,6,6,4], w f32[3,3,2,6], 2 groups, stride 1, pad 1.
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[2,6,6,4] parameter(0)
  dy = f32[2,6,6,6] parameter(1)
  ROOT dw = f32[3,3,2,6] convolution(x, dy), window={size=6x6 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, batch_group_count=2
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%x, %dy)", "window={size=3x3 pad=1_1x1_1}", "dim_labels=b01f_01io->b01f",
                               "feature_group_count=2", "custom_call_target=\"__dnn$convBackwardFilter\""}))
      << r.text;
}

// The input gradient of a stride-2 depthwise convolution: the kernel has one
// input feature per group and the channels as output features, so the
// regrouping into the forward filter f32[3,3,1,4] is a plain reshape.
TEST(ConvRewriterTest, DepthwiseInputGradientBecomesGroupedBackwardInput) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  dy = f32[2,4,4,4] parameter(0)
  k = f32[3,3,4,1] parameter(1)
  ROOT dx = f32[2,8,8,4] convolution(dy, k), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2 rhs_reversal=1x1}, dim_labels=b01f_01oi->b01f, feature_group_count=4
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[3,3,1,4]{3,2,1,0} reshape(%k)", "custom-call(%dy, %",
                               "window={size=3x3 stride=2x2 pad=1_1x1_1}", "dim_labels=b01f_01io->b01f",
                               "feature_group_count=4", "custom_call_target=\"__dnn$convBackwardInput\"",
                               "NOT:transpose(", "NOT: convolution("}))
      << r.text;
}

// Two groups of 2 input and 3 output features: the gradient's kernel
// [3,3,4,3] ("01oi": 4 = C input features, 3 = O/G) is regrouped into the
// forward filter [3,3,2,6] through a transpose (XLA's conv_rewriter.cc
// MatchBackwardInput, the grouped branch).
TEST(ConvRewriterTest, GroupedInputGradientRegroupsTheKernel) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  dy = f32[1,5,5,6] parameter(0)
  k = f32[3,3,4,3] parameter(1)
  ROOT dx = f32[1,5,5,4] convolution(dy, k), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_01oi->b01f, feature_group_count=2
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[3,3,2,2,3]{4,3,2,1,0} reshape(%k)", "transpose(", "f32[3,3,2,6]{3,2,1,0} reshape(",
                               "custom-call(%dy, %", "window={size=3x3 pad=1_1x1_1}", "dim_labels=b01f_01io->b01f",
                               "feature_group_count=2", "custom_call_target=\"__dnn$convBackwardInput\""}))
      << r.text;
}

// A batch-grouped convolution whose window is no larger than its output is
// no filter gradient: its batch groups move into the features and it runs
// as a feature-grouped forward call (XLA's
// ConvertBatchGroupedToFeatureGroupedConvolution).
TEST(ConvRewriterTest, OtherBatchGroupedConvolutionBecomesFeatureGroupedForward) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[4,5,5,2] parameter(0)
  w = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,3,3,4] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=4
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"reshape(%x)", "transpose(", "f32[1,5,5,8]{3,2,1,0} reshape(", "custom-call(%",
                               "feature_group_count=4", "custom_call_target=\"__dnn$convForward\"",
                               "NOT:batch_group_count"}))
      << r.text;
}

TEST(ConvRewriterTest, KeepsConvolutionsTheLibraryDoesNotTake) {
  // f64, and lhs dilation without a reversed kernel.
  EXPECT_FALSE(RunConvRewriter(R"(
ENTRY e {
  x = f64[2,8,8,3] parameter(0)
  w = f64[3,3,3,8] parameter(1)
  ROOT c = f64[2,4,4,8] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})").changed);
  EXPECT_FALSE(RunConvRewriter(R"(
ENTRY e {
  dy = f32[2,4,4,8] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT dx = f32[2,8,8,3] convolution(dy, w), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01oi->b01f
})").changed);
}

TEST(ConvRewriterTest, EdgeCaseConvolutionUsedTwiceAndOneSpatialDim) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[2,9,3] parameter(0)
  w = f32[2,3,4] parameter(1)
  c = f32[2,8,4] convolution(x, w), window={size=2}, dim_labels=b0f_0io->b0f
  n = f32[2,8,4] negate(c)
  ROOT t = (f32[2,8,4], f32[2,8,4]) tuple(c, n)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom_call_target=\"__dnn$convForward\"", "get-tuple-element(", "negate(", "tuple("}))
      << r.text;
}

TEST(ConvRewriterTest, CorpusConvolutionsBecomeCallsThatComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" convolution(", [] { return std::make_unique<ConvRewriter>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus";
  EXPECT_GT(stats.changed, 30);
  EXPECT_GT(stats.evaluated, 10);
}

}  // namespace
}  // namespace passlab
