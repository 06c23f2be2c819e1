#include "passes/libcall/gemm_rewriter.h"

#include "absl/strings/str_cat.h"

#include "passes/simplifiers/transpose_folding.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

PassResult RunGemmRewriter(const std::string& hlo, GemmRewriterOptions options = {}) {
  PassResult r = RunPass(std::make_unique<GemmRewriter>(options), hlo);
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
  // The workspace is the operands' 72 bytes (less than Hopper's 32 MiB).
  EXPECT_TRUE(Matches(r.text, {"(f32[2,4]{1,0}, s8[72]{0}) custom-call(%a, %b)", "custom_call_target=\"__blas$gemm\"",
                               "\"alpha_real\":1.0", "\"beta\":0.0", "\"lhs_contracting_dimensions\":[\"1\"]",
                               "\"rhs_contracting_dimensions\":[\"0\"]", "\"epilogue\":\"DEFAULT\"", "ROOT",
                               "f32[2,4]{1,0} get-tuple-element(", "index=0", "NOT: dot("}))
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
  EXPECT_TRUE(Matches(r.text, {"custom-call(%a, %b, %c, %v)", "\"alpha_real\":2.0", "\"beta\":1.0",
                               "\"epilogue\":\"BIAS\"", "ROOT", "get-tuple-element(", "NOT: add(", "NOT: multiply("}))
      << r.text;
  // C is an entry parameter without an output alias: the gemm may not
  // overwrite it (XLA's can_overwrite_bias).
  EXPECT_EQ(r.text.find("output_to_operand_aliasing"), std::string::npos) << r.text;
}

TEST(GemmRewriterTest, FoldedCIsOverwrittenWhereNothingElseReadsIt) {
  // xla/backends/gpu/transforms/gemm_rewriter.cc FuseMatrixBiasAdd: a C
  // that is no parameter and has no other user aliases the result, {0}:
  // (2, {}) once the workspace joins it (XLA's gemm_rewriter_test.cc,
  // CublasLtGemmRewriteTest.MatrixBiasWhereBiasIsNotAParameter). A
  // parameter C aliased with an output may be overwritten as well.
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  w = f32[2,4] parameter(2)
  c = f32[2,4] negate(w)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[2,4] add(d, c)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%a, %b, %c)", "output_to_operand_aliasing={{0}: (2, {})}",
                               "\"beta\":1.0"}))
      << r.text;
  PassResult aliased = RunGemmRewriter(R"(HloModule m, input_output_alias={ {}: (2, {}, may-alias) }
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  c = f32[2,4] parameter(2)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[2,4] add(d, c)
})");
  EXPECT_TRUE(aliased.changed);
  EXPECT_TRUE(Matches(aliased.text, {"custom-call(%a, %b, %c)", "output_to_operand_aliasing={{0}: (2, {})}"}))
      << aliased.text;
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
  EXPECT_TRUE(Matches(r.text, {"custom-call(%a, %b, %v)", "\"epilogue\":\"BIAS_RELU\"", "ROOT", "get-tuple-element(",
                               "NOT: maximum("}))
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
  EXPECT_TRUE(Matches(r.text, {"(bf16[4,2]{1,0}, s8[96]{0}) custom-call(%a, %b)", "(f32[], s8[40]{0}) custom-call(%x, %y)",
                               "NOT: dot("}))
      << r.text;
}

// The sum of two products, as in XLA's GemmRewriteTest.DotWithBias and
// DotWithoutBias (gemm_rewriter_test.cc), at a size the evaluator checks.
constexpr char kSumOfTwoDots[] = R"(
ENTRY main {
  p0 = f32[16,8] parameter(0)
  p1 = f32[8,4] parameter(1)
  p2 = f32[16,8] parameter(2)
  p3 = f32[8,4] parameter(3)
  dot0 = f32[16,4] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot1 = f32[16,4] dot(p2, p3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT root = f32[16,4] add(dot0, dot1)
})";

TEST(GemmRewriterTest, FoldsOneProductAsTheOthersC) {
  // XLA's DotWithBias: dot1's call result (element 0) is C of dot0's call,
  // and the root reads the second call's element 0.
  PassResult r = RunGemmRewriter(kSumOfTwoDots);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[16,4]{1,0}, s8[640]{0}) custom-call(%p2, %p3)", "get-tuple-element(",
                               "(f32[16,4]{1,0}, s8[896]{0}) custom-call(%p0, %p1, %get-tuple-element",
                               "\"beta\":1.0", "ROOT", "get-tuple-element(", "index=0", "NOT: add("}))
      << r.text;
}

TEST(GemmRewriterTest, NoBiasModeKeepsTheSumOfTwoGemms) {
  // XLA's DotWithoutBias (BiasMode::kNoBias): two independent calls, the
  // add of their results stays.
  PassResult r = RunGemmRewriter(kSumOfTwoDots, {.bias_mode = GemmRewriterOptions::BiasMode::kNoBias});
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[16,4]{1,0}, s8[640]{0}) custom-call(%p0, %p1)", "get-tuple-element(",
                               "(f32[16,4]{1,0}, s8[640]{0}) custom-call(%p2, %p3)", "get-tuple-element(",
                               "ROOT", "add(", "NOT:\"beta\":1.0"}))
      << r.text;
}

TEST(GemmRewriterTest, NoBiasModeAlsoKeepsABiasVectorAdd) {
  // kNoBias folds no add at all: XLA's HandleAdd returns first.
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = f32[6,3] parameter(0)
  b = f32[3,4] parameter(1)
  v = f32[4] parameter(2)
  d = f32[6,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bv = f32[6,4] broadcast(v), dimensions={1}
  ROOT s = f32[6,4] add(d, bv)
})",
                                 {.bias_mode = GemmRewriterOptions::BiasMode::kNoBias});
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%a, %b)", "\"epilogue\":\"DEFAULT\"", "ROOT", "add("})) << r.text;
}

TEST(GemmRewriterTest, WorkspaceIsCappedByTheComputeCapability) {
  // XLA's GemmConfig: at most 4 MiB before Hopper (the s8[4194304] of
  // DotWithBias, run with CudaComputeCapability{}), 32 MiB from Hopper on;
  // within that, the operands' bytes (4 MiB + 4 KiB here). A matrix-vector
  // product keeps the evaluator quick.
  constexpr char kMatrixVector[] = R"(
ENTRY e {
  a = f32[1024,1024] parameter(0)
  x = f32[1024,1] parameter(1)
  ROOT d = f32[1024,1] dot(a, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  PassResult ampere = RunGemmRewriter(kMatrixVector, {.compute_capability_major = 8});
  EXPECT_TRUE(Matches(ampere.text, {"(f32[1024,1]{1,0}, s8[4194304]{0}) custom-call(%a, %x)"})) << ampere.text;
  PassResult hopper = RunGemmRewriter(kMatrixVector);
  EXPECT_TRUE(Matches(hopper.text, {"(f32[1024,1]{1,0}, s8[4198400]{0}) custom-call(%a, %x)"})) << hopper.text;
}

TEST(GemmRewriterTest, KeepsTheConvertAfterAFoldedAlpha) {
  // XLA's ParameterizedGemmRewriteTest.DoNotUpconvertOutput (f16 -> f32)
  // and UnsupportedMixTypeGemm (to u8): the scale becomes alpha, the
  // convert of the result stays: convert(get-tuple-element(gemm, 0)). The
  // tests scale by 255; 2 here, so that scaling before or after the f16
  // rounding gives the same values on the evaluator.
  for (const char* to : {"f32", "u8"}) {
    PassResult r = RunGemmRewriter(absl::StrCat(R"(
ENTRY main {
  param_0 = f16[24,8] parameter(0)
  param_1 = f16[8,4] parameter(1)
  dot = f16[24,4] dot(param_0, param_1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
  two = f16[] constant(2)
  broadcast = f16[24,4] broadcast(two), dimensions={}
  multiply = f16[24,4] multiply(dot, broadcast)
  ROOT result = )", to, R"([24,4] convert(multiply)
})"));
    EXPECT_TRUE(r.changed);
    EXPECT_TRUE(Matches(r.text, {"custom-call(%param_0, %param_1)", "\"alpha_real\":2.0",
                                 "f16[24,4]{1,0} get-tuple-element(", "index=0", "ROOT",
                                 absl::StrCat(to, "[24,4]{1,0} convert(%get-tuple-element"), "NOT: multiply("}))
        << r.text;
  }
}

TEST(GemmRewriterTest, EdgeCaseExistingCallGetsAWorkspaceAndKeepsItsAlias) {
  // A gemm call already in the module (array-shaped, as older XLA wrote it)
  // gets its workspace too; its output alias to C moves to element 0, as
  // XLA's GemmWorkspaceRewriteVisitor moves it.
  PassResult r = RunGemmRewriter(R"(
ENTRY e {
  a = f32[6,5] parameter(0)
  b = f32[5,7] parameter(1)
  c = f32[6,7] parameter(2)
  ROOT g = f32[6,7] custom-call(a, b, c), custom_call_target="__blas$gemm", output_to_operand_aliasing={{}: (2, {})}, backend_config={"gemm_backend_config":{"beta":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[6,7]{1,0}, s8[428]{0}) custom-call(%a, %b, %c)",
                               "output_to_operand_aliasing={{0}: (2, {})}", "ROOT", "get-tuple-element("}))
      << r.text;
}

TEST(GemmRewriterTest, EdgeCaseSecondRunChangesNothing) {
  // The calls already have their workspace; the folds match array-shaped
  // calls only, as XLA's do.
  PassResult first = RunGemmRewriter(kSumOfTwoDots);
  ASSERT_TRUE(first.changed);
  PassResult second = RunGemmRewriter(PrintModule(*first.module));
  EXPECT_FALSE(second.changed) << second.text;
}

TEST(GemmRewriterTest, CorpusDotsBecomeGemmsThatComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" dot(", [] { return std::make_unique<GemmRewriter>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus";
  EXPECT_GT(stats.changed, 50);
  EXPECT_GT(stats.evaluated, 20);
}

}  // namespace
}  // namespace passlab
