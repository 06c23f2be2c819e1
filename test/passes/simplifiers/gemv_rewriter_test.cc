// Tests follow xla/hlo/transforms/simplifiers/gemv_rewriter_test.cc (test
// names given; both the layout-sensitive and -insensitive instances).
#include "passes/simplifiers/gemv_rewriter.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<GemvRewriter> Pass(bool sensitive) {
  return std::make_unique<GemvRewriter>(GemvRewriterOptions{.is_layout_sensitive = sensitive});
}

// XLA: RewriteMatrixVectorMultiplicationToGemm.
TEST(GemvRewriterTest, RewritesMatrixVector) {
  for (bool sensitive : {true, false}) {
    const std::string op = sensitive ? "bitcast" : "reshape";
    PassResult r = RunPass(Pass(sensitive), R"(
ENTRY e {
  p0 = f32[32,7] parameter(0)
  p1 = f32[7] parameter(1)
  ROOT d = f32[32] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
    EXPECT_TRUE(r.changed);
    ExpectModuleVerifies(r);
    EXPECT_TRUE(Matches(r.text, {"f32[7,1]{1,0} " + op + "(%p1)", "f32[32,1]{1,0} dot(%p0, ",
                                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}", "ROOT", "f32[32]{0} " + op}))
        << r.text;
  }
}

// XLA: RewriteVectorMatrixMultiplicationToGemm,
// RewriteMatrixVectorMultiplicationWithBatch.
TEST(GemvRewriterTest, RewritesVectorMatrixAndBatched) {
  PassResult r = RunPass(Pass(true), R"(
ENTRY e {
  p0 = f32[7] parameter(0)
  p1 = f32[7,32] parameter(1)
  ROOT d = f32[32] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[7,1]{1,0} bitcast(%p0)", "f32[1,32]{1,0} dot("})) << r.text;
  r = RunPass(Pass(false), R"(
ENTRY e {
  p0 = f32[2,5,32,7] parameter(0)
  p1 = f32[2,5,7] parameter(1)
  ROOT d = f32[2,5,32] dot(p0, p1), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_contracting_dims={2}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[2,5,7,1]{3,2,1,0} reshape(%p1)", "f32[2,5,32,1]{3,2,1,0} dot("})) << r.text;
}

// XLA: DotNotRewriteVectorVectorMultiplication,
// DotNotRewriteMatrixMatrixMultiplication.
TEST(GemvRewriterTest, KeepsVectorVectorAndMatrixMatrix) {
  EXPECT_FALSE(RunPass(Pass(true), R"(
ENTRY e {
  p0 = f32[7] parameter(0)
  p1 = f32[7] parameter(1)
  ROOT d = f32[] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})").changed);
  EXPECT_FALSE(RunPass(Pass(true), R"(
ENTRY e {
  p0 = f32[5,7] parameter(0)
  p1 = f32[7,32] parameter(1)
  ROOT d = f32[5,32] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})").changed);
}

// XLA: DoNotRewriteDotsWithNonNormalizedLayout: an error when layout
// sensitive, no change otherwise.
TEST(GemvRewriterTest, EdgeCaseNonNormalizedLayout) {
  const char* kHlo = R"(
ENTRY e {
  p0 = f32[5,32,7]{2,1,0} parameter(0)
  p1 = f32[5,7]{0,1} parameter(1)
  ROOT d = f32[5,32]{0,1} dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})";
  EXPECT_FALSE(RunPass(Pass(false), kHlo).changed);
  auto m = ParseHloModule(kHlo, "t.hlo");
  ASSERT_TRUE(m.ok());
  HloPassPipeline p("t");
  p.AddPass<HloPassFixBase>(Pass(true), 1);
  absl::StatusOr<bool> result = p.Run(**m);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(std::string(result.status().message()).find("Layout is not normalized."), std::string::npos);
}

}  // namespace
}  // namespace passlab
