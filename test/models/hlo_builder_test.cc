#include "models/hlo_builder.h"

#include <gtest/gtest.h>

#include "core/eval/hlo_evaluator.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"

namespace passlab {
namespace {

constexpr PrimitiveType kF32 = PrimitiveType::kF32;

TEST(HloBuilderTest, BuildsAndEvaluatesWithMetadata) {
  HloModule module("m");
  HloBuilder b(&module, "main");
  Op x = b.Parameter(Shape(kF32, {2, 3}), "x");
  Op y;
  {
    HloBuilder::ScopedName layer(b, "layer0");
    HloBuilder::ScopedOpType type(b, "Relu");
    y = b.Max(x, b.Full(x->shape(), 0));
  }
  Op s = b.ReduceSum(y, {1});
  auto c = b.Build({s, y});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(VerifyModule(module).ok()) << VerifyModule(module);
  EXPECT_EQ(y->metadata().op_type, "Relu");
  EXPECT_EQ(y->metadata().op_name, "layer0/maximum");
  EXPECT_EQ(s->metadata().op_type, "reduce");
  EXPECT_EQ(x->name(), "x");
  auto out = HloEvaluator().Evaluate(module, {Literal::FromDoubles(Shape(kF32, {2, 3}), {1, -2, 3, -4, 5, -6})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->tuple_elements()[0].GetDouble(0), 4);
  EXPECT_EQ(out->tuple_elements()[0].GetDouble(1), 5);
}

TEST(HloBuilderTest, ReducersAreSharedPerKindAndType) {
  HloModule module("m");
  HloBuilder b(&module, "main");
  Op x = b.Parameter(Shape(kF32, {4}), "x");
  Op a = b.ReduceSum(x, {0});
  Op c = b.ReduceSum(b.Neg(x), {0});
  Op m = b.ReduceMax(x, {0});
  ASSERT_TRUE(b.Build({a, c, m}).ok());
  EXPECT_EQ(a->to_apply(), c->to_apply());
  EXPECT_NE(a->to_apply(), m->to_apply());
  EXPECT_EQ(a->to_apply()->name(), "add_f32");
  EXPECT_EQ(module.computation_count(), 3);
}

TEST(HloBuilderTest, ShapeErrorNamesTheOpAndScopeAndIsSticky) {
  HloModule module("m");
  HloBuilder b(&module, "main");
  Op x = b.Parameter(Shape(kF32, {2, 3}), "x");
  Op w = b.Parameter(Shape(kF32, {4, 5}), "w");
  Op y;
  {
    HloBuilder::ScopedName layer(b, "dense1");
    y = b.MatMul(x, w);
  }
  EXPECT_EQ(y, nullptr);
  Op z = b.Add(y, x);  // later ops see the error and do nothing
  EXPECT_EQ(z, nullptr);
  auto c = b.Build(z);
  ASSERT_FALSE(c.ok());
  std::string message(c.status().message());
  EXPECT_NE(message.find("op 'dot' (dot) in 'dense1'"), std::string::npos) << message;
  EXPECT_NE(message.find("size 3"), std::string::npos) << message;
}

TEST(HloBuilderTest, ElementwiseShapeMismatchIsAnError) {
  HloModule module("m");
  HloBuilder b(&module, "main");
  Op x = b.Parameter(Shape(kF32, {2}), "x");
  Op y = b.Parameter(Shape(kF32, {3}), "y");
  EXPECT_EQ(b.Add(x, y), nullptr);
  EXPECT_NE(std::string(b.status().message()).find("op 'add' (add)"), std::string::npos) << b.status();
}

TEST(HloBuilderTest, BadParameterNameAndNullOperand) {
  HloModule module("m");
  HloBuilder b(&module, "main");
  EXPECT_EQ(b.Parameter(Shape(kF32, {2}), "fc/weight"), nullptr);
  EXPECT_NE(std::string(b.status().message()).find("parameter names may only use"), std::string::npos);
  HloModule module2("m2");
  HloBuilder b2(&module2, "main");
  EXPECT_EQ(b2.Exp(nullptr), nullptr);
  EXPECT_NE(std::string(b2.status().message()).find("an operand is null"), std::string::npos);
}

TEST(HloBuilderTest, OperandFromAnotherComputationIsAnError) {
  HloModule module("m");
  HloBuilder sub(&module, "sub", /*is_entry=*/false);
  Op p = sub.Parameter(Shape(kF32, {}), "p");
  HloBuilder b(&module, "main");
  EXPECT_EQ(b.Neg(p), nullptr);
  EXPECT_NE(std::string(b.status().message()).find("belongs to another computation"), std::string::npos);
}

TEST(HloBuilderTest, ContinuesAnExistingComputation) {
  HloModule module("m");
  HloBuilder b(&module, "main");
  Op x = b.Parameter(Shape(kF32, {2}), "x");
  ASSERT_TRUE(b.Build(b.Neg(x)).ok());
  HloBuilder more(module.entry_computation());
  Op y = more.Parameter(Shape(kF32, {2}), "y");
  EXPECT_EQ(y->parameter_number(), 1);
  ASSERT_TRUE(more.Build(more.Add(module.entry_computation()->root_instruction(), y)).ok());
  EXPECT_TRUE(VerifyModule(module).ok());
}

}  // namespace
}  // namespace passlab
