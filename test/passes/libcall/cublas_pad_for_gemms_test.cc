#include "passes/libcall/cublas_pad_for_gemms.h"

#include "passes/libcall/gemm_rewriter.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

PassResult RunPad(const std::string& hlo, CublasPadForGemmsOptions options = {}) {
  PassResult r = RunPass(std::make_unique<CublasPadForGemms>(options), hlo);
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

TEST(CublasPadForGemmsTest, PadsBf16DimsToMultiplesOfEight) {
  PassResult r = RunPad(R"(
ENTRY e {
  a = bf16[3,5] parameter(0)
  b = bf16[5,7] parameter(1)
  ROOT d = bf16[3,7] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"bf16[8,8]{1,0} pad(%a, %", "padding=0_5x0_3", "bf16[8,8]{1,0} pad(%b, %",
                               "padding=0_3x0_1", "bf16[8,8]{1,0} dot(", "ROOT", "bf16[3,7]{1,0} slice(",
                               "slice={[0:3], [0:7]}"}))
      << r.text;
}

TEST(CublasPadForGemmsTest, PadsOnlyUnalignedDimsOfBatchedDots) {
  PassResult r = RunPad(R"(
ENTRY e {
  a = bf16[2,3,8] parameter(0)
  b = bf16[2,8,16] parameter(1)
  ROOT d = bf16[2,3,16] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"bf16[2,8,8]{2,1,0} pad(%a, %", "padding=0_0x0_5x0_0", "dot(%pad, %b)",
                               "bf16[2,3,16]{2,1,0} slice("}))
      << r.text;
}

TEST(CublasPadForGemmsTest, KeepsOtherTypesAlignedAndNonCanonicalDots) {
  EXPECT_FALSE(RunPad(R"(
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[5,7] parameter(1)
  ROOT d = f32[3,7] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})").changed);
  EXPECT_FALSE(RunPad(R"(
ENTRY e {
  a = bf16[8,16] parameter(0)
  b = bf16[16,8] parameter(1)
  ROOT d = bf16[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})").changed);
  EXPECT_FALSE(RunPad(R"(
ENTRY e {
  a = bf16[5,3] parameter(0)
  b = bf16[5,7] parameter(1)
  ROOT d = bf16[3,7] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})").changed);
}

TEST(CublasPadForGemmsTest, EdgeCaseF16OptionAndGemmAfterwards) {
  auto pipeline = std::make_unique<HloPassPipeline>("pad+gemm");
  pipeline->AddPass<CublasPadForGemms>(CublasPadForGemmsOptions{PrimitiveType::kF16, 4});
  pipeline->AddPass<GemmRewriter>();
  PassResult r = RunPass(std::move(pipeline), R"(
ENTRY e {
  a = f16[2,3] parameter(0)
  b = f16[3,1] parameter(1)
  ROOT d = f16[2,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f16[4,4]{1,0} pad(%a", "f16[4,4]{1,0} pad(%b", "(f16[4,4]{1,0}, s8[64]{0}) custom-call(",
                               "__blas$gemm", "f16[2,1]{1,0} slice("}))
      << r.text;
}

TEST(CublasPadForGemmsTest, CorpusBf16DotsStillVerify) {
  CorpusPassStats stats = CheckPassOnCorpus("bf16", [] { return std::make_unique<CublasPadForGemms>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus";
  EXPECT_GT(stats.changed, 5);
}

}  // namespace
}  // namespace passlab
