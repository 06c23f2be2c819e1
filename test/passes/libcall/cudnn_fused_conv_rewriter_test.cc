#include "passes/libcall/cudnn_fused_conv_rewriter.h"

#include "passes/libcall/conv_rewriter.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

PassResult RunFused(const std::string& hlo) {
  PassResult r = RunPass(std::make_unique<CudnnFusedConvRewriter>(), hlo);
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

TEST(CudnnFusedConvRewriterTest, FoldsBiasAndRelu) {
  PassResult r = RunFused(R"(
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  b = f32[4] parameter(2)
  c = (f32[2,6,6,4], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  v = f32[2,6,6,4] get-tuple-element(c), index=0
  bb = f32[2,6,6,4] broadcast(b), dimensions={3}
  s = f32[2,6,6,4] add(v, bb)
  z = f32[] constant(0)
  bz = f32[2,6,6,4] broadcast(z), dimensions={}
  ROOT r = f32[2,6,6,4] maximum(s, bz)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%x, %w, %b)", "custom_call_target=\"__dnn$convBiasActivationForward\"",
                               "\"activation_mode\":\"kRelu\"", "ROOT", "get-tuple-element(", "NOT: maximum(",
                               "NOT: add("}))
      << r.text;
}

// The fused call is a clone of the forward call with more operands (XLA's
// cudnn_fused_conv_rewriter.cc: CloneWithNewOperands), so it keeps its
// operand_precision (the JAX ResNet-50 step dump, step 25).
TEST(CudnnFusedConvRewriterTest, FusedCallKeepsOperandPrecision) {
  PassResult r = RunFused(R"(
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  b = f32[4] parameter(2)
  c = (f32[2,6,6,4], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, operand_precision={highest,highest}, custom_call_target="__dnn$convForward"
  v = f32[2,6,6,4] get-tuple-element(c), index=0
  bb = f32[2,6,6,4] broadcast(b), dimensions={3}
  ROOT s = f32[2,6,6,4] add(v, bb)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%x, %w, %b)", "operand_precision={highest,highest}",
                               "custom_call_target=\"__dnn$convBiasActivationForward\""}))
      << r.text;
}

TEST(CudnnFusedConvRewriterTest, FoldsScaleAndScaledSideInputWithAZeroBias) {
  // 0.5 * conv(x, w) + 2 * y
  PassResult r = RunFused(R"(
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  w = f32[3,3,2,3] parameter(1)
  y = f32[1,5,5,3] parameter(2)
  c = (f32[1,5,5,3], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  v = f32[1,5,5,3] get-tuple-element(c), index=0
  h = f32[] constant(0.5)
  bh = f32[1,5,5,3] broadcast(h), dimensions={}
  m = f32[1,5,5,3] multiply(v, bh)
  two = f32[] constant(2)
  b2 = f32[1,5,5,3] broadcast(two), dimensions={}
  ys = f32[1,5,5,3] multiply(y, b2)
  ROOT s = f32[1,5,5,3] add(m, ys)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[3]{0} broadcast(", "custom-call(%x, %w, %", ", %y)",
                               "custom_call_target=\"__dnn$convBiasActivationForward\"",
                               "\"conv_result_scale\":0.5", "\"side_input_scale\":2.0", "NOT: add("}))
      << r.text;
}

TEST(CudnnFusedConvRewriterTest, PipelineFromAPlainConvolution) {
  auto pipeline = std::make_unique<HloPassPipeline>("conv+fused");
  pipeline->AddPass<ConvRewriter>();
  pipeline->AddPass<CudnnFusedConvRewriter>();
  PassResult r = RunPass(std::move(pipeline), R"(
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  c = f32[2,6,6,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  bz = f32[2,6,6,4] broadcast(z), dimensions={}
  ROOT r = f32[2,6,6,4] maximum(bz, c)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"custom_call_target=\"__dnn$convBiasActivationForward\"",
                               "\"activation_mode\":\"kRelu\"", "NOT: maximum(", "NOT: convolution("}))
      << r.text;
}

TEST(CudnnFusedConvRewriterTest, KeepsConvolutionsWhoseResultIsUsedTwiceOrNotF32) {
  EXPECT_FALSE(RunFused(R"(
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  c = (f32[2,6,6,4], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  v = f32[2,6,6,4] get-tuple-element(c), index=0
  z = f32[] constant(0)
  bz = f32[2,6,6,4] broadcast(z), dimensions={}
  r = f32[2,6,6,4] maximum(v, bz)
  ROOT t = (f32[2,6,6,4], f32[2,6,6,4]) tuple(r, v)
})").changed);
  EXPECT_FALSE(RunFused(R"(
ENTRY e {
  x = bf16[2,6,6,3] parameter(0)
  w = bf16[3,3,3,4] parameter(1)
  c = (bf16[2,6,6,4], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  v = bf16[2,6,6,4] get-tuple-element(c), index=0
  z = bf16[] constant(0)
  bz = bf16[2,6,6,4] broadcast(z), dimensions={}
  ROOT r = bf16[2,6,6,4] maximum(v, bz)
})").changed);
}

TEST(CudnnFusedConvRewriterTest, EdgeCaseBackwardConvolutionsAreNotFused) {
  EXPECT_FALSE(RunFused(R"(
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  dy = f32[2,4,4,8] parameter(1)
  c = (f32[3,3,3,8], u8[0]) custom-call(x, dy), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convBackwardFilter"
  v = f32[3,3,3,8] get-tuple-element(c), index=0
  z = f32[] constant(0)
  bz = f32[3,3,3,8] broadcast(z), dimensions={}
  ROOT r = f32[3,3,3,8] maximum(v, bz)
})").changed);
}

TEST(CudnnFusedConvRewriterTest, CorpusConvolutionsStillComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" convolution(", [] {
    auto p = std::make_unique<HloPassPipeline>("conv+fused");
    p->AddPass<ConvRewriter>();
    p->AddPass<CudnnFusedConvRewriter>();
    return p;
  });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus";
  EXPECT_GT(stats.evaluated, 10);
}

}  // namespace
}  // namespace passlab
