// LayoutNormalization tests, after XLA's
// xla/service/layout_normalization_test.cc (TestDefault, TestUnary, Copy,
// Transpose, IotaCustomOutputLayout, ConcatenateDegenerateDim, Slice,
// DynamicSlice, ...): each module's values are checked before and after on
// the evaluator by RunPass.
#include "passes/layout/layout_normalization.h"

#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<HloPassInterface> Pass() { return std::make_unique<LayoutNormalization>(); }

TEST(LayoutNormalizationTest, UnaryOnColumnMajorComputesOnDescendingLayout) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[5,4]{0,1} parameter(0)
  a = f32[5,4]{0,1} abs(p)
  ROOT b = f32[5,4]{0,1} sqrt(a)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[4,5]{1,0} bitcast(", "f32[4,5]{1,0} abs(", "f32[4,5]{1,0} sqrt(",
                               "ROOT", "f32[5,4]{0,1} bitcast("}))
      << r.text;
}

// xla/service/gpu/conv_layout_normalization.cc (XLA:GPU runs
// layout_normalization with NormalizeLayoutForGpuCustomCalls): a convolution
// call is rebuilt on bitcasts of all its operands (one already descending
// too) with dimension numbers at their physical positions; its elements are
// bitcast back and tupled. XLA's dump of the ResNet-50 step on an H200, step
// 35: the stem's OHWI filter 01io becomes o01i.
TEST(LayoutNormalizationTest, ConvolutionCallComputesOnDescendingLayouts) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  x = f32[2,8,8,3]{3,2,1,0} parameter(0)
  w = f32[3,3,3,4]{2,1,0,3} parameter(1)
  c = (f32[2,8,8,4]{3,2,1,0}, u8[0]{0}) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  ROOT g = f32[2,8,8,4]{3,2,1,0} get-tuple-element(c), index=0
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[2,8,8,3]{3,2,1,0} bitcast(%x)", "f32[4,3,3,3]{3,2,1,0} bitcast(%w)",
                               "(f32[2,8,8,4]{3,2,1,0}, u8[0]{0}) custom-call(", "dim_labels=b01f_o01i->b01f",
                               "f32[2,8,8,4]{3,2,1,0} bitcast(", "u8[0]{0} bitcast(", "tuple(", "ROOT"}))
      << r.text;
}

TEST(LayoutNormalizationTest, KeepsConvolutionCallWithDescendingLayouts) {
  EXPECT_FALSE(RunPass(Pass(), R"(
ENTRY main {
  x = f32[2,8,8,3]{3,2,1,0} parameter(0)
  w = f32[4,3,3,3]{3,2,1,0} parameter(1)
  c = (f32[2,8,8,4]{3,2,1,0}, u8[0]{0}) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f, custom_call_target="__dnn$convForward"
  ROOT g = f32[2,8,8,4]{3,2,1,0} get-tuple-element(c), index=0
})").changed);
}

TEST(LayoutNormalizationTest, KeepsOpsWithDescendingLayouts) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[5,4]{1,0} parameter(0)
  t = f32[4,5]{1,0} transpose(p), dimensions={1,0}
  ROOT o = f32[4,5]{1,0} abs(t)
})");
  EXPECT_FALSE(r.changed);
}

TEST(LayoutNormalizationTest, CopyBecomesPhysicalTranspose) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[3,4,5]{0,1,2} parameter(0)
  t = f32[3,4,5]{2,1,0} copy(p)
  ROOT out = f32[3,4,5]{2,1,0} abs(t)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[5,4,3]{2,1,0} bitcast(", "f32[3,4,5]{2,1,0} transpose(", "dimensions={2,1,0}",
                               "NOT: copy("}))
      << r.text;
}

TEST(LayoutNormalizationTest, TransposeThatIsABitcastDisappears) {
  // In memory the transpose moves nothing: only bitcasts are left.
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[3,4]{0,1} parameter(0)
  t = f32[4,3]{1,0} transpose(p), dimensions={1,0}
  ROOT out = f32[4,3]{1,0} negate(t)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[4,3]{1,0} bitcast(", "f32[4,3]{1,0} negate(", "NOT: transpose("})) << r.text;
}

TEST(LayoutNormalizationTest, ConstantLiteralIsTransposedIntoMemoryOrder) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  c = f32[2,3]{0,1} constant({{1, 2, 3}, {4, 5, 6}})
  p = f32[2,3]{0,1} parameter(0)
  ROOT a = f32[2,3]{0,1} add(c, p)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[3,2]{1,0} constant({ {1, 4}, {2, 5}, {3, 6} })", "f32[3,2]{1,0} add("}))
      << r.text;
}

TEST(LayoutNormalizationTest, ReduceOverMinorDimOfColumnMajorGetsBitcastsAround) {
  // reduce has no rewrite: its operand is a bitcast of the normalized
  // parameter and its values stay the same.
  PassResult r = RunPass(Pass(), std::string(kAddF32Reducer) + R"(
ENTRY main {
  p = f32[6,4]{0,1} parameter(0)
  z = f32[] constant(0)
  e = f32[6,4]{0,1} exponential(p)
  ROOT r = f32[4]{0} reduce(e, z), dimensions={0}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[4,6]{1,0} exponential(", "f32[6,4]{0,1} bitcast(", "reduce("})) << r.text;
}

TEST(LayoutNormalizationTest, BroadcastPadSliceConcatenateIotaReverse) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  a = f32[4,3]{0,1} parameter(0)
  b = f32[4,2,3]{0,1,2} broadcast(a), dimensions={0,2}
  z = f32[] constant(0)
  p = f32[6,2,5]{0,1,2} pad(b, z), padding=1_1x0_0x2_0
  s = f32[3,2,5]{0,1,2} slice(p), slice={[1:4], [0:2], [0:5]}
  i = f32[3,2,5]{0,1,2} iota(), iota_dimension=2
  c = f32[6,2,5]{0,1,2} concatenate(s, i), dimensions={0}
  ROOT v = f32[6,2,5]{0,1,2} reverse(c), dimensions={0,2}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[3,2,4]{2,1,0} broadcast(", "dimensions={0,2}", "f32[5,2,6]{2,1,0} pad(",
                               "padding=2_0x0_0x1_1", "f32[5,2,3]{2,1,0} slice(", "f32[5,2,3]{2,1,0} iota(),",
                               "iota_dimension=0", "f32[5,2,6]{2,1,0} concatenate(", "dimensions={2}",
                               "f32[5,2,6]{2,1,0} reverse(", "dimensions={0,2}"}))
      << r.text;
}

TEST(LayoutNormalizationTest, DynamicSliceAndUpdateSlicePermuteTheirIndices) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  x = f32[4,6]{0,1} parameter(0)
  u = f32[2,3]{0,1} parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  d = f32[2,3]{0,1} dynamic-slice(x, i, j), dynamic_slice_sizes={2,3}
  m = f32[2,3]{0,1} multiply(d, u)
  ROOT o = f32[4,6]{0,1} dynamic-update-slice(x, m, j, i)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[3,2]{1,0} dynamic-slice(", "dynamic_slice_sizes={3,2}",
                               "f32[6,4]{1,0} dynamic-update-slice("}))
      << r.text;
}

TEST(LayoutNormalizationTest, SelectAndCompareUseTheNormalizedOperands) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  a = f32[2,3,4]{1,2,0} parameter(0)
  b = f32[2,3,4]{1,2,0} parameter(1)
  c = pred[2,3,4]{1,2,0} compare(a, b), direction=GT
  ROOT s = f32[2,3,4]{1,2,0} select(c, a, b)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"pred[2,4,3]{2,1,0} compare(", "f32[2,4,3]{2,1,0} select("})) << r.text;
}

TEST(LayoutNormalizationTest, EdgeCaseTupleElementsAreNormalizedOneByOne) {
  // The tuple itself is left alone; the element with a non-default layout
  // gets its bitcasts after the get-tuple-element.
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = (f32[2,3]{0,1}, f32[4]{0}) parameter(0)
  g = f32[2,3]{0,1} get-tuple-element(p), index=0
  ROOT n = f32[2,3]{0,1} negate(g)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"get-tuple-element(", "f32[3,2]{1,0} bitcast(", "f32[3,2]{1,0} negate("})) << r.text;
}

TEST(LayoutNormalizationTest, EdgeCaseGetTupleElementWithDefaultLayoutIsUnchanged) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p0 = f32[2,2]{1,0} parameter(0)
  tuple = (f32[2,2]{1,0}) tuple(p0)
  ROOT gte = f32[2,2]{1,0} get-tuple-element(tuple), index=0
})");
  EXPECT_FALSE(r.changed);
}

}  // namespace
}  // namespace passlab
