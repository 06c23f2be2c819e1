// The reference evaluator on hand-computed cases, with XLA's edge semantics.
#include "core/eval/hlo_evaluator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

Literal Eval(const std::string& text, std::vector<Literal> args = {}) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  HloEvaluator ev;
  auto r = ev.Evaluate(**m, args);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : Literal();
}

std::string EvalText(const std::string& text) { return Eval(text).ToString(); }

TEST(EvaluatorTest, IntegerEdgeSemantics) {
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s32[4] constant({7, -2147483648, 5, -7})
    b = s32[4] constant({0, -1, 2, 2})
    ROOT d = s32[4] divide(a, b) })"),
            "{-1, -2147483648, 2, -3}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s32[3] constant({7, -2147483648, -7})
    b = s32[3] constant({0, -1, 2})
    ROOT r = s32[3] remainder(a, b) })"),
            "{7, 0, -1}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = u8[2] constant({7, 200})
    b = u8[2] constant({0, 3})
    ROOT d = u8[2] divide(a, b) })"),
            "{255, 66}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s8[3] constant({-128, 64, -1})
    b = s8[3] constant({1, 9, 7})
    ROOT s = s8[3] shift-right-arithmetic(a, b) })"),
            "{-64, 0, -1}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s8[2] constant({-128, 1})
    b = s8[2] constant({1, 8})
    ROOT s = s8[2] shift-left(a, b) })"),
            "{0, 0}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s8[2] constant({127, -128})
    ROOT s = s8[2] add(a, a) })"),
            "{-2, 0}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = u32[3] constant({0, 1, 4294967295})
    ROOT c = u32[3] count-leading-zeros(a) })"),
            "{32, 31, 0}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s16[2] constant({-1, 255})
    ROOT c = s16[2] popcnt(a) })"),
            "{16, 8}");
}

TEST(EvaluatorTest, FloatEdgeSemantics) {
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = f32[3] constant({nan, 1, -0})
    b = f32[3] constant({1, nan, 0})
    ROOT m = f32[3] maximum(a, b) })"),
            "{nan, nan, 0}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = f32[5] constant({nan, inf, -inf, 3e9, -2.5})
    ROOT c = s32[5] convert(a) })"),
            "{0, 2147483647, -2147483648, 2147483647, -2}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = f32[4] constant({0.5, 1.5, 2.5, -0.5})
    ROOT r = f32[4] round-nearest-even(a) })"),
            "{0, 2, 2, -0}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = f32[3] constant({0.5, 1.5, -2.5})
    ROOT r = f32[3] round-nearest-afz(a) })"),
            "{1, 2, -3}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = f32[3] constant({inf, nan, 1})
    ROOT r = pred[3] is-finite(a) })"),
            "{false, false, true}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = f32[2] constant({nan, 1})
    b = f32[2] constant({nan, nan})
    ROOT c = pred[2] compare(a, b), direction=EQ, type=TOTALORDER })"),
            "{true, false}");
  // bf16 arithmetic rounds through f32 to nearest even: 1 + 2^-8 -> 1.
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = bf16[] constant(1)
    b = bf16[] constant(0.00390625)
    ROOT s = bf16[] add(a, b) })"),
            "1");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = f32[2] constant({1.0001, 70000})
    ROOT r = f32[2] reduce-precision(a), exponent_bits=5, mantissa_bits=10 })"),
            "{1, inf}");
}

TEST(EvaluatorTest, DataMovement) {
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s32[2,3] iota(), iota_dimension=1
    t = s32[3,2] transpose(a), dimensions={1,0}
    ROOT r = s32[3,2] reverse(t), dimensions={0} })"),
            "{ {2, 2}, {1, 1}, {0, 0} }");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s32[5] iota(), iota_dimension=0
    z = s32[] constant(9)
    ROOT p = s32[9] pad(a, z), padding=-1_1_1 })"),
            "{9, 1, 9, 2, 9, 3, 9, 4, 9}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s32[6] iota(), iota_dimension=0
    i = s32[] constant(5)
    ROOT d = s32[3] dynamic-slice(a, i), dynamic_slice_sizes={3} })"),
            "{3, 4, 5}");  // start clamped to 3
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s32[2,2] constant({ {1, 2}, {3, 4} })
    b = s32[2,1] constant({ {5}, {6} })
    ROOT c = s32[2,3] concatenate(a, b), dimensions={1} })"),
            "{ {1, 2, 5}, {3, 4, 6} }");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s32[3] constant({1, 2, 3})
    ROOT b = s32[2,3] broadcast(a), dimensions={1} })"),
            "{ {1, 2, 3}, {1, 2, 3} }");
  EXPECT_EQ(EvalText(R"(ENTRY e {
    a = s32[6] iota(), iota_dimension=0
    ROOT s = s32[2] slice(a), slice={[1:6:3]} })"),
            "{1, 4}");
}

TEST(EvaluatorTest, ReduceDotAndConvolution) {
  EXPECT_EQ(EvalText(R"(
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(a, z), dimensions={1}, to_apply=add })"),
            "{6, 15}");
  EXPECT_EQ(EvalText(R"(ENTRY e {
  a = f32[2,2,3] constant({ { {1, 2, 3}, {4, 5, 6} }, { {1, 0, 0}, {0, 1, 0} } })
  b = f32[2,3,1] constant({ { {1}, {1}, {1} }, { {2}, {3}, {4} } })
  ROOT d = f32[2,2,1] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1} })"),
            "{ { {6}, {15} }, { {2}, {3} } }");
  // 1-D convolution with padding and stride: [1,2,3,4] * [1,1] pad 1, stride 2.
  EXPECT_EQ(EvalText(R"(ENTRY e {
  x = f32[1,4,1] constant({ { {1}, {2}, {3}, {4} } })
  k = f32[2,1,1] constant({ { {1} }, { {1} } })
  ROOT c = f32[1,3,1] convolution(x, k), window={size=2 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f })"),
            "{ { {1}, {5}, {4} } }");
  // Reduce-window max 2x2 stride 2.
  EXPECT_EQ(EvalText(R"(
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT m = f32[] maximum(x, y) }
ENTRY e {
  a = f32[2,4] constant({ {1, 5, 2, 0}, {3, 4, 8, 7} })
  n = f32[] constant(-inf)
  ROOT r = f32[1,2] reduce-window(a, n), window={size=2x2 stride=2x2}, to_apply=max })"),
            "{ {5, 8} }");
}

TEST(EvaluatorTest, ControlFlowGatherScatterSort) {
  EXPECT_EQ(EvalText(R"(
cond { s = s32[] parameter(0)  n = s32[] constant(5)  ROOT lt = pred[] compare(s, n), direction=LT }
body { s = s32[] parameter(0)  one = s32[] constant(1)  ROOT a = s32[] add(s, one) }
ENTRY e { z = s32[] constant(0)  ROOT w = s32[] while(z), condition=cond, body=body })"),
            "5");
  EXPECT_EQ(EvalText(R"(ENTRY e {
  t = f32[4,2] constant({ {0, 1}, {10, 11}, {20, 21}, {30, 31} })
  i = s32[3,1] constant({ {2}, {0}, {3} })
  ROOT g = f32[3,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2} })"),
            "{ {20, 21}, {0, 1}, {30, 31} }");
  EXPECT_EQ(EvalText(R"(
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  t = f32[4] constant({0, 0, 0, 0})
  i = s32[3,1] constant({ {1}, {3}, {1} })
  u = f32[3] constant({1, 2, 3})
  ROOT s = f32[4] scatter(t, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add })"),
            "{0, 4, 0, 2}");
  EXPECT_EQ(EvalText(R"(
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  c = s32[] parameter(2)  d = s32[] parameter(3)
     ROOT l = pred[] compare(a, b), direction=LT }
ENTRY e {
  k = f32[4] constant({3, 1, 2, 1})
  v = s32[4] iota(), iota_dimension=0
  ROOT s = (f32[4], s32[4]) sort(k, v), dimensions={0}, is_stable=true, to_apply=lt })"),
            "({1, 1, 2, 3}, {1, 3, 2, 0})");
}

TEST(EvaluatorTest, BatchNormTrainingNormalizes) {
  Literal r = Eval(R"(ENTRY e {
  x = f32[4,1] constant({ {1}, {2}, {3}, {4} })
  s = f32[1] constant({1})
  o = f32[1] constant({0})
  ROOT b = (f32[4,1], f32[1], f32[1]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1 })");
  EXPECT_NEAR(r.tuple_elements()[1].GetDouble(0), 2.5, 1e-6);
  EXPECT_NEAR(r.tuple_elements()[2].GetDouble(0), 1.25, 1e-6);
  EXPECT_NEAR(r.tuple_elements()[0].GetDouble(0), -1.5 / std::sqrt(1.251), 1e-5);
}

TEST(EvaluatorTest, ArgumentMismatchNamesTheParameter) {
  auto m = ParseHloModule("ENTRY e { ROOT p = f32[2] parameter(0) }");
  HloEvaluator ev;
  std::vector<Literal> args;
  args.push_back(Literal(Shape(PrimitiveType::kF32, {3})));
  auto r = ev.Evaluate(**m, args);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("argument 0 ('p') is f32[3]"), std::string::npos);
}

TEST(CompareTest, ReportsWorstElement) {
  Literal a = Literal::Vector<float>({1, 2, 3});
  Literal b = Literal::Vector<float>({1, 2.5f, 3.001f});
  absl::Status s = CompareLiterals(a, b, {.abs = 0.01});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("1 of 3 elements differ; worst at index {1}: expected 2, got 2.5"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(CompareLiterals(a, a, {}).ok());
}

}  // namespace
}  // namespace passlab
