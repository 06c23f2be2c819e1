// Per-op evaluator tests with hand-computed values: edge semantics of the
// elementwise ops, data movement, control flow and wrappers, random bits,
// linear algebra, and error reporting.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/eval/eval_internal.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

absl::StatusOr<Literal> TryEval(const std::string& text, std::vector<Literal> args = {}) {
  auto m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  return HloEvaluator().Evaluate(**m, args);
}

std::string EvalText(const std::string& text, std::vector<Literal> args = {}) {
  absl::StatusOr<Literal> r = TryEval(text, std::move(args));
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->ToString() : "<error>";
}

std::string Entry(const std::string& body) { return "ENTRY e {\n" + body + "\n}\n"; }

constexpr char kAdd[] = "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n";

// ---------------------------------------------------------------- elementwise

TEST(ElementwiseTest, IntegerDivisionAndRemainderEdges) {
  EXPECT_EQ(EvalText(Entry(R"(a = s64[3] constant({-9223372036854775808, 5, -5})
    b = s64[3] constant({-1, 0, 0})
    ROOT d = s64[3] divide(a, b))")),
            "{-9223372036854775808, -1, -1}");
  EXPECT_EQ(EvalText(Entry(R"(a = s64[3] constant({-9223372036854775808, 5, -5})
    b = s64[3] constant({-1, 0, 3})
    ROOT d = s64[3] remainder(a, b))")),
            "{0, 5, -2}");
  EXPECT_EQ(EvalText(Entry(R"(a = u64[2] constant({5, 18446744073709551615})
    b = u64[2] constant({0, 2})
    ROOT d = u64[2] divide(a, b))")),
            "{18446744073709551615, 9223372036854775807}");
}

TEST(ElementwiseTest, ShiftsPastTheWidth) {
  EXPECT_EQ(EvalText(Entry(R"(a = u32[3] constant({4294967295, 1, 8})
    b = u32[3] constant({32, 31, 4294967295})
    ROOT s = u32[3] shift-right-logical(a, b))")),
            "{0, 0, 0}");
  EXPECT_EQ(EvalText(Entry(R"(a = s32[3] constant({-8, 8, -2147483648})
    b = s32[3] constant({40, 40, 31})
    ROOT s = s32[3] shift-right-arithmetic(a, b))")),
            "{-1, 0, -1}");
  EXPECT_EQ(EvalText(Entry(R"(a = s32[2] constant({-1, -1})
    b = s32[2] constant({1, -1})
    ROOT s = s32[2] shift-right-logical(a, b))")),
            "{2147483647, 0}");
}

TEST(ElementwiseTest, IntegerOverflowWrapsAndAbsOfMin) {
  EXPECT_EQ(EvalText(Entry(R"(a = s32[2] constant({2147483647, -2147483648})
    b = s32[2] constant({1, -1})
    ROOT s = s32[2] add(a, b))")),
            "{-2147483648, 2147483647}");
  EXPECT_EQ(EvalText(Entry(R"(a = s8[2] constant({-128, 5})
    ROOT s = s8[2] abs(a))")),
            "{-128, 5}");
  EXPECT_EQ(EvalText(Entry(R"(a = u8[2] constant({16, 3})
    ROOT s = u8[2] multiply(a, a))")),
            "{0, 9}");
  EXPECT_EQ(EvalText(Entry(R"(a = s32[3] constant({2, -2, 3})
    b = s32[3] constant({10, 3, -1})
    ROOT p = s32[3] power(a, b))")),
            "{1024, -8, 0}");
}

TEST(ElementwiseTest, BitCounting) {
  EXPECT_EQ(EvalText(Entry(R"(a = s8[3] constant({-1, 0, 1})
    ROOT c = s8[3] count-leading-zeros(a))")),
            "{0, 8, 7}");
  EXPECT_EQ(EvalText(Entry(R"(a = u64[2] constant({18446744073709551615, 0})
    ROOT c = u64[2] popcnt(a))")),
            "{64, 0}");
  EXPECT_EQ(EvalText(Entry(R"(a = s32[2] constant({0, -1})
    ROOT n = s32[2] not(a))")),
            "{-1, 0}");
}

TEST(ElementwiseTest, FloatToIntConvertSaturatesAndMapsNanToZero) {
  EXPECT_EQ(EvalText(Entry(R"(a = f32[5] constant({nan, inf, -inf, 300, -1.9})
    ROOT c = u8[5] convert(a))")),
            "{0, 255, 0, 255, 0}");
  EXPECT_EQ(EvalText(Entry(R"(a = f64[3] constant({1e300, -1e300, -0.9})
    ROOT c = s64[3] convert(a))")),
            "{9223372036854775807, -9223372036854775808, 0}");
  EXPECT_EQ(EvalText(Entry(R"(a = f32[2] constant({0, 2.5})
    ROOT c = pred[2] convert(a))")),
            "{false, true}");
}

TEST(ElementwiseTest, MaxMinPropagateNanAndCompareTotalOrder) {
  EXPECT_EQ(EvalText(Entry(R"(a = f32[3] constant({1, nan, -inf})
    b = f32[3] constant({nan, 2, 3})
    ROOT m = f32[3] minimum(a, b))")),
            "{nan, nan, -inf}");
  // -NaN < -inf < -0 < +0 < inf < NaN.
  EXPECT_EQ(EvalText(Entry(R"(a = f32[4] constant({-0, -nan, inf, nan})
    b = f32[4] constant({0, -inf, nan, inf})
    ROOT c = pred[4] compare(a, b), direction=LT, type=TOTALORDER)")),
            "{true, true, true, false}");
  EXPECT_EQ(EvalText(Entry(R"(a = f32[2] constant({-0, nan})
    b = f32[2] constant({0, nan})
    ROOT c = pred[2] compare(a, b), direction=EQ)")),
            "{true, false}");
}

TEST(ElementwiseTest, SmallFloatsComputeInF32AndRoundToNearestEven) {
  // bf16: 256 + 1 = 257 is a tie between 256 and 258; even mantissa -> 256.
  EXPECT_EQ(EvalText(Entry(R"(a = bf16[2] constant({256, 256})
    b = bf16[2] constant({1, 3})
    ROOT s = bf16[2] add(a, b))")),
            "{256, 260}");
  // f16 overflows to inf; 65504 is its max.
  EXPECT_EQ(EvalText(Entry(R"(a = f16[2] constant({65504, 2})
    b = f16[2] constant({2, 3})
    ROOT m = f16[2] multiply(a, b))")),
            "{inf, 6}");
  // f8e4m3fn has no inf: overflow becomes NaN.
  EXPECT_EQ(EvalText(Entry(R"(a = f8e4m3fn[2] constant({448, 1})
    ROOT s = f8e4m3fn[2] add(a, a))")),
            "{nan, 2}");
}

TEST(ElementwiseTest, Transcendentals) {
  Literal r = *TryEval(Entry(R"(a = f64[8] constant({1, 0.5, 1e-10, 1e-10, -27, 0, 1, -1})
    b = f64[8] constant({1, 0.5, 1e-10, 1e-10, -27, 0, 1, -1})
    at = f64[1] slice(a), slice={[0:1]}
    e = f64[1] erf(at)
    x = f64[1] slice(a), slice={[2:3]}
    em = f64[1] exponential-minus-one(x)
    lp = f64[1] log-plus-one(x)
    c = f64[1] slice(a), slice={[4:5]}
    cb = f64[1] cbrt(c)
    y = f64[2] slice(a), slice={[6:8]}
    xs = f64[2] constant({-1, -1})
    t = f64[2] atan2(y, xs)
    ROOT out = (f64[1], f64[1], f64[1], f64[1], f64[2]) tuple(e, em, lp, cb, t))"));
  EXPECT_NEAR(r.tuple_elements()[0].GetDouble(0), 0.8427007929497149, 1e-15);
  EXPECT_DOUBLE_EQ(r.tuple_elements()[1].GetDouble(0), 1.00000000005e-10);
  EXPECT_DOUBLE_EQ(r.tuple_elements()[2].GetDouble(0), 9.9999999995e-11);
  EXPECT_DOUBLE_EQ(r.tuple_elements()[3].GetDouble(0), -3);
  EXPECT_DOUBLE_EQ(r.tuple_elements()[4].GetDouble(0), 3 * M_PI / 4);
  EXPECT_DOUBLE_EQ(r.tuple_elements()[4].GetDouble(1), -3 * M_PI / 4);
  EXPECT_EQ(EvalText(Entry(R"(a = f32[4] constant({inf, -inf, nan, -0})
    ROOT f = pred[4] is-finite(a))")),
            "{false, false, false, true}");
  EXPECT_EQ(EvalText(Entry(R"(a = f32[4] constant({-2.5, -0, nan, 3})
    ROOT s = f32[4] sign(a))")),
            "{-1, -0, nan, 1}");
}

TEST(ElementwiseTest, ClampSelectIotaAndReducePrecision) {
  EXPECT_EQ(EvalText(Entry(R"(lo = f32[] constant(0)
    hi = f32[] constant(1)
    x = f32[4] constant({-1, 0.5, 2, nan})
    ROOT c = f32[4] clamp(lo, x, hi))")),
            "{0, 0.5, 1, nan}");
  EXPECT_EQ(EvalText(Entry(R"(p = pred[3] constant({true, false, true})
    a = s32[3] constant({1, 2, 3})
    b = s32[3] constant({4, 5, 6})
    ROOT s = s32[3] select(p, a, b))")),
            "{1, 5, 3}");
  EXPECT_EQ(EvalText(Entry("ROOT i = f32[2,3] iota(), iota_dimension=0")), "{ {0, 0, 0}, {1, 1, 1} }");
  // bf16 precision (8 exponent, 7 mantissa bits): 1 + 2^-8 rounds to 1 (tie
  // to even), 1 + 3*2^-8 to 1 + 2^-6, 1e-10 keeps its exponent; e5m10
  // underflows 1e-10 to 0 and overflows -1e10.
  EXPECT_EQ(EvalText(Entry(R"(a = f32[3] constant({1.00390625, 1.01171875, 1e-10})
    ROOT r = f32[3] reduce-precision(a), exponent_bits=8, mantissa_bits=7)")),
            "{1, 1.015625, 1.0004442e-10}");
  EXPECT_EQ(EvalText(Entry(R"(a = f32[2] constant({1e-10, -1e10})
    ROOT r = f32[2] reduce-precision(a), exponent_bits=5, mantissa_bits=10)")),
            "{0, -inf}");
}

TEST(ElementwiseTest, BitcastConvertChangesWidth) {
  EXPECT_EQ(EvalText(Entry(R"(a = f32[2] constant({1, -2})
    ROOT b = u32[2] bitcast-convert(a))")),
            "{1065353216, 3221225472}");
  EXPECT_EQ(EvalText(Entry(R"(a = u32[1] constant({16909060})
    ROOT b = u8[1,4] bitcast-convert(a))")),
            "{ {4, 3, 2, 1} }");
  EXPECT_EQ(EvalText(Entry(R"(a = u8[2,2] constant({ {1, 2}, {3, 4} })
    ROOT b = u16[2] bitcast-convert(a))")),
            "{513, 1027}");
}

TEST(ElementwiseTest, StochasticConvertRoundsByTheRandomBits) {
  // 2.25: fraction 0.25 of 2^16 = 16384; bits below round up.
  EXPECT_EQ(EvalText(Entry(R"(a = f32[4] constant({2.25, 2.25, -2.25, 1e9})
    r = u32[4] constant({100, 4000000000, 100, 0})
    ROOT c = s16[4] stochastic-convert(a, r))")),
            "{3, 2, -3, 32767}");
  // To bf16: 1 + 2^-9 lies a quarter of the way from 1 to 1 + 2^-7 (printed
  // "1.01", bf16's shortest form).
  EXPECT_EQ(EvalText(Entry(R"(a = f32[3] constant({1.001953125, 1.001953125, -1.001953125})
    r = u32[3] constant({1000, 3221225472, 1000})
    ROOT c = bf16[3] stochastic-convert(a, r))")),
            "{1.01, 1, -1.01}");
}

// ---------------------------------------------------------------- data movement

TEST(DataMovementTest, EmptyAndDegenerateShapes) {
  EXPECT_EQ(EvalText(Entry(R"(a = f32[0,3] constant({})
    ROOT t = f32[3,0] transpose(a), dimensions={1,0})")),
            "{ {}, {}, {} }");
  EXPECT_EQ(EvalText(kAdd + Entry(R"(a = f32[2,0] constant({ {}, {} })
    z = f32[] constant(5)
    ROOT r = f32[2] reduce(a, z), dimensions={1}, to_apply=add)")),
            "{5, 5}");
  EXPECT_EQ(EvalText(Entry(R"(a = s32[1,1,3] iota(), iota_dimension=2
    ROOT r = s32[3] reshape(a))")),
            "{0, 1, 2}");
  EXPECT_EQ(EvalText(Entry(R"(a = s32[] constant(7)
    ROOT b = s32[2,0,2] broadcast(a), dimensions={})")),
            "{ {  }, {  } }");
}

TEST(DataMovementTest, PadNegativeAndInterior) {
  // Columns: 1 _ 2 _ 3 with the first dropped (low -1) and nothing added.
  EXPECT_EQ(EvalText(Entry(R"(a = s32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })
    z = s32[] constant(0)
    ROOT p = s32[3,4] pad(a, z), padding=1_0x-1_0_1)")),
            "{ {0, 0, 0, 0}, {0, 2, 0, 3}, {0, 5, 0, 6} }");
}

TEST(DataMovementTest, DynamicUpdateSliceClampsStarts) {
  EXPECT_EQ(EvalText(Entry(R"(a = s32[5] constant({0, 0, 0, 0, 0})
    u = s32[2] constant({7, 8})
    i = s32[] constant(-3)
    j = s32[] constant(10)
    d1 = s32[5] dynamic-update-slice(a, u, i)
    ROOT d2 = s32[5] dynamic-update-slice(d1, u, j))")),
            "{7, 8, 0, 7, 8}");
  EXPECT_EQ(EvalText(Entry(R"(a = s32[3,3] iota(), iota_dimension=1
    i = u32[] constant(4294967295)
    j = s32[] constant(1)
    ROOT d = s32[2,2] dynamic-slice(a, i, j), dynamic_slice_sizes={2,2})")),
            "{ {1, 2}, {1, 2} }");
}

TEST(DataMovementTest, BitcastFollowsLayouts) {
  // A transposing bitcast: {0,1} is column-major, so the physical order of
  // the result is the operand's row-major order.
  EXPECT_EQ(EvalText(Entry(R"(a = s32[2,3]{1,0} constant({ {1, 2, 3}, {4, 5, 6} })
    ROOT b = s32[3,2]{0,1} bitcast(a))")),
            "{ {1, 4}, {2, 5}, {3, 6} }");
  EXPECT_EQ(EvalText(Entry(R"(a = s32[2,3]{1,0} constant({ {1, 2, 3}, {4, 5, 6} })
    ROOT b = s32[6]{0} bitcast(a))")),
            "{1, 2, 3, 4, 5, 6}");
  // Layouts never change values elsewhere.
  EXPECT_EQ(EvalText(Entry(R"(a = s32[2,2]{0,1} constant({ {1, 2}, {3, 4} })
    ROOT c = s32[2,2]{1,0} copy(a))")),
            "{ {1, 2}, {3, 4} }");
}

TEST(DataMovementTest, ScatterSkipsWindowsThatDoNotFit) {
  EXPECT_EQ(EvalText(kAdd + Entry(R"(o = f32[4] constant({0, 0, 0, 0})
    i = s32[3,1] constant({ {3}, {-1}, {1} })
    u = f32[3,2] constant({ {1, 1}, {2, 2}, {5, 6} })
    ROOT s = f32[4] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add)")),
            "{0, 5, 6, 0}");
}

TEST(DataMovementTest, SortSeveralOperandsWithCustomComparator) {
  // Sort by the second operand descending, ties by the first ascending.
  EXPECT_EQ(EvalText(R"(
cmp {
  a0 = s32[] parameter(0)  b0 = s32[] parameter(1)  a1 = f32[] parameter(2)  b1 = f32[] parameter(3)
  gt = pred[] compare(a1, b1), direction=GT
  eq = pred[] compare(a1, b1), direction=EQ
  lt0 = pred[] compare(a0, b0), direction=LT
  tie = pred[] and(eq, lt0)
  ROOT r = pred[] or(gt, tie)
}
ENTRY e {
  k = s32[5] constant({4, 3, 2, 1, 0})
  v = f32[5] constant({1, 2, 1, 2, 3})
  ROOT s = (s32[5], f32[5]) sort(k, v), dimensions={0}, to_apply=cmp
})"),
            "({0, 1, 3, 2, 4}, {3, 2, 2, 1, 1})");
}

TEST(DataMovementTest, TopK) {
  EXPECT_EQ(EvalText(Entry(R"(a = f32[2,4] constant({ {1, nan, 3, 3}, {-1, -2, -3, -4} })
    ROOT t = (f32[2,2], s32[2,2]) topk(a), k=2, largest=true)")),
            "({ {nan, 3}, {-1, -2} }, { {1, 2}, {0, 1} })");
}

// ---------------------------------------------------------------- reductions

TEST(ReduceTest, VariadicArgmax) {
  EXPECT_EQ(EvalText(R"(
argmax {
  av = f32[] parameter(0)  ai = s32[] parameter(1)  bv = f32[] parameter(2)  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  v = f32[] select(gt, bv, av)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,4] constant({ {1, 7, 3, 7}, {-1, -5, 0, -2} })
  i = s32[2,4] iota(), iota_dimension=1
  nv = f32[] constant(-inf)
  ni = s32[] constant(-1)
  ROOT r = (f32[2], s32[2]) reduce(x, i, nv, ni), dimensions={1}, to_apply=argmax
})"),
            "({7, 0}, {1, 2})");
}

TEST(ReduceTest, IntegerAndBf16Reductions) {
  EXPECT_EQ(EvalText(R"(
add { a = s8[] parameter(0)  b = s8[] parameter(1)  ROOT s = s8[] add(a, b) }
ENTRY e {
  x = s8[3] constant({100, 100, 100})
  z = s8[] constant(0)
  ROOT r = s8[] reduce(x, z), dimensions={0}, to_apply=add
})"),
            "44");
  // bf16 accumulates in bf16 steps: 256 + 1 + 1 stays 256.
  EXPECT_EQ(EvalText(R"(
add { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT s = bf16[] add(a, b) }
ENTRY e {
  x = bf16[3] constant({256, 1, 1})
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add
})"),
            "256");
}

TEST(ReduceTest, ReduceWindowWithGeneralReducer) {
  // A reducer that is not a single op takes the general path.
  EXPECT_EQ(EvalText(R"(
sumsq { a = f32[] parameter(0)  b = f32[] parameter(1)  m = f32[] multiply(b, b)  ROOT s = f32[] add(a, m) }
ENTRY e {
  x = f32[4] constant({1, 2, 3, 4})
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(x, z), window={size=2 pad=1_0}, to_apply=sumsq
})"),
            "{1, 5, 13}");
}

// ---------------------------------------------------------------- contractions

TEST(ContractionTest, IntegerDotWrapsAndMixedTypes) {
  EXPECT_EQ(EvalText(Entry(R"(a = s8[1,2] constant({ {100, 100} })
    b = s8[2,1] constant({ {100}, {100} })
    ROOT d = s32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})")),
            "{ {20000} }");
  EXPECT_EQ(EvalText(Entry(R"(a = s32[1,2] constant({ {2147483647, 1} })
    b = s32[2] constant({2, 2})
    ROOT d = s32[1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})")),
            "{0}");
  EXPECT_EQ(EvalText(Entry(R"(a = bf16[2] constant({1, 2})
    b = bf16[2] constant({3, 4})
    ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})")),
            "11");
}

TEST(ContractionTest, ComplexDotAndEmptyContraction) {
  EXPECT_EQ(EvalText(Entry(R"(a = c64[2] constant({(1, 1), (0, 2)})
    b = c64[2] constant({(1, -1), (3, 0)})
    ROOT d = c64[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})")),
            "(2, 6)");
  EXPECT_EQ(EvalText(Entry(R"(a = f32[2,0] constant({ {}, {} })
    b = f32[0,3] constant({})
    ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})")),
            "{ {0, 0, 0}, {0, 0, 0} }");
}

TEST(ContractionTest, LargeDotMatchesNaiveLoop) {
  // Sizes that are not multiples of the kernel's 4x4 blocks, on two threads.
  const int64_t m = 67, k = 129, n = 45;
  Literal a(Shape(PrimitiveType::kF32, {m, k})), b(Shape(PrimitiveType::kF32, {k, n}));
  for (int64_t i = 0; i < a.element_count(); ++i) a.SetDouble(i, std::sin(0.1 * i));
  for (int64_t i = 0; i < b.element_count(); ++i) b.SetDouble(i, std::cos(0.3 * i));
  Literal expected(Shape(PrimitiveType::kF32, {m, n}));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t t = 0; t < k; ++t) s += a.GetDouble(i * k + t) * b.GetDouble(t * n + j);
      expected.SetDouble(i * n + j, s);
    }
  }
  std::vector<Literal> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  absl::StatusOr<Literal> r = TryEval(Entry(R"(a = f32[67,129] parameter(0)
    b = f32[129,45] parameter(1)
    ROOT d = f32[67,45] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})"),
                                      std::move(args));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(CompareLiterals(expected, *r, {.max_ulps = 1}).ok());
}

TEST(ContractionTest, LargeGroupedConvolutionMatchesNaiveLoop) {
  // NHWC, HWIO, stride 2, asymmetric padding, rhs dilation, 2 feature groups,
  // 7 outputs per group (not a multiple of the 4-wide panels), 2 threads.
  const int64_t n = 8, h = 13, w = 11, c = 6, kh = 3, kw = 2, o = 14, groups = 2, ig = c / groups, og = o / groups;
  const int64_t sh = 2, sw = 1, pl_h = 1, pl_w = 2, dh = 2, dw = 1;
  const int64_t oh = 6, ow = 12;  // (13 + 1 + 1 - 5) / 2 + 1, (11 + 2 + 0 - 2) / 1 + 1
  Literal x(Shape(PrimitiveType::kF32, {n, h, w, c})), k(Shape(PrimitiveType::kF32, {kh, kw, ig, o}));
  for (int64_t i = 0; i < x.element_count(); ++i) x.SetDouble(i, std::sin(0.37 * i));
  for (int64_t i = 0; i < k.element_count(); ++i) k.SetDouble(i, std::cos(0.11 * i));
  Literal expected(Shape(PrimitiveType::kF32, {n, oh, ow, o}));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t z = 0; z < ow; ++z) {
        for (int64_t f = 0; f < o; ++f) {
          double s = 0;
          for (int64_t i = 0; i < kh; ++i) {
            for (int64_t j = 0; j < kw; ++j) {
              int64_t yy = y * sh - pl_h + i * dh, zz = z * sw - pl_w + j * dw;
              if (yy < 0 || yy >= h || zz < 0 || zz >= w) continue;
              for (int64_t q = 0; q < ig; ++q) {
                s += x.Get<float>({b, yy, zz, f / og * ig + q}) * k.Get<float>({i, j, q, f});
              }
            }
          }
          expected.Set<float>({b, y, z, f}, static_cast<float>(s));
        }
      }
    }
  }
  std::vector<Literal> args;
  args.push_back(std::move(x));
  args.push_back(std::move(k));
  absl::StatusOr<Literal> r = TryEval(Entry(R"(x = f32[8,13,11,6] parameter(0)
    k = f32[3,2,3,14] parameter(1)
    ROOT c = f32[8,6,12,14] convolution(x, k), window={size=3x2 stride=2x1 pad=1_1x2_0 rhs_dilate=2x1}, dim_labels=b01f_01io->b01f, feature_group_count=2)"),
                                      std::move(args));
  ASSERT_TRUE(r.ok()) << r.status().message();
  absl::Status same = CompareLiterals(expected, *r, {.abs = 1e-5, .max_ulps = 1});
  EXPECT_TRUE(same.ok()) << same.message();
}

TEST(ContractionTest, IntegerAndComplexConvolution) {
  EXPECT_EQ(EvalText(Entry(R"(x = s8[1,4,1] constant({ { {100}, {100}, {-100}, {7} } })
    k = s8[2,1,1] constant({ { {100} }, { {2} } })
    ROOT c = s32[1,3,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f)")),
            "{ { {10200}, {9800}, {-9986} } }");
  EXPECT_EQ(EvalText(Entry(R"(x = c64[1,2,1] constant({ { {(1, 1)}, {(0, 1)} } })
    k = c64[2,1,1] constant({ { {(0, 1)} }, { {(2, 0)} } })
    ROOT c = c64[1,1,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f)")),
            "{ { {(-1, 3)} } }");
}

// ---------------------------------------------------------------- control flow

TEST(ControlTest, ConditionalCallMapFusion) {
  EXPECT_EQ(EvalText(R"(
b0 { p = s32[] parameter(0)  ROOT n = s32[] negate(p) }
b1 { p = s32[] parameter(0)  c = s32[] constant(10)  ROOT m = s32[] multiply(p, c) }
ENTRY e {
  x = s32[] constant(3)
  i = s32[] constant(7)
  ROOT c = s32[] conditional(i, x, x), branch_computations={b0, b1}
})"),
            "30");  // out of range picks the last branch
  EXPECT_EQ(EvalText(R"(
t { p = f32[] parameter(0)  ROOT n = f32[] negate(p) }
f { p = f32[] parameter(0)  ROOT n = f32[] abs(p) }
ENTRY e {
  x = f32[] constant(-2)
  p = pred[] constant(false)
  ROOT c = f32[] conditional(p, x, x), true_computation=t, false_computation=f
})"),
            "2");
  EXPECT_EQ(EvalText(R"(
sq { p = f32[] parameter(0)  q = f32[] parameter(1)  m = f32[] multiply(p, p)  ROOT s = f32[] subtract(m, q) }
ENTRY e {
  x = f32[3] constant({1, 2, 3})
  y = f32[3] constant({1, 1, 1})
  ROOT m = f32[3] map(x, y), dimensions={0}, to_apply=sq
})"),
            "{0, 3, 8}");
  EXPECT_EQ(EvalText(R"(
fused { p0 = f32[2] parameter(0)  p1 = f32[2] parameter(1)  ROOT a = f32[2] add(p0, p1) }
called { p = f32[2] parameter(0)  ROOT n = f32[2] negate(p) }
ENTRY e {
  x = f32[2] constant({1, 2})
  f = f32[2] fusion(x, x), kind=kLoop, calls=fused
  ROOT c = f32[2] call(f), to_apply=called
})"),
            "{-2, -4}");
}

TEST(ControlTest, WhileWithTupleStateAndIterationLimit) {
  const std::string text = R"(
cond { s = (s32[], f32[]) parameter(0)  i = s32[] get-tuple-element(s), index=0  n = s32[] constant(4)
       ROOT lt = pred[] compare(i, n), direction=LT }
body { s = (s32[], f32[]) parameter(0)  i = s32[] get-tuple-element(s), index=0  x = f32[] get-tuple-element(s), index=1
       one = s32[] constant(1)  two = f32[] constant(2)  i1 = s32[] add(i, one)  x1 = f32[] multiply(x, two)
       ROOT t = (s32[], f32[]) tuple(i1, x1) }
ENTRY e {
  z = s32[] constant(0)
  o = f32[] constant(1)
  t = (s32[], f32[]) tuple(z, o)
  ROOT w = (s32[], f32[]) while(t), condition=cond, body=body
})";
  EXPECT_EQ(EvalText(text), "(4, 16)");
  auto m = ParseHloModule(text);
  absl::StatusOr<Literal> r = HloEvaluator({.max_loop_iterations = 2}).Evaluate(**m, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("more than 2 iterations"), std::string::npos);
}

TEST(ControlTest, AsyncCopyBarrierAndCollectives) {
  EXPECT_EQ(EvalText(R"(
wrapped { p = f32[2] parameter(0)  ROOT n = f32[2] negate(p) }
ENTRY e {
  x = f32[2] constant({1, -3})
  s = ((f32[2]), f32[2], s32[]) async-start(x), calls=wrapped
  u = ((f32[2]), f32[2], s32[]) async-update(s)
  d = f32[2] async-done(u)
  cs = (f32[2], f32[2], u32[]) copy-start(d)
  c = f32[2] copy-done(cs)
  b = f32[2] opt-barrier(c)
  ar = f32[2] all-reduce(b), replica_groups={}, to_apply=add
  ag = f32[2] all-gather(ar), dimensions={0}, replica_groups={}
  r = u32[] replica-id()
  ROOT t = (f32[2], u32[]) tuple(ag, r)
}
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) })"),
            "({-1, 3}, 0)");
  EXPECT_EQ(EvalText(Entry(R"(x = f32[2] constant({1, 2})
    ROOT p = f32[2] collective-permute(x), source_target_pairs={{0,1}})")),
            "{0, 0}");
}

// ---------------------------------------------------------------- random numbers

TEST(RngTest, BlockFunctionsMatchRandom123KnownAnswers) {
  EXPECT_EQ(eval::Philox4x32({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(eval::Philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  EXPECT_EQ(eval::ThreeFry2x32({0, 0}, {0, 0}), (std::array<uint32_t, 2>{0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(eval::ThreeFry2x32({0x243f6a88, 0x85a308d3}, {0x13198a2e, 0x03707344}),
            (std::array<uint32_t, 2>{0xc4923a9c, 0x483df7a0}));
}

TEST(RngTest, RngBitGeneratorFollowsXlaExpansion) {
  // Three-fry, 32-bit: the even dimension splits in halves; element c reads
  // word c % 2 of the block counted at state[1] + c / 2.
  Literal tf = *TryEval(Entry(R"(s = u64[2] constant({0, 0})
    ROOT r = (u64[2], u32[2]) rng-bit-generator(s), algorithm=rng_three_fry)"));
  EXPECT_EQ(tf.tuple_elements()[1].GetUint(0), 0x6b200159u);
  EXPECT_EQ(tf.tuple_elements()[1].GetUint(1), 0x99ba4efeu);
  EXPECT_EQ(tf.tuple_elements()[0].ToString(), "{0, 1}");
  // Philox, 32-bit, two-word state: counter (state[1], state[0]).
  Literal ph = *TryEval(Entry(R"(s = u64[2] constant({0, 0})
    ROOT r = (u64[2], u32[5]) rng-bit-generator(s), algorithm=rng_philox)"));
  EXPECT_EQ(ph.tuple_elements()[1].GetUint(0), 0x6627e8d5u);
  EXPECT_EQ(ph.tuple_elements()[1].GetUint(3), 0x9b00dbd8u);
  EXPECT_EQ(ph.tuple_elements()[0].ToString(), "{0, 2}");
  // 64-bit philox pairs the words; RNG_DEFAULT is philox.
  Literal p64 = *TryEval(Entry(R"(s = u64[3] constant({0, 0, 0})
    ROOT r = (u64[3], u64[2]) rng-bit-generator(s))"));
  EXPECT_EQ(p64.tuple_elements()[1].GetUint(0), 0xe169c58d6627e8d5u);
  EXPECT_EQ(p64.tuple_elements()[1].GetUint(1), 0x9b00dbd8bc57ac4cu);
  EXPECT_EQ(p64.tuple_elements()[0].ToString(), "{0, 1, 0}");
}

TEST(RngTest, RngIsDeterministicAndInRange) {
  const std::string text = Entry(R"(a = f32[] constant(2)
    b = f32[] constant(3)
    u = f32[1000] rng(a, b), distribution=rng_uniform
    lo = s32[] constant(-3)
    hi = s32[] constant(4)
    i = s32[1000] rng(lo, hi), distribution=rng_uniform
    ROOT t = (f32[1000], s32[1000]) tuple(u, i))");
  Literal r1 = *TryEval(text), r2 = *TryEval(text);
  EXPECT_EQ(r1, r2);
  for (int64_t k = 0; k < 1000; ++k) {
    double u = r1.tuple_elements()[0].GetDouble(k);
    int64_t i = r1.tuple_elements()[1].GetInt(k);
    ASSERT_TRUE(u >= 2 && u < 3) << u;
    ASSERT_TRUE(i >= -3 && i < 4) << i;
  }
}

// ---------------------------------------------------------------- linear algebra

TEST(LinearAlgebraTest, CholeskyTriangularSolveFft) {
  EXPECT_EQ(EvalText(Entry(R"(a = f64[2,2] constant({ {4, 2}, {2, 5} })
    ROOT c = f64[2,2] cholesky(a), lower=true)")),
            "{ {2, 0}, {1, 2} }");
  // Lower L = [[2,0],[1,2]]: solve L x = [4, 7] -> [2, 2.5].
  EXPECT_EQ(EvalText(Entry(R"(a = f64[2,2] constant({ {2, 99}, {1, 2} })
    b = f64[2,1] constant({ {4}, {7} })
    ROOT x = f64[2,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE)")),
            "{ {2}, {2.5} }");
  // x L^T = [4, 7] with L^T = [[2,1],[0,2]]: x = [2, 2.5].
  EXPECT_EQ(EvalText(Entry(R"(a = f64[2,2] constant({ {2, 99}, {1, 2} })
    b = f64[1,2] constant({ {4, 7} })
    ROOT x = f64[1,2] triangular-solve(a, b), left_side=false, lower=true, transpose_a=TRANSPOSE)")),
            "{ {2, 2.5} }");
  Literal f = *TryEval(Entry(R"(a = c64[4] constant({(1, 0), (2, 0), (3, 0), (4, 0)})
    ROOT f = c64[4] fft(a), fft_type=FFT, fft_length={4})"));
  EXPECT_NEAR(f.GetComplex(0).real(), 10, 1e-6);
  EXPECT_NEAR(f.GetComplex(1).real(), -2, 1e-6);
  EXPECT_NEAR(f.GetComplex(1).imag(), 2, 1e-6);
  Literal rt = *TryEval(Entry(R"(a = f32[2,4] constant({ {1, 2, 3, 4}, {0, 1, 0, -1} })
    r = c64[2,3] fft(a), fft_type=RFFT, fft_length={2,4}
    ROOT i = f32[2,4] fft(r), fft_type=IRFFT, fft_length={2,4})"));
  EXPECT_TRUE(CompareLiterals(*TryEval(Entry("ROOT a = f32[2,4] constant({ {1, 2, 3, 4}, {0, 1, 0, -1} })")), rt,
                              {.abs = 1e-5})
                  .ok());
}

// ---------------------------------------------------------------- errors

// Every opcode of test/hlo/all_opcodes.hlo evaluates, once the instructions
// that need the outside world (and its unknown custom call) are replaced.
TEST(AllOpcodesTest, EveryEvaluableOpcodeRuns) {
  std::ifstream in(std::string(PASSLAB_SOURCE_DIR) + "/test/hlo/all_opcodes.hlo");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  std::vector<std::string> kept;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    for (const char* io : {"infeed(", "outfeed(", "send(", "send-done(", "recv(", "recv-done(", "%itok ="}) {
      if (line.find(io) != std::string::npos) line.clear();
    }
    if (line.find("add-dependency(") != std::string::npos) {
      line = "  %adep = f32[4,8]{1,0} add-dependency(f32[4,8]{1,0} %cdone, token[] %tok)";
    }
    if (line.find("custom_call_target=\"my_target\"") != std::string::npos) {
      line = "  %cc = f32[4,8]{1,0} custom-call(f32[4,8]{1,0} %dom), custom_call_target=\"Sharding\"";
    }
    size_t control = line.find(", control-predecessors=");
    if (control != std::string::npos) line.resize(control);
    kept.push_back(line);
  }
  std::string edited;
  for (const std::string& l : kept) edited += l + "\n";
  auto m = ParseHloModule(edited);
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 3);
  absl::StatusOr<Literal> r = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(r.ok()) << r.status().message();
}

TEST(ErrorTest, UnsupportedOpsNameTheInstruction) {
  absl::StatusOr<Literal> r = TryEval(Entry(R"(x = f32[2] constant({1, 2})
    ROOT c = f32[2] custom-call(x), custom_call_target="__nowhere$op")"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("unsupported custom call target \"__nowhere$op\""),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(std::string(r.status().message()).find("evaluating 'c'"), std::string::npos);
  // A library call with the wrong operands says what it expected.
  r = TryEval(Entry(R"(x = f32[2] constant({1, 2})
    ROOT c = f32[2] custom-call(x), custom_call_target="__blas$gemm")"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("expected 2 operands (lhs, rhs) but found 1"), std::string::npos)
      << r.status().message();
  r = TryEval(Entry(R"(t = token[] after-all()
    ROOT i = ((f32[2], u32[]), token[]) infeed(t))"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("evaluating 'i' (infeed) in 'e': needs the outside world"),
            std::string::npos)
      << r.status().message();
  r = TryEval(Entry(R"(x = f32[2] constant({1, 2})
    ROOT g = f32[4] all-gather(x), dimensions={0}, replica_groups={{0,1}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message())
                .find("evaluating 'g' (all-gather) in 'e': its result shape needs more than one participant"),
            std::string::npos);
}

TEST(ErrorTest, CompareReportsNanMismatchAndTuples) {
  Literal a = Literal::Vector<float>({1, NAN, 3});
  Literal b = Literal::Vector<float>({1, NAN, 3});
  EXPECT_TRUE(CompareLiterals(a, b, {}).ok());
  Literal c = Literal::Vector<float>({1, 2, 3});
  absl::Status s = CompareLiterals(Literal::Tuple({a.Convert(PrimitiveType::kF32).value(), c}),
                                   Literal::Tuple({c, c}), {.abs = 1});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("element 0: 1 of 3 elements differ; worst at index {1}: expected nan, got 2"),
            std::string::npos)
      << s.message();
  // One ULP apart passes with max_ulps=1, not without.
  Literal x = Literal::Vector<float>({1.0f}), y = Literal::Vector<float>({std::nextafter(1.0f, 2.0f)});
  EXPECT_FALSE(CompareLiterals(x, y, {}).ok());
  EXPECT_TRUE(CompareLiterals(x, y, {.max_ulps = 1}).ok());
}

}  // namespace
}  // namespace passlab
