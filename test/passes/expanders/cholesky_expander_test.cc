#include <cmath>

#include "core/ir/str_util.h"
#include "passes/expanders/cholesky_expander.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

// A module factoring x x^T + n I (positive definite for every x) of shape
// `type`[batch, n, n], so that RunPass's evaluator comparison on random
// inputs compares real factors, not NaNs.
std::string PositiveDefiniteCholesky(const std::string& type, int64_t batch, int64_t n, bool lower) {
  std::string s = StrCat(type, "[", batch, ",", n, ",", n, "]");
  return StrCat(R"(
ENTRY e {
  x = )", s, R"( parameter(0)
  xxt = )", s, R"( dot(x, x), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  i0 = s32[)", batch, ",", n, ",", n, R"(] iota(), iota_dimension=1
  i1 = s32[)", batch, ",", n, ",", n, R"(] iota(), iota_dimension=2
  eq = pred[)", batch, ",", n, ",", n, R"(] compare(i0, i1), direction=EQ
  eye = )", s, R"( convert(eq)
  c = )", type, R"([] constant()", n, R"()
  cs = )", s, R"( broadcast(c), dimensions={}
  shift = )", s, R"( multiply(eye, cs)
  a = )", s, R"( add(xxt, shift)
  ROOT l = )", s, " cholesky(a), lower=", lower ? "true" : "false", R"(
})");
}

// Evaluates the expanded module and checks the factor itself: triangular,
// with L L^T (or U^T U) equal to the input matrix.
void ExpectFactorReconstructsInput(const std::string& type, int64_t batch, int64_t n, bool lower,
                                   int64_t block_size) {
  std::string hlo = PositiveDefiniteCholesky(type, batch, n, lower);
  PassResult r = RunPass(std::make_unique<CholeskyExpander>(CholeskyExpanderOptions{block_size}), hlo);
  ASSERT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // The input matrix: the same module with the cholesky's operand as root.
  auto input_module = ParseHloModule(
      std::string(hlo).replace(hlo.find("ROOT l"), 6, "l").replace(hlo.find("  a = "), 6, "  ROOT a = "),
      "input.hlo");
  ASSERT_TRUE(input_module.ok()) << input_module.status().message();
  std::vector<Literal> args = MakeRandomArguments(*r.module->entry_computation(), 7);
  absl::StatusOr<Literal> factor = HloEvaluator().Evaluate(*r.module, args);
  absl::StatusOr<Literal> input = HloEvaluator().Evaluate(**input_module, args);
  ASSERT_TRUE(factor.ok() && input.ok());
  const double tolerance = type == "f64" ? 1e-10 : 1e-4;
  for (int64_t m = 0; m < batch; ++m) {
    auto at = [&](const Literal& l, int64_t i, int64_t j) { return l.GetDouble((m * n + i) * n + j); };
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        // Lower: L[i][k] for k <= i; upper: U[k][i] = L[i][k].
        auto lower_factor = [&](int64_t row, int64_t col) { return lower ? at(*factor, row, col) : at(*factor, col, row); };
        if (j > i) {
          EXPECT_EQ(lower_factor(i, j), 0.0) << "not triangular at " << m << "," << i << "," << j;
        }
        double sum = 0;
        for (int64_t k = 0; k <= std::min(i, j); ++k) sum += lower_factor(i, k) * lower_factor(j, k);
        double want = at(*input, i, j);
        EXPECT_NEAR(sum, want, tolerance * std::abs(want) + tolerance) << m << "," << i << "," << j;
      }
    }
  }
}

TEST(CholeskyExpanderTest, ExpandsSmallMatrixIntoUnblockedLoop) {
  PassResult r = RunPass(std::make_unique<CholeskyExpander>(), PositiveDefiniteCholesky("f32", 1, 4, true));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%cholesky_unblocked_condition", "%cholesky_unblocked_body", "dynamic-slice(", "dot(",
                               "sqrt(", "divide(", "dynamic-update-slice(", "and(", "ENTRY",
                               "while(", "select(", "NOT:cholesky(", "NOT:triangular-solve("}))
      << r.text;
}

TEST(CholeskyExpanderTest, LowerFactorReconstructsInput) { ExpectFactorReconstructsInput("f64", 2, 5, true, 128); }

TEST(CholeskyExpanderTest, UpperFactorReconstructsInput) { ExpectFactorReconstructsInput("f64", 1, 6, false, 128); }

// Panels of two columns over 7 (a last panel of one): the left-looking
// update, the diagonal loops and the triangular solves all take part.
TEST(CholeskyExpanderTest, BlockedFormMatchesUnblocked) {
  ExpectFactorReconstructsInput("f64", 2, 7, true, 2);
  ExpectFactorReconstructsInput("f32", 1, 5, false, 3);
  PassResult r = RunPass(std::make_unique<CholeskyExpander>(CholeskyExpanderOptions{.block_size = 2}),
                         PositiveDefiniteCholesky("f32", 1, 5, true));
  // Three panels: three diagonal loops, two solves below them.
  EXPECT_TRUE(Matches(r.text, {"%cholesky_unblocked_body", "%cholesky_unblocked_body.1",
                               "%cholesky_unblocked_body.2", "NOT:%cholesky_unblocked_body.3", "ENTRY",
                               "triangular-solve(", "lower=true, transpose_a=TRANSPOSE", "NOT:left_side=true",
                               "triangular-solve(", "NOT:cholesky("}))
      << r.text;
}

TEST(CholeskyExpanderTest, ExpandsHalfPrecisionAndKeepsBatchShape) {
  PassResult r = RunPass(std::make_unique<CholeskyExpander>(), R"(
ENTRY e {
  a = f16[2,3,3,3] parameter(0)
  ROOT l = f16[2,3,3,3] cholesky(a), lower=true
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f16[6,3,3]{2,1,0} reshape(", "while(", "ROOT", "f16[2,3,3,3]{3,2,1,0} reshape(",
                               "NOT:cholesky("}))
      << r.text;
}

// Not positive definite: the whole matrix is NaN, as the evaluator's (and
// the potrf call's) cholesky gives; the other batch member is unaffected.
TEST(CholeskyExpanderTest, NotPositiveDefiniteMatrixBecomesNaN) {
  PassResult r = RunPass(std::make_unique<CholeskyExpander>(), R"(
ENTRY e {
  a = f32[2,2,2] constant({{{1, 2}, {2, 1}}, {{4, 2}, {2, 2}}})
  ROOT l = f32[2,2,2] cholesky(a), lower=true
})");
  ASSERT_TRUE(r.changed);
  absl::StatusOr<Literal> l = HloEvaluator().Evaluate(*r.module, {});
  ASSERT_TRUE(l.ok()) << l.status().message();
  for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(l->GetDouble(i))) << i;
  EXPECT_EQ(l->GetDouble(4), 2.0);
  EXPECT_EQ(l->GetDouble(5), 0.0);
  EXPECT_EQ(l->GetDouble(6), 1.0);
  EXPECT_EQ(l->GetDouble(7), 1.0);
}

TEST(CholeskyExpanderTest, EdgeCaseEmptyMatrix) {
  PassResult r = RunPass(std::make_unique<CholeskyExpander>(), R"(
ENTRY e {
  a = f32[3,0,0] parameter(0)
  ROOT l = f32[3,0,0] cholesky(a), lower=false
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
}

TEST(CholeskyExpanderTest, LeavesComplexCholesky) {
  EXPECT_FALSE(RunPass(std::make_unique<CholeskyExpander>(), R"(
ENTRY e {
  a = c64[3,3] parameter(0)
  ROOT l = c64[3,3] cholesky(a), lower=true
})").changed);
}

TEST(CholeskyExpanderTest, CorpusModulesStillVerifyAndCompute) {
  CorpusPassStats stats = CheckPassOnCorpus(" cholesky(", [] { return std::make_unique<CholeskyExpander>(); });
  // The loops keep SmallModule from comparing values; the value checks are
  // the tests above.
  EXPECT_EQ(stats.changed, stats.candidates);
}

}  // namespace
}  // namespace passlab
