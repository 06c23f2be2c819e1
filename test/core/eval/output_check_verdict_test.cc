// --check's verdicts when the inputs were random: a degenerate reference
// (constant outputs, NaN/Inf only in the compiled run) makes a failure
// "inconclusive" rather than a bare FAILED, and the places where a
// cancellation can produce NaN are named.
#include <vector>

#include "core/eval/output_check.h"
#include "core/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace passlab {
namespace {

OutputCheck Check(const std::vector<Literal>& expected, const std::vector<Literal>& actual, bool random) {
  std::vector<const Literal*> e, a;
  for (const Literal& l : expected) e.push_back(&l);
  for (const Literal& l : actual) a.push_back(&l);
  return CheckOutputs(e, a, OutputCheckOptions{.random_inputs = random});
}

std::vector<float> Ramp(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = 1.0f + 0.25f * static_cast<float>(i);
  return v;
}

TEST(OutputCheckVerdictTest, MatchIsOk) {
  std::vector<Literal> x;
  x.push_back(Literal::Vector<float>(Ramp(8)));
  OutputCheck c = Check(x, x, /*random=*/true);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.Verdict(), "ok: outputs match the reference");
}

TEST(OutputCheckVerdictTest, ConstantReferenceWithRandomInputsIsInconclusive) {
  std::vector<Literal> expected, actual;
  expected.push_back(Literal::Vector<float>(std::vector<float>(16, 0.0f)));  // a gradient that is all zero
  expected.push_back(Literal::Vector<float>(std::vector<float>(16, 6.0f)));  // ReLU6 clamped everywhere
  actual.push_back(Literal::Vector<float>(Ramp(16)));
  actual.push_back(Literal::Vector<float>(Ramp(16)));
  OutputCheck c = Check(expected, actual, /*random=*/true);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.degenerate.find("every differing output is constant in the reference (2, 1 all zero)"),
            std::string::npos)
      << c.degenerate;
  EXPECT_EQ(c.Verdict().rfind("FAILED, inconclusive (", 0), 0u) << c.Verdict();
  EXPECT_NE(c.Verdict().find("--args DIR"), std::string::npos) << c.Verdict();
}

TEST(OutputCheckVerdictTest, SameFailureOnRealArgumentsIsAPlainFailure) {
  std::vector<Literal> expected, actual;
  expected.push_back(Literal::Vector<float>(std::vector<float>(16, 0.0f)));
  actual.push_back(Literal::Vector<float>(Ramp(16)));
  OutputCheck c = Check(expected, actual, /*random=*/false);
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.degenerate.empty()) << c.degenerate;
  EXPECT_EQ(c.Verdict().rfind("FAILED: output 0", 0), 0u) << c.Verdict();
}

TEST(OutputCheckVerdictTest, NonFiniteOnlyInTheCompiledRunPointsAtACancellation) {
  std::vector<float> bad = Ramp(32);
  bad[3] = NAN;
  bad[4] = NAN;
  bad[9] = INFINITY;
  std::vector<Literal> expected, actual;
  expected.push_back(Literal::Vector<float>(Ramp(4)));
  expected.push_back(Literal::Vector<float>(Ramp(32)));
  actual.push_back(Literal::Vector<float>(Ramp(4)));
  actual.push_back(Literal::Vector<float>(bad));
  OutputCheck c = Check(expected, actual, /*random=*/true);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.degenerate.find("NaN/Inf where the reference is finite (3 elements in 1 outputs, first output 1)"),
            std::string::npos)
      << c.degenerate;
  EXPECT_NE(c.degenerate.find("E[x^2]-E[x]^2"), std::string::npos) << c.degenerate;
  EXPECT_EQ(c.Verdict().rfind("FAILED, inconclusive (", 0), 0u);
}

TEST(OutputCheckVerdictTest, AGenuineMismatchOnRandomInputsStaysFailed) {
  std::vector<float> off = Ramp(16);
  for (float& x : off) x *= 1.2f;
  std::vector<Literal> expected, actual;
  expected.push_back(Literal::Vector<float>(Ramp(16)));
  actual.push_back(Literal::Vector<float>(off));
  OutputCheck c = Check(expected, actual, /*random=*/true);
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.degenerate.empty()) << c.degenerate;
  EXPECT_EQ(c.Verdict().rfind("FAILED: ", 0), 0u) << c.Verdict();
}

// The variance as XLA's batchnorm_expander writes it (E[x^2] - E[x]^2,
// then + epsilon and rsqrt), and a batch-norm-training left unexpanded.
TEST(OutputCheckVerdictTest, FindsCancellationSites) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(R"(
HloModule var
ENTRY e {
  ex2 = f32[4] parameter(0)
  ex = f32[4] parameter(1)
  ex_sq = f32[4] multiply(ex, ex)
  var = f32[4] subtract(ex2, ex_sq)
  eps = f32[] constant(0.001)
  epsb = f32[4] broadcast(eps), dimensions={}
  var_eps = f32[4] add(var, epsb)
  ROOT inv = f32[4] rsqrt(var_eps)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<std::string> sites = FindCancellationSites(**m);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0], "subtract 'var' -> rsqrt 'inv' in e");

  absl::StatusOr<std::unique_ptr<HloModule>> bn = ParseHloModule(R"(
HloModule bn
ENTRY e {
  x = f32[2,3] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  ROOT t = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
}
)");
  ASSERT_TRUE(bn.ok()) << bn.status();
  sites = FindCancellationSites(**bn);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_NE(sites[0].find("batch-norm-training 't'"), std::string::npos) << sites[0];

  absl::StatusOr<std::unique_ptr<HloModule>> none = ParseHloModule(R"(
HloModule none
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] rsqrt(x)
}
)");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(FindCancellationSites(**none).empty());
}

}  // namespace
}  // namespace passlab
