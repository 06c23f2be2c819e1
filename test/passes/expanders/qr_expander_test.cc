#include <cmath>

#include "core/ir/str_util.h"
#include "passes/expanders/qr_expander.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

// Qr of `type`[batch, m, n], then Q from the first min(m, n) reflectors;
// the root is (Q, a').
std::string QrThenQ(const std::string& type, int64_t batch, int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  std::string a = StrCat(type, "[", batch, ",", m, ",", n, "]");
  std::string q = StrCat(type, "[", batch, ",", m, ",", k, "]");
  std::string taus = StrCat(type, "[", batch, ",", k, "]");
  return StrCat(R"(
ENTRY e {
  a = )", a, R"( parameter(0)
  qr = ()", a, ", ", taus, R"() custom-call(a), custom_call_target="Qr"
  r = )", a, R"( get-tuple-element(qr), index=0
  taus = )", taus, R"( get-tuple-element(qr), index=1
  reflectors = )", q, " slice(r), slice={[0:", batch, "], [0:", m, "], [0:", k, R"(]}
  q = )", q, R"( custom-call(reflectors, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
  ROOT t = ()", q, ", ", a, R"() tuple(q, r)
})");
}

// After the expansion (RunPass already compared it with the evaluator's
// calls on random inputs): Q's columns orthonormal, R upper triangular,
// Q R = A, evaluated on the expanded module.
void ExpectExpandedQrFactors(const std::string& type, int64_t batch, int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  PassResult r = RunPass(std::make_unique<QrExpander>(), QrThenQ(type, batch, m, n));
  ASSERT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"NOT:custom-call("})) << r.text;
  std::vector<Literal> args = MakeRandomArguments(*r.module->entry_computation(), 11);
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(*r.module, args);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const Literal& q = out->tuple_elements()[0];
  const Literal& rr = out->tuple_elements()[1];
  const double tolerance = type == "f64" ? 1e-12 : 1e-5;
  for (int64_t b = 0; b < batch; ++b) {
    auto Q = [&](int64_t i, int64_t j) { return q.GetDouble((b * m + i) * k + j); };
    auto R = [&](int64_t i, int64_t j) { return i > j ? 0.0 : rr.GetDouble((b * m + i) * n + j); };
    auto A = [&](int64_t i, int64_t j) { return args[0].GetDouble((b * m + i) * n + j); };
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        double dot = 0;
        for (int64_t l = 0; l < m; ++l) dot += Q(l, i) * Q(l, j);
        EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, tolerance) << "Q^T Q at " << b << "," << i << "," << j;
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l) sum += Q(i, l) * R(l, j);
        EXPECT_NEAR(sum, A(i, j), tolerance * 10) << "Q R at " << b << "," << i << "," << j;
      }
    }
  }
}

TEST(QrExpanderTest, ExpandsQrIntoHouseholderLoop) {
  PassResult r = RunPass(std::make_unique<QrExpander>(), R"(
ENTRY e {
  a = f32[4,3] parameter(0)
  ROOT qr = (f32[4,3], f32[3]) custom-call(a), custom_call_target="Qr"
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%householder_qr_condition", "%householder_qr_body", "sqrt(", "negate(", "divide(", "dot(",
                               "multiply(", "dynamic-update-slice(", "ENTRY", "f32[1,4,3]{2,1,0} reshape(",
                               "while(", "ROOT", "(f32[4,3]{1,0}, f32[3]{0}) tuple(", "NOT:custom-call("}))
      << r.text;
}

TEST(QrExpanderTest, ExpandsProductOfReflectorsIntoLoop) {
  PassResult r = RunPass(std::make_unique<QrExpander>(), R"(
ENTRY e {
  a = f64[2,5,3] parameter(0)
  taus = f64[2,2] parameter(1)
  ROOT q = f64[2,5,3] custom-call(a, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%householder_product_condition", "%householder_product_body", "subtract(", "dot(",
                               "ENTRY", "while(", "ROOT", "get-tuple-element(%while), index=3", "NOT:custom-call("}))
      << r.text;
}

TEST(QrExpanderTest, TallFactorsAreOrthonormalTimesUpperTriangular) {
  ExpectExpandedQrFactors("f64", 2, 5, 3);
  ExpectExpandedQrFactors("f32", 1, 6, 4);
}

TEST(QrExpanderTest, SquareAndWideFactors) {
  ExpectExpandedQrFactors("f64", 1, 4, 4);
  ExpectExpandedQrFactors("f64", 2, 2, 5);
}

// A column already zero below the diagonal is its own reflection: tau 0,
// the column kept (no division by zero).
TEST(QrExpanderTest, EdgeCaseZeroColumnTailGivesZeroTau) {
  PassResult r = RunPass(std::make_unique<QrExpander>(), R"(
ENTRY e {
  a = f32[3,3] constant({{2, 1, 0}, {0, 0, 1}, {0, 3, 0}})
  ROOT qr = (f32[3,3], f32[3]) custom-call(a), custom_call_target="Qr"
})");
  ASSERT_TRUE(r.changed);
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(*r.module, {});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const Literal& a = out->tuple_elements()[0];
  const Literal& taus = out->tuple_elements()[1];
  EXPECT_EQ(taus.GetDouble(0), 0.0);
  EXPECT_EQ(a.GetDouble(0), 2.0);
  // Column 1 from row 1 is (0, 3): alpha = 0, beta = -3, tau = 1, v = (1, 3 / 3).
  EXPECT_NEAR(taus.GetDouble(1), 1.0, 1e-6);
  EXPECT_NEAR(a.GetDouble(4), -3.0, 1e-6);
  EXPECT_NEAR(a.GetDouble(7), 1.0, 1e-6);
  for (int64_t i = 0; i < 3; ++i) EXPECT_FALSE(std::isnan(a.GetDouble(i * 3 + i))) << i;
}

TEST(QrExpanderTest, EdgeCaseEmptyMatrix) {
  PassResult r = RunPass(std::make_unique<QrExpander>(), R"(
ENTRY e {
  a = f32[2,0,3] parameter(0)
  ROOT qr = (f32[2,0,3], f32[2,0]) custom-call(a), custom_call_target="Qr"
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // No reflectors: Q is the first columns of the identity.
  PassResult q = RunPass(std::make_unique<QrExpander>(), R"(
ENTRY e {
  a = f32[4,3] parameter(0)
  taus = f32[0] parameter(1)
  ROOT q = f32[4,3] custom-call(a, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
})");
  EXPECT_TRUE(q.changed);
  ExpectModuleVerifies(q);
  EXPECT_TRUE(Matches(q.text, {"NOT:while(", "NOT:custom-call("})) << q.text;
}

TEST(QrExpanderTest, LeavesComplexAndOtherCustomCalls) {
  EXPECT_FALSE(RunPass(std::make_unique<QrExpander>(), R"(
ENTRY e {
  a = c64[3,3] parameter(0)
  ROOT qr = (c64[3,3], c64[3]) custom-call(a), custom_call_target="Qr"
})").changed);
  EXPECT_FALSE(RunPass(std::make_unique<QrExpander>(), R"(
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT s = f32[3,3] custom-call(a), custom_call_target="Sharding", sharding={replicated}
})").changed);
}

TEST(QrExpanderTest, MalformedCallNamesTheInstruction) {
  auto m = ParseHloModule(R"(
ENTRY e {
  a = f32[4,3] parameter(0)
  ROOT bad_qr = (f32[4,3], f32[4]) custom-call(a), custom_call_target="Qr"
})");
  ASSERT_TRUE(m.ok());
  HloPassPipeline pipeline("test");
  pipeline.AddPass<QrExpander>();
  absl::StatusOr<bool> changed = pipeline.Run(**m);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("qr_expander: bad_qr"), std::string::npos) << changed.status().message();
}

// The corpus has no QR calls: the check is that the expander leaves every
// other custom call alone and every module still verifies.
TEST(QrExpanderTest, CorpusCustomCallsAreLeftAlone) {
  CorpusPassStats stats = CheckPassOnCorpus("custom-call(", [] { return std::make_unique<QrExpander>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(stats.candidates, 0);
  EXPECT_EQ(stats.changed, 0);
}

}  // namespace
}  // namespace passlab
