#include "passes/libcall/gemm_rewriter.h"

#include "passes/simplifiers/transpose_folding.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

PassResult RunGemmRewriter(const std::string& hlo) {
  PassResult r = RunPass(std::make_unique<GemmRewriter>(), hlo);
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

TEST(GemmRewriterTest, RewritesDotIntoGemmCall) {
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT", "f32[2,4]{1,0} custom-call(%a, %b)", "custom_call_target=\"__blas$gemm\"",
                               "\"alpha_real\":1.0", "\"beta\":0.0", "\"lhs_contracting_dimensions\":[\"1\"]",
                               "\"rhs_contracting_dimensions\":[\"0\"]", "\"epilogue\":\"DEFAULT\"", "NOT: dot("}))
      << r.text;
}

TEST(GemmRewriterTest, KeepsBatchDimensionsInTheConfig) {
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = f32[5,2,3] parameter(0)
  b = f32[5,4,3] parameter(1)
  ROOT d = f32[5,2,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"\"lhs_batch_dimensions\":[\"0\"]", "\"lhs_contracting_dimensions\":[\"2\"]",
                               "\"rhs_batch_dimensions\":[\"0\"]", "\"rhs_contracting_dimensions\":[\"2\"]"}))
      << r.text;
}

TEST(GemmRewriterTest, TransposeFoldingFirstLeavesNoTranspose) {
  // transpose(b) feeds the dot: TransposeFolding moves it into the dimension
  // numbers, and the gemm reads b as stored.
  auto pipeline = std::make_unique<HloPassPipeline>("tf+gemm");
  pipeline->AddPass<TransposeFolding>();
  pipeline->AddPass<GemmRewriter>();
  PassResult r = RunPass(std::move(pipeline), R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[4,3] parameter(1)
  t = f32[3,4] transpose(b), dimensions={1,0}
  ROOT d = f32[2,4] dot(a, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"NOT:transpose(", "custom-call(%a, %b)", "\"rhs_contracting_dimensions\":[\"1\"]"}))
      << r.text;
}

TEST(GemmRewriterTest, FoldsAlphaBetaAndBias) {
  // 2*(a.b) + c + broadcast(v) => one call: alpha 2, beta 1, C, bias epilogue.
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  c = f32[2,4] parameter(2)
  v = f32[4] parameter(3)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  two = f32[] constant(2)
  bt = f32[2,4] broadcast(two), dimensions={}
  m = f32[2,4] multiply(d, bt)
  s = f32[2,4] add(m, c)
  bv = f32[2,4] broadcast(v), dimensions={1}
  ROOT r = f32[2,4] add(bv, s)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT", "custom-call(%a, %b, %c, %v)", "\"alpha_real\":2.0", "\"beta\":1.0",
                               "\"epilogue\":\"BIAS\"", "NOT: add(", "NOT: multiply("}))
      << r.text;
}

TEST(GemmRewriterTest, FoldsBiasThenRelu) {
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = f32[6,3] parameter(0)
  b = f32[3,4] parameter(1)
  v = f32[4] parameter(2)
  d = f32[6,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bv = f32[6,4] broadcast(v), dimensions={1}
  s = f32[6,4] add(d, bv)
  z = f32[] constant(0)
  bz = f32[6,4] broadcast(z), dimensions={}
  ROOT r = f32[6,4] maximum(s, bz)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT", "custom-call(%a, %b, %v)", "\"epilogue\":\"BIAS_RELU\"", "NOT: maximum("}))
      << r.text;
}

TEST(GemmRewriterTest, KeepsAddWhenTheGemmHasAnotherUser) {
  // d is used twice: folding the add would compute the product twice.
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  c = f32[2,4] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[2,4] add(d, c)
  ROOT t = (f32[2,4], f32[2,4]) tuple(s, d)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%a, %b)", "\"beta\":0.0", "add("})) << r.text;
}

TEST(GemmRewriterTest, KeepsAddWhenCHasAnotherUser) {
  // XLA's rule (seed 003): the call writes its result over C, so C must have
  // no other user.
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  c = f32[2,4] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[2,4] add(d, c)
  ROOT t = (f32[2,4], f32[2,4]) tuple(s, c)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%a, %b)", "\"beta\":0.0", "add("})) << r.text;
}

TEST(GemmRewriterTest, KeepsAlphaAfterBeta) {
  // 3*(a.b + c): alpha would also have to scale C; XLA folds alpha only into
  // a bare product.
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  c = f32[2,4] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[2,4] add(d, c)
  k = f32[] constant(3)
  bk = f32[2,4] broadcast(k), dimensions={}
  ROOT m = f32[2,4] multiply(s, bk)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"\"alpha_real\":1.0", "\"beta\":1.0", "ROOT", "multiply("})) << r.text;
}

TEST(GemmRewriterTest, KeepsIntegerDots) {
  EXPECT_FALSE(RunGemmRewriter(R"(
ENTRY e {
  a = s32[2,3] parameter(0)
  b = s32[3,4] parameter(1)
  ROOT d = s32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})").changed);
}

TEST(GemmRewriterTest, EdgeCaseBf16AndVectorDot) {
  // A bf16 dot and a dot with no free dims (a scalar result) still are gemms.
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = bf16[4,8] parameter(0)
  b = bf16[8,2] parameter(1)
  x = f32[5] parameter(2)
  y = f32[5] parameter(3)
  d = bf16[4,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (bf16[4,2], f32[]) tuple(d, s)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"bf16[4,2]{1,0} custom-call(%a, %b)", "f32[] custom-call(%x, %y)", "NOT: dot("}))
      << r.text;
}

TEST(GemmRewriterTest, CorpusDotsBecomeGemmsThatComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" dot(", [] { return std::make_unique<GemmRewriter>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus";
  EXPECT_GT(stats.changed, 50);
  EXPECT_GT(stats.evaluated, 20);
}

}  // namespace
}  // namespace passlab
