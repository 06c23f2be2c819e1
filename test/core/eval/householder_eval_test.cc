// The evaluator on XLA's Householder QR custom calls: "Qr" (geqrf's form)
// and "ProductOfElementaryHouseholderReflectors" (orgqr's form), on a
// hand-worked 2x2 example and on the defining properties (Q orthonormal
// columns, R upper triangular, Q R = A) for tall, square and wide batches.
#include <gtest/gtest.h>

#include <cmath>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

TEST(HouseholderEvalTest, QrOfTwoByTwoMatchesHandWorkedReflectors) {
  // Column 0 = (3, 4): beta = -5, tau = 1.6, v = (1, 0.5); column 1 then
  // has no tail: tau = 0.
  auto m = ParseHloModule(R"(
ENTRY e {
  a = f64[2,2] constant({{3, 1}, {4, 2}})
  ROOT qr = (f64[2,2], f64[2]) custom-call(a), custom_call_target="Qr"
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<Literal> r = HloEvaluator().Evaluate(**m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Literal& a = r->tuple_elements()[0];
  const Literal& taus = r->tuple_elements()[1];
  const double want_a[] = {-5, -2.2, 0.5, 0.4};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(a.GetDouble(i), want_a[i], 1e-12) << i;
  EXPECT_NEAR(taus.GetDouble(0), 1.6, 1e-12);
  EXPECT_EQ(taus.GetDouble(1), 0.0);
}

// Factors a batch of m x n matrices and checks Q R = A with Q's columns
// orthonormal and R upper triangular (Q from the first min(m, n) columns).
void ExpectQrProperties(int64_t batch, int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  std::string a = StrCat("f64[", batch, ",", m, ",", n, "]");
  std::string q_in = StrCat("f64[", batch, ",", m, ",", k, "]");
  auto module = ParseHloModule(StrCat(R"(
ENTRY e {
  a = )", a, R"( parameter(0)
  qr = ()", a, ", f64[", batch, ",", k, R"(]) custom-call(a), custom_call_target="Qr"
  r = )", a, R"( get-tuple-element(qr), index=0
  taus = f64[)", batch, ",", k, R"(] get-tuple-element(qr), index=1
  reflectors = )", q_in, " slice(r), slice={[0:", batch, "], [0:", m, "], [0:", k, R"(]}
  q = )", q_in, R"( custom-call(reflectors, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
  ROOT t = ()", q_in, ", ", a, R"() tuple(q, r)
})"));
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*module)->entry_computation(), 5);
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(**module, args);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const Literal& q = out->tuple_elements()[0];
  const Literal& r = out->tuple_elements()[1];
  for (int64_t b = 0; b < batch; ++b) {
    auto Q = [&](int64_t i, int64_t j) { return q.GetDouble((b * m + i) * k + j); };
    auto R = [&](int64_t i, int64_t j) { return i > j ? 0.0 : r.GetDouble((b * m + i) * n + j); };
    auto A = [&](int64_t i, int64_t j) { return args[0].GetDouble((b * m + i) * n + j); };
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        double dot = 0;
        for (int64_t l = 0; l < m; ++l) dot += Q(l, i) * Q(l, j);
        EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-12) << "Q^T Q at " << b << "," << i << "," << j;
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l) sum += Q(i, l) * R(l, j);
        EXPECT_NEAR(sum, A(i, j), 1e-12) << "Q R at " << b << "," << i << "," << j;
      }
    }
  }
}

TEST(HouseholderEvalTest, TallSquareAndWideFactorizationsReconstructInput) {
  ExpectQrProperties(2, 5, 3);
  ExpectQrProperties(1, 4, 4);
  ExpectQrProperties(3, 2, 5);
}

TEST(HouseholderEvalTest, ProductRejectsMoreReflectorsThanColumns) {
  auto m = ParseHloModule(R"(
ENTRY e {
  a = f32[4,2] parameter(0)
  taus = f32[3] parameter(1)
  ROOT q = f32[4,2] custom-call(a, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 1);
  absl::StatusOr<Literal> r = HloEvaluator().Evaluate(**m, args);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("k <= n"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace passlab
