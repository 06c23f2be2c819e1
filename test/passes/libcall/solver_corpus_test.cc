// gpusolver-rewriter and triangular-solve-rewriter on the corpus: every
// module with a cholesky or triangular-solve still verifies and computes
// the same values after the pass.
#include "passes/libcall/gpusolver_rewriter.h"
#include "passes/libcall/triangular_solve_rewriter.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

TEST(SolverRewritersTest, CorpusCholeskyAndTriangularSolve) {
  CorpusPassStats potrf = CheckPassOnCorpus(" cholesky(", [] { return std::make_unique<GpusolverRewriter>(); });
  CorpusPassStats trsm =
      CheckPassOnCorpus("triangular-solve(", [] { return std::make_unique<TriangularSolveRewriter>(); });
  if (potrf.candidates + trsm.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(potrf.changed + trsm.changed, 0);
}

}  // namespace
}  // namespace passlab
