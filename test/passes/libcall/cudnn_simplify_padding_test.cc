// CudnnSimplifyPadding follows XLA's
// xla/backends/gpu/transforms/cudnn_simplify_padding_test.cc: PaddedWeights,
// PaddedWeightsNotPaddedEnough, PaddedConstantWeight,
// PaddedConstantWeightIsNotLargeEnough, SliceDoesntStartAtBeginning,
// SliceDoesntStartAtBeginningOfFeatureDim, SliceHasStride,
// PadAddsInteriorPadding, SliceMoreElementsThanPad,
// NoChangeOnNonTrivialConstants, NoChangeOnComplexSlices,
// ScanOrderFeatureDimLast. XLA's modules use s8 and shapes its verifier
// does not check against the call; these use f32 with consistent shapes
// (smaller, so the evaluator's before/after check stays fast), and check
// the pass's own output (XLA's test also runs algsimp after it).
#include "passes/libcall/cudnn_simplify_padding.h"
#include "core/ir/str_util.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

// x: f32[2,5,5,4]; the call's output has 10 features; `weights` and the
// slice/pad after it vary.
std::string ConvModule(const std::string& weights, const std::string& slice, const std::string& pad) {
  return StrCat(R"(
HloModule m
ENTRY e {
  x = f32[2,5,5,4] parameter(0)
  )", weights, R"(
  conv = (f32[2,5,5,10], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
      custom_call_target="__dnn$convForward"
  r = f32[2,5,5,10] get-tuple-element(conv), index=0
  )", slice, R"(
  zero = f32[] constant(0)
  )", pad, R"(
})");
}

constexpr char kPaddedWeights4[] =
    "wp = f32[3,3,4,6] parameter(1)\n  z = f32[] constant(0)\n  w = f32[3,3,4,10] pad(wp, z), padding=0_0x0_0x0_0x0_4";
constexpr char kPaddedWeights3[] =
    "wp = f32[3,3,4,7] parameter(1)\n  z = f32[] constant(0)\n  w = f32[3,3,4,10] pad(wp, z), padding=0_0x0_0x0_0x0_3";
constexpr char kSliceTo6[] = "s = f32[2,5,5,6] slice(r), slice={[0:2], [0:5], [0:5], [0:6]}";
constexpr char kPadBy5[] = "ROOT p = f32[2,5,5,11] pad(s, zero), padding=0_0x0_0x0_0x0_5";

// XLA: PaddedWeights. The slice cuts 4 features the padded filter makes
// zero; the pad pads 4 fewer.
TEST(CudnnSimplifyPaddingTest, FoldsSliceOfZeroPaddedFeaturesIntoPad) {
  PassResult r = RunPass(std::make_unique<CudnnSimplifyPadding>(), ConvModule(kPaddedWeights4, kSliceTo6, kPadBy5));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT %p", "f32[2,5,5,11]{3,2,1,0} pad(%r, %zero), padding=0_0x0_0x0_0x0_1",
                               "NOT:slice("}))
      << r.text;
}

// XLA: PaddedWeightsNotPaddedEnough.
TEST(CudnnSimplifyPaddingTest, KeepsSliceCuttingMoreThanTheZeroFeatures) {
  EXPECT_FALSE(RunPass(std::make_unique<CudnnSimplifyPadding>(), ConvModule(kPaddedWeights3, kSliceTo6, kPadBy5))
                   .changed);
}

// XLA: PaddedConstantWeight. Features 6..9 of the constant filter are zero.
TEST(CudnnSimplifyPaddingTest, FoldsWhenConstantFilterHasTrailingZeroFeatures) {
  const std::string hlo = StrCat(R"(
HloModule m
ENTRY e {
  x = f32[2,5,5,2] parameter(0)
  w = f32[1,1,2,10] constant()", "{{{{1, 2, 3, 4, 5, 6, 0, 0, 0, 0}, {2, 3, 4, 5, 6, 7, 0, 0, 0, 0}}}}", R"()
  conv = (f32[2,5,5,10], u8[0]) custom-call(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f,
      custom_call_target="__cudnn$convForward"
  r = f32[2,5,5,10] get-tuple-element(conv), index=0
  s = f32[2,5,5,6] slice(r), slice={[0:2], [0:5], [0:5], [0:6]}
  zero = f32[] constant(0)
  ROOT p = f32[2,5,5,11] pad(s, zero), padding=0_0x0_0x0_0x0_5
})");
  PassResult r = RunPass(std::make_unique<CudnnSimplifyPadding>(), hlo);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"pad(%r, %zero), padding=0_0x0_0x0_0x0_1", "NOT:slice("})) << r.text;
}

// XLA: PaddedConstantWeightIsNotLargeEnough. Features 5..9 are nonzero.
TEST(CudnnSimplifyPaddingTest, KeepsWhenConstantFilterFeaturesAreNotZero) {
  const std::string hlo = StrCat(R"(
HloModule m
ENTRY e {
  x = f32[2,5,5,2] parameter(0)
  w = f32[1,1,2,10] constant()", "{{{{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 1, 1, 1, 1, 1}}}}", R"()
  conv = (f32[2,5,5,10], u8[0]) custom-call(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f,
      custom_call_target="__dnn$convForward"
  r = f32[2,5,5,10] get-tuple-element(conv), index=0
  s = f32[2,5,5,6] slice(r), slice={[0:2], [0:5], [0:5], [0:6]}
  zero = f32[] constant(0)
  ROOT p = f32[2,5,5,11] pad(s, zero), padding=0_0x0_0x0_0x0_5
})");
  EXPECT_FALSE(RunPass(std::make_unique<CudnnSimplifyPadding>(), hlo).changed);
}

// XLA: SliceDoesntStartAtBeginning, SliceDoesntStartAtBeginningOfFeatureDim,
// SliceHasStride, PadAddsInteriorPadding.
TEST(CudnnSimplifyPaddingTest, KeepsSlicesAndPadsItCannotMerge) {
  EXPECT_FALSE(RunPass(std::make_unique<CudnnSimplifyPadding>(),
                       ConvModule(kPaddedWeights4, "s = f32[2,4,5,6] slice(r), slice={[0:2], [1:5], [0:5], [0:6]}",
                                  "ROOT p = f32[2,4,5,11] pad(s, zero), padding=0_0x0_0x0_0x0_5"))
                   .changed);
  EXPECT_FALSE(RunPass(std::make_unique<CudnnSimplifyPadding>(),
                       ConvModule(kPaddedWeights4, "s = f32[2,5,5,5] slice(r), slice={[0:2], [0:5], [0:5], [1:6]}",
                                  "ROOT p = f32[2,5,5,10] pad(s, zero), padding=0_0x0_0x0_0x0_5"))
                   .changed);
  EXPECT_FALSE(RunPass(std::make_unique<CudnnSimplifyPadding>(),
                       ConvModule(kPaddedWeights4, "s = f32[2,5,5,3] slice(r), slice={[0:2], [0:5], [0:5], [0:6:2]}",
                                  "ROOT p = f32[2,5,5,8] pad(s, zero), padding=0_0x0_0x0_0x0_5"))
                   .changed);
  EXPECT_FALSE(RunPass(std::make_unique<CudnnSimplifyPadding>(),
                       ConvModule(kPaddedWeights4, kSliceTo6,
                                  "ROOT p = f32[2,5,5,16] pad(s, zero), padding=0_0x0_0x0_0x0_5_1"))
                   .changed);
}

// XLA: SliceMoreElementsThanPad. The new pad's padding_high is negative
// (it trims); algsimp later turns it into a slice.
TEST(CudnnSimplifyPaddingTest, EdgeCaseSliceMoreThanPadLeavesNegativePadding) {
  PassResult r = RunPass(std::make_unique<CudnnSimplifyPadding>(),
                         ConvModule(kPaddedWeights4, kSliceTo6,
                                    "ROOT p = f32[2,5,5,8] pad(s, zero), padding=0_0x0_0x0_0x0_2"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[2,5,5,8]{3,2,1,0} pad(%r, %zero), padding=0_0x0_0x0_0x0_-2"})) << r.text;
}

// XLA: NoChangeOnNonTrivialConstants. An all-zero depthwise filter, but the
// slice cuts a spatial dimension.
TEST(CudnnSimplifyPaddingTest, KeepsSliceOfNonFeatureDimension) {
  PassResult r = RunPass(std::make_unique<CudnnSimplifyPadding>(), StrCat(R"(
HloModule m
ENTRY e {
  x = f32[1,3,3,12] parameter(0)
  w = f32[3,3,1,12] constant()", "{{{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}, {{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}, {{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}}", R"()
  conv = (f32[1,5,5,12], u8[0]) custom-call(x, w), window={size=3x3 pad=2_2x2_2}, dim_labels=b01f_01io->b01f,
      feature_group_count=12, custom_call_target="__cudnn$convForward"
  r = f32[1,5,5,12] get-tuple-element(conv), index=0
  s = f32[1,5,1,12] slice(r), slice={[0:1], [0:5], [0:1], [0:12]}
  zero = f32[] constant(0)
  ROOT p = f32[1,5,3,12] pad(s, zero), padding=0_0x0_0x2_0x0_0
})"));
  EXPECT_FALSE(r.changed);
}

// XLA: NoChangeOnComplexSlices (slice starts inside the features) and
// ScanOrderFeatureDimLast (feature 7 is nonzero at one spatial position
// only: 4 trailing zero features, 6 cut).
TEST(CudnnSimplifyPaddingTest, ScansWholeConstantForTheLastNonzeroFeature) {
  const std::string tail = R"(
  conv = (f32[1,5,5,12], u8[0]) custom-call(x, w), window={size=3x3 pad=2_2x2_2}, dim_labels=b01f_01io->b01f,
      feature_group_count=12, custom_call_target="__dnn$convForward"
  r = f32[1,5,5,12] get-tuple-element(conv), index=0
  zero = f32[] constant(0)
)";
  EXPECT_FALSE(RunPass(std::make_unique<CudnnSimplifyPadding>(),
                       StrCat("HloModule m\nENTRY e {\n  x = f32[1,3,3,12] parameter(0)\n  w = f32[3,3,1,12] constant(",
                              "{{{{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}, {{{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}, {{{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}}", ")", tail,
                              "  s = f32[1,5,5,4] slice(r), slice={[0:1], [0:5], [0:5], [2:6]}\n"
                              "  ROOT p = f32[1,5,5,12] pad(s, zero), padding=0_0x0_0x0_0x0_8\n}"))
                   .changed);
  const std::string scan = StrCat("HloModule m\nENTRY e {\n  x = f32[1,3,3,12] parameter(0)\n  w = f32[3,3,1,12] constant(",
                                  "{{{{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}, {{{1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}, {{{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}}", ")", tail);
  EXPECT_FALSE(RunPass(std::make_unique<CudnnSimplifyPadding>(),
                       StrCat(scan, "  s = f32[1,5,5,6] slice(r), slice={[0:1], [0:5], [0:5], [0:6]}\n"
                                    "  ROOT p = f32[1,5,5,12] pad(s, zero), padding=0_0x0_0x0_0x0_6\n}"))
                   .changed);
  // Cutting only the 4 zero features folds.
  PassResult r = RunPass(std::make_unique<CudnnSimplifyPadding>(),
                         StrCat(scan, "  s = f32[1,5,5,8] slice(r), slice={[0:1], [0:5], [0:5], [0:8]}\n"
                                      "  ROOT p = f32[1,5,5,12] pad(s, zero), padding=0_0x0_0x0_0x0_4\n}"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"pad(%r, %zero), padding=0_0x0_0x0_0x0_0", "NOT:slice("})) << r.text;
}

TEST(CudnnSimplifyPaddingTest, FoldsAfterFusedConvWithZeroPaddedBias) {
  // The bias-activation call, as CudnnPadForConvolutions leaves it: filter
  // and bias padded with zeros, so the padded features stay relu(0) = 0.
  PassResult r = RunPass(std::make_unique<CudnnSimplifyPadding>(), R"(
HloModule m
ENTRY e {
  x = f32[2,5,5,4] parameter(0)
  wp = f32[3,3,4,6] parameter(1)
  bp = f32[6] parameter(2)
  z = f32[] constant(0)
  w = f32[3,3,4,8] pad(wp, z), padding=0_0x0_0x0_0x0_2
  b = f32[8] pad(bp, z), padding=0_2
  conv = (f32[2,5,5,8], u8[0]) custom-call(x, w, b), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
      custom_call_target="__dnn$convBiasActivationForward",
      backend_config={"cudnn_conv_backend_config":{"activation_mode":"kRelu","conv_result_scale":1,"side_input_scale":0}}
  r = f32[2,5,5,8] get-tuple-element(conv), index=0
  s = f32[2,5,5,6] slice(r), slice={[0:2], [0:5], [0:5], [0:6]}
  ROOT p = f32[2,5,5,8] pad(s, z), padding=0_0x0_0x0_0x0_2
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT %p", "pad(%r, %z), padding=0_0x0_0x0_0x0_0", "NOT:slice("})) << r.text;
}

TEST(CudnnSimplifyPaddingTest, EdgeCaseSliceWithAnotherUserStays) {
  PassResult r = RunPass(std::make_unique<CudnnSimplifyPadding>(),
                         ConvModule(kPaddedWeights4, kSliceTo6,
                                    "p = f32[2,5,5,11] pad(s, zero), padding=0_0x0_0x0_0x0_5\n"
                                    "  n = f32[2,5,5,6] negate(s)\n"
                                    "  ROOT t = (f32[2,5,5,11], f32[2,5,5,6]) tuple(p, n)"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"pad(%r, %zero), padding=0_0x0_0x0_0x0_1", "slice(%r)", "negate(%s)"})) << r.text;
}

TEST(CudnnSimplifyPaddingTest, KeepsNonZeroPadValueAndOtherCalls) {
  // A pad with a nonzero value re-adds ones, not zeros.
  EXPECT_FALSE(RunPass(std::make_unique<CudnnSimplifyPadding>(),
                       ConvModule(kPaddedWeights4, kSliceTo6 + std::string("\n  one = f32[] constant(1)"),
                                  "ROOT p = f32[2,5,5,11] pad(s, one), padding=0_0x0_0x0_0x0_5"))
                   .changed);
  // Only forward convolutions: a backward-input call's features mean
  // something else.
  EXPECT_FALSE(RunPass(std::make_unique<CudnnSimplifyPadding>(), R"(
HloModule m
ENTRY e {
  dy = f32[2,5,5,4] parameter(0)
  wp = f32[3,3,10,2] parameter(1)
  z = f32[] constant(0)
  w = f32[3,3,10,4] pad(wp, z), padding=0_0x0_0x0_0x0_2
  conv = (f32[2,5,5,10], u8[0]) custom-call(dy, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
      custom_call_target="__dnn$convBackwardInput"
  r = f32[2,5,5,10] get-tuple-element(conv), index=0
  s = f32[2,5,5,8] slice(r), slice={[0:2], [0:5], [0:5], [0:8]}
  ROOT p = f32[2,5,5,10] pad(s, z), padding=0_0x0_0x0_0x0_2
})").changed);
}

}  // namespace
}  // namespace passlab
