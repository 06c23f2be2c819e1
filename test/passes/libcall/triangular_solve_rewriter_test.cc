#include "passes/libcall/triangular_solve_rewriter.h"

#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

TEST(TriangularSolveRewriterTest, SolveBecomesTrsmCall) {
  PassResult r = RunPass(std::make_unique<TriangularSolveRewriter>(), R"(
ENTRY e {
  a = f32[4,4] parameter(0)
  b = f32[4,3] parameter(1)
  ROOT x = f32[4,3] triangular-solve(a, b), left_side=true, lower=true, transpose_a=TRANSPOSE
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT", "f32[4,3]{1,0} custom-call(%a, %b), custom_call_target=\"__blas$trsm\"",
                               "\"left_side\":true", "\"lower\":true", "\"transpose_a\":\"TRANSPOSE\""}))
      << r.text;
}

TEST(TriangularSolveRewriterTest, EdgeCaseBatchedRightSideUnitDiagonal) {
  PassResult r = RunPass(std::make_unique<TriangularSolveRewriter>(), R"(
ENTRY e {
  a = f64[2,3,3] parameter(0)
  b = f64[2,5,3] parameter(1)
  ROOT x = f64[2,5,3] triangular-solve(a, b), left_side=false, lower=false, unit_diagonal=true,
      transpose_a=NO_TRANSPOSE
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"\"left_side\":false", "\"unit_diagonal\":true"})) << r.text;
}

TEST(TriangularSolveRewriterTest, LeavesComplexSolve) {
  EXPECT_FALSE(RunPass(std::make_unique<TriangularSolveRewriter>(), R"(
ENTRY e {
  a = c64[3,3] parameter(0)
  b = c64[3,2] parameter(1)
  ROOT x = c64[3,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=ADJOINT
})").changed);
}

}  // namespace
}  // namespace passlab
