#include "passes/libcall/cudnn_pad_for_convolutions.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

TEST(CudnnPadForConvolutionsTest, PadsF16FeaturesToMultiplesOfEight) {
  PassResult r = RunPass(std::make_unique<CudnnPadForConvolutions>(), R"(
ENTRY e {
  x = f16[2,6,6,6] parameter(0)
  w = f16[3,3,6,7] parameter(1)
  c = (f16[2,6,6,7], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
      custom_call_target="__dnn$convForward"
  ROOT r = f16[2,6,6,7] get-tuple-element(c), index=0
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f16[2,6,6,8]{3,2,1,0} pad(%x", "padding=0_0x0_0x0_0x0_2",
                               "f16[3,3,8,8]{3,2,1,0} pad(%w", "padding=0_0x0_0x0_2x0_1",
                               "(f16[2,6,6,8]{3,2,1,0}, u8[0]{0}) custom-call(", "f16[2,6,6,7]{3,2,1,0} slice("}))
      << r.text;
}

TEST(CudnnPadForConvolutionsTest, EdgeCaseFusedCallPadsBiasAndSideInput) {
  PassResult r = RunPass(std::make_unique<CudnnPadForConvolutions>(), R"(
ENTRY e {
  x = bf16[1,5,5,8] parameter(0)
  w = bf16[3,3,8,12] parameter(1)
  b = bf16[12] parameter(2)
  s = bf16[1,5,5,12] parameter(3)
  c = (bf16[1,5,5,12], u8[0]) custom-call(x, w, b, s), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
      custom_call_target="__dnn$convBiasActivationForward",
      backend_config={"cudnn_conv_backend_config":{"activation_mode":"kRelu","conv_result_scale":1,"side_input_scale":0.5}}
  ROOT r = bf16[1,5,5,12] get-tuple-element(c), index=0
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // Input features are already 8: only the output side grows to 16.
  EXPECT_TRUE(Matches(r.text, {"NOT:bf16[1,5,5,16]{3,2,1,0} pad(%x", "bf16[3,3,8,16]{3,2,1,0} pad(%w",
                               "bf16[16]{0} pad(%b", "bf16[1,5,5,16]{3,2,1,0} pad(%s", "custom-call(", "slice("}))
      << r.text;
}

TEST(CudnnPadForConvolutionsTest, LeavesF32AlignedAndCostlyCalls) {
  // f32 (no tensor-core padding), already aligned f16, and a 1-channel f16
  // input whose padding to 8 would touch far more bytes.
  EXPECT_FALSE(RunPass(std::make_unique<CudnnPadForConvolutions>(), R"(
ENTRY e {
  x = f32[1,4,4,3] parameter(0)
  w = f32[3,3,3,5] parameter(1)
  c = (f32[1,4,4,5], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
      custom_call_target="__dnn$convForward"
  h = f16[1,4,4,8] parameter(2)
  v = f16[3,3,8,16] parameter(3)
  d = (f16[1,4,4,16], u8[0]) custom-call(h, v), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
      custom_call_target="__dnn$convForward"
  g = f16[1,8,8,1] parameter(4)
  u = f16[3,3,1,8] parameter(5)
  k = (f16[1,8,8,8], u8[0]) custom-call(g, u), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
      custom_call_target="__dnn$convForward"
  c0 = f32[1,4,4,5] get-tuple-element(c), index=0
  d0 = f16[1,4,4,16] get-tuple-element(d), index=0
  k0 = f16[1,8,8,8] get-tuple-element(k), index=0
  ROOT t = (f32[1,4,4,5], f16[1,4,4,16], f16[1,8,8,8]) tuple(c0, d0, k0)
})").changed);
}

}  // namespace
}  // namespace passlab
