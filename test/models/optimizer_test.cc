// SgdMomentumStep against PyTorch's SGD update written out by hand, its
// output order and scopes, and its errors.
#include "models/optimizer.h"

#include <gtest/gtest.h>

#include "core/eval/hlo_evaluator.h"
#include "core/verify/hlo_verifier.h"

namespace passlab {
namespace {

constexpr PrimitiveType kF64 = PrimitiveType::kF64;

// loss = 0.5 sum(a^2) + sum(3 b): d/da = a, d/db = 3. One step must give
// torch.optim.SGD's m' = mu m + g + wd p, p' = p - lr m', outputs
// (loss, a', b', m_a', m_b').
TEST(SgdMomentumStepTest, MatchesTheClosedFormUpdateInOutputOrder) {
  HloModule module("sgd_step");
  HloBuilder b(&module, "main");
  Op a = b.Parameter(Shape(kF64, {3}), "a");
  Op bias = b.Parameter(Shape(kF64, {2}), "b");
  std::vector<Op> params = {a, bias};
  std::vector<Op> momenta = MomentumParameters(b, params);
  ASSERT_EQ(momenta.size(), 2u);
  EXPECT_EQ(momenta[0]->name(), "a.momentum");
  EXPECT_EQ(momenta[1]->shape(), bias->shape());
  Op loss = b.Add(b.MulScalar(b.ReduceSum(b.Mul(a, a), {0}), 0.5), b.ReduceSum(b.MulScalar(bias, 3), {0}));
  SgdOptions o{.learning_rate = 0.1, .momentum = 0.9, .weight_decay = 0.01};
  absl::StatusOr<std::vector<Op>> outputs = SgdMomentumStep(b, loss, params, momenta, o);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 5u);
  EXPECT_EQ((*outputs)[0], loss);
  EXPECT_EQ((*outputs)[1]->metadata().op_name, "sgd/subtract");
  EXPECT_EQ((*outputs)[1]->metadata().op_type, "SGDMomentum");
  ASSERT_TRUE(b.Build(*outputs).ok()) << b.status();
  ASSERT_TRUE(VerifyModule(module).ok()) << VerifyModule(module);

  std::vector<double> av = {1, -2, 0.5}, bv = {4, -1}, mav = {0.2, 0, -1}, mbv = {1, 2};
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(
      module, {Literal::FromDoubles(Shape(kF64, {3}), av), Literal::FromDoubles(Shape(kF64, {2}), bv),
               Literal::FromDoubles(Shape(kF64, {3}), mav), Literal::FromDoubles(Shape(kF64, {2}), mbv)});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<Literal>& r = out->tuple_elements();
  EXPECT_DOUBLE_EQ(r[0].GetDouble(0), 0.5 * (1 + 4 + 0.25) + 3 * (4 - 1));
  for (int i = 0; i < 3; ++i) {
    double m = 0.9 * mav[i] + av[i] + 0.01 * av[i];
    EXPECT_NEAR(r[3].GetDouble(i), m, 1e-12) << i;
    EXPECT_NEAR(r[1].GetDouble(i), av[i] - 0.1 * m, 1e-12) << i;
  }
  for (int i = 0; i < 2; ++i) {
    double m = 0.9 * mbv[i] + 3 + 0.01 * bv[i];
    EXPECT_NEAR(r[4].GetDouble(i), m, 1e-12) << i;
    EXPECT_NEAR(r[2].GetDouble(i), bv[i] - 0.1 * m, 1e-12) << i;
  }
}

TEST(SgdMomentumStepTest, MismatchedMomentaAndBuilderErrorsAreStatuses) {
  HloModule module("sgd_step");
  HloBuilder b(&module, "main");
  Op a = b.Parameter(Shape(kF64, {3}), "a");
  Op loss = b.ReduceSum(b.Mul(a, a), {0});
  absl::StatusOr<std::vector<Op>> none = SgdMomentumStep(b, loss, {a}, {}, SgdOptions{});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("1 parameters but 0 momentum buffers"), std::string::npos)
      << none.status();

  b.Add(a, b.Parameter(Shape(kF64, {4}), "c"));  // shape mismatch: the builder's sticky error
  absl::StatusOr<std::vector<Op>> failed = SgdMomentumStep(b, loss, {a}, MomentumParameters(b, {a}), SgdOptions{});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status(), b.status());
}

}  // namespace
}  // namespace passlab
