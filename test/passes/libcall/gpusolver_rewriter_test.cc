#include "passes/libcall/gpusolver_rewriter.h"

#include "core/ir/str_util.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

// a = x x^T + 4 I: symmetric positive definite, so the factor is finite and
// the comparison with the evaluator's cholesky means something.
std::string Spd(const std::string& type, const std::string& batch_dims, int64_t n) {
  std::string shape = StrCat(type, "[", batch_dims, n, ",", n, "]");
  std::string batch = batch_dims.empty() ? "" : "lhs_batch_dims={0}, rhs_batch_dims={0}, ";
  int64_t b = batch_dims.empty() ? 0 : 1;
  return StrCat("  x = ", shape, " parameter(0)\n  xxt = ", shape, " dot(x, x), ", batch, "lhs_contracting_dims={",
                b + 1, "}, rhs_contracting_dims={", b + 1, "}\n  four = ", type, "[] constant(4)\n  d = ", shape,
                " broadcast(four), dimensions={}\n  io0 = s32[", batch_dims, n, ",", n, "] iota(), iota_dimension=", b,
                "\n  io1 = s32[", batch_dims, n, ",", n, "] iota(), iota_dimension=", b + 1,
                "\n  eye = pred[", batch_dims, n, ",", n, "] compare(io0, io1), direction=EQ\n  zero = ", type,
                "[] constant(0)\n  z = ", shape, " broadcast(zero), dimensions={}\n  diag = ", shape,
                " select(eye, d, z)\n  a = ", shape, " add(xxt, diag)\n");
}

TEST(GpusolverRewriterTest, CholeskyBecomesPotrfCallWithNanOnFailure) {
  PassResult r = RunPass(std::make_unique<GpusolverRewriter>(), StrCat("ENTRY e {\n", Spd("f32", "", 5),
                                                                       "  ROOT c = f32[5,5] cholesky(a), lower=true\n}"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"(f32[5,5]{1,0}, s32[]) custom-call(", "custom_call_target=\"__lapack$potrf\"",
                               "\"lower\":true", "compare(", "direction=EQ", "constant(nan)", "ROOT",
                               "select(", "NOT:cholesky("}))
      << r.text;
}

TEST(GpusolverRewriterTest, EdgeCaseBatchedUpperF64) {
  PassResult r = RunPass(std::make_unique<GpusolverRewriter>(),
                         StrCat("ENTRY e {\n", Spd("f64", "3,", 4), "  ROOT c = f64[3,4,4] cholesky(a), lower=false\n}"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"(f64[3,4,4]{2,1,0}, s32[3]{0}) custom-call(", "\"lower\":false",
                               "pred[3,4,4]{2,1,0} broadcast(", "dimensions={0}"}))
      << r.text;
}

TEST(GpusolverRewriterTest, EdgeCaseNotPositiveDefiniteGivesNan) {
  // Random inputs are not positive definite: both forms give NaN matrices
  // (RunPass compares them).
  EXPECT_TRUE(RunPass(std::make_unique<GpusolverRewriter>(), R"(
ENTRY e {
  a = f32[2,3,3] parameter(0)
  ROOT c = f32[2,3,3] cholesky(a), lower=true
})").changed);
}

TEST(GpusolverRewriterTest, LeavesComplexCholesky) {
  EXPECT_FALSE(RunPass(std::make_unique<GpusolverRewriter>(), R"(
ENTRY e {
  a = c64[3,3] parameter(0)
  ROOT c = c64[3,3] cholesky(a), lower=true
})").changed);
}

}  // namespace
}  // namespace passlab
