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

// XLA's conv_rewriter.cc CreateGpuConv copies the convolution's
// precision_config onto the call (operand_precision={highest,highest} in
// the JAX ResNet-50 step dump, step 24).
TEST(ConvRewriterTest, CallKeepsTheConvolutionsOperandPrecision) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT c = f32[2,8,8,8] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, operand_precision={highest,highest}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%x, %w)", "operand_precision={highest,highest}",
                               "custom_call_target=\"__dnn$convForward\""}))
      << r.text;
}

// A window reversal is no gradient form for XLA (MatchBackwardInput and
// MatchBackwardFilter: "Window reversal field not supported"); a 2-D
// convolution reversed in every spatial dimension runs forward (cuDNN's
// convolution mode, CanImplementAsGpuForwardConv), its lhs dilation kept for
// ConvPaddingLegalization. Step 24 of the JAX ResNet-50 dump has four such
// stride-1 convolutions (operands swapped by algsimp) that XLA makes
// __cudnn$convForward.
TEST(ConvRewriterTest, WindowReversedConvolutionRunsForward) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  dy = f32[2,4,4,8] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT dx = f32[2,8,8,3] convolution(dy, w), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2 rhs_reversal=1x1}, dim_labels=b01f_01oi->b01f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[2,8,8,3]{3,2,1,0}, u8[0]{0}) custom-call(%dy, %w)",
                               "window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2 rhs_reversal=1x1}",
                               "dim_labels=b01f_01oi->b01f", "custom_call_target=\"__dnn$convForward\""}))
      << r.text;
  r = RunConvRewriter(R"(
ENTRY e {
  w = f32[3,3,16,16] parameter(0)
  dy = f32[8,2,2,16] parameter(1)
  ROOT c = f32[8,2,2,16] convolution(w, dy), window={size=2x2 rhs_reversal=1x1}, dim_labels=01fb_o01i->f01b
})");
  EXPECT_TRUE(Matches(r.text, {"window={size=2x2 rhs_reversal=1x1}", "dim_labels=01fb_o01i->f01b",
                               "custom_call_target=\"__dnn$convForward\""}))
      << r.text;
  // Reversed in one dimension of two: neither cross-correlation nor
  // convolution; left alone.
  EXPECT_FALSE(RunConvRewriter(R"(
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT c = f32[2,6,6,8] convolution(x, w), window={size=3x3 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f
})").changed);
}

// An lhs-dilated convolution with a 1x1 (or constant) kernel is an input
// gradient without a reverse (XLA's MatchBackwardInput: "filter is 1x1 or a
// constant AND conv has base dilation"): the downsampling 1x1 convolutions'
// gradients of the ResNet-50 step dump, window={size=1x1 pad=0_1x0_1
// lhs_dilate=2x2} => __cudnn$convBackwardInput window={size=1x1 stride=2x2}.
TEST(ConvRewriterTest, LhsDilatedOneByOneOrConstantKernelIsABackwardInput) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  dy = f32[8,2,2,16] parameter(0)
  w = f32[1,1,8,16] parameter(1)
  ROOT dx = f32[8,4,4,8] convolution(dy, w), window={size=1x1 pad=0_1x0_1 lhs_dilate=2x2}, dim_labels=b01f_01oi->b01f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[8,4,4,8]{3,2,1,0}, u8[0]{0}) custom-call(%dy, %w)", "window={size=1x1 stride=2x2}",
                               "dim_labels=b01f_01io->b01f", "custom_call_target=\"__dnn$convBackwardInput\""}))
      << r.text;
  // A constant 3x3 kernel: the call takes it reversed (XLA adds a pair of
  // reverses and lets the call subsume one).
  r = RunConvRewriter(R"(
ENTRY e {
  dy = f32[1,2,2,1] parameter(0)
  w = f32[3,3,1,1] constant({{{{1}},{{2}},{{3}}},{{{4}},{{5}},{{6}}},{{{7}},{{8}},{{9}}}})
  ROOT dx = f32[1,4,4,1] convolution(dy, w), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01oi->b01f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"reverse(%w), dimensions={0,1}", "custom-call(%dy, %",
                               "window={size=3x3 stride=2x2 pad=1_1x1_1}",
                               "custom_call_target=\"__dnn$convBackwardInput\""}))
      << r.text;
}

// A 1-D convolution written as 2-D (a unit kernel dimension inserted by a
// reshape): its reversed kernel reads reshape(reverse(w)), and the call takes
// reshape(w) (XLA's MaybeConv1dToConv2d / is_reversed_conv1d_filter).
TEST(ConvRewriterTest, Conv1dWrittenAs2dWithReshapedReversedKernelIsABackwardInput) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  dy = f32[2,1,4,8] parameter(0)
  w = f32[3,3,8] parameter(1)
  rw = f32[3,3,8] reverse(w), dimensions={0}
  k = f32[1,3,3,8] reshape(rw)
  ROOT dx = f32[2,1,8,3] convolution(dy, k), window={size=1x3 pad=0_0x1_2 lhs_dilate=1x2}, dim_labels=b01f_01oi->b01f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[1,3,3,8]{3,2,1,0} reshape(%w)", "custom-call(%dy, %",
                               "window={size=1x3 stride=1x2 pad=0_0x1_1}",
                               "custom_call_target=\"__dnn$convBackwardInput\""}))
      << r.text;
  // The reverse on a feature dimension: no input gradient (a forward call
  // of the lhs-dilated convolution).
  r = RunConvRewriter(R"(
ENTRY e {
  dy = f32[2,1,4,8] parameter(0)
  w = f32[3,3,8] parameter(1)
  rw = f32[3,3,8] reverse(w), dimensions={2}
  k = f32[1,3,3,8] reshape(rw)
  ROOT dx = f32[2,1,8,3] convolution(dy, k), window={size=1x3 pad=0_0x1_2 lhs_dilate=1x2}, dim_labels=b01f_01oi->b01f
})");
  EXPECT_TRUE(Matches(r.text, {"custom_call_target=\"__dnn$convForward\"", "NOT:convBackwardInput"})) << r.text;
}

// XLA tries the input gradient first: a stride-1 convolution with a reversed
// kernel larger than its result, which the filter-gradient heuristic would
// also take, is a backward input.
TEST(ConvRewriterTest, BackwardInputIsTriedBeforeBackwardFilter) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  k = f32[6,6,3,4] parameter(1)
  rk = f32[6,6,3,4] reverse(k), dimensions={0,1}
  ROOT c = f32[2,3,3,4] convolution(x, rk), window={size=6x6 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%x, %k)", "custom_call_target=\"__dnn$convBackwardInput\""})) << r.text;
}

// XLA's filter-gradient heuristic (MatchBackwardFilter): a convolution that
// looks like a forward one (same batch, the kernel's output features, kernel
// no larger than the result) is forward even with window dilation; without
// window dilation the kernel must be larger than the result in every
// spatial dimension.
TEST(ConvRewriterTest, FilterGradientHeuristicIsXlas) {
  // Dilated 3x3 forward convolution (atrous): forward, not a filter gradient.
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT c = f32[2,4,4,8] convolution(x, w), window={size=3x3 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f
})");
  EXPECT_TRUE(Matches(r.text, {"custom_call_target=\"__dnn$convForward\""})) << r.text;
  // The kernel is larger than the result in one spatial dimension only (the
  // element count rule would call it a filter gradient): forward.
  r = RunConvRewriter(R"(
ENTRY e {
  x = f32[3,9,4,2] parameter(0)
  dy = f32[3,7,2,5] parameter(1)
  ROOT c = f32[2,3,3,5] convolution(x, dy), window={size=7x2}, dim_labels=f01b_i01o->b01f
})");
  EXPECT_TRUE(Matches(r.text, {"custom_call_target=\"__dnn$convForward\""})) << r.text;
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
  // f64 (passlab's DNN paths compute in f32/bf16/f16).
  EXPECT_FALSE(RunConvRewriter(R"(
ENTRY e {
  x = f64[2,8,8,3] parameter(0)
  w = f64[3,3,3,8] parameter(1)
  ROOT c = f64[2,4,4,8] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})").changed);
  // Four spatial dimensions (XLA's CanImplementAsGpuForwardConv: at most 3).
  EXPECT_FALSE(RunConvRewriter(R"(
ENTRY e {
  x = f32[1,3,3,3,3,2] parameter(0)
  w = f32[1,1,1,1,2,2] parameter(1)
  ROOT c = f32[1,3,3,3,3,2] convolution(x, w), window={size=1x1x1x1}, dim_labels=b0123f_0123io->b0123f
})").changed);
}

// lhs dilation with a plain 3x3 kernel is no gradient form; XLA makes it a
// forward call whose base dilation ConvPaddingLegalization makes explicit.
TEST(ConvRewriterTest, LhsDilatedForwardConvolutionKeepsItsDilation) {
  PassResult r = RunConvRewriter(R"(
ENTRY e {
  dy = f32[2,4,4,8] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT dx = f32[2,8,8,3] convolution(dy, w), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01oi->b01f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}",
                               "custom_call_target=\"__dnn$convForward\""}))
      << r.text;
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
