// The loop emitter on every elementwise opcode and element type, with
// non-default layouts, against the evaluator. Ops of one type are emitted as
// one multi-output fusion (one kernel) to keep the test fast.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/ir/str_util.h"
#include "test/core/codegen/codegen_test_util.h"

namespace passlab {
namespace {

using testing::ExpectFusedMatchesEvaluator;
using testing::ExpectMatchesEvaluator;

const std::vector<std::string> kFloatTypes = {"f32", "f64", "f16", "bf16"};
const std::vector<std::string> kIntTypes = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"};

ErrorSpec SpecFor(const std::string& type) {
  if (type == "bf16") return {1e-2, 1e-2, 2};
  if (type == "f16") return {1e-3, 1e-3, 2};
  return {1e-6, 1e-5, 8};
}

// One fusion computing `ops` on a (column-major) and b (row-major), results
// in column-major layout.
std::string BinaryOps(const std::vector<std::string>& ops, const std::string& in, const std::string& out,
                      const std::string& attrs = "") {
  std::string text = StrCat("HloModule m\nENTRY e {\n  a = ", in, "[5,7]{0,1} parameter(0)\n  b = ", in,
                            "[5,7]{1,0} parameter(1)\n");
  std::string shapes, names;
  for (size_t i = 0; i < ops.size(); ++i) {
    text += StrCat("  r", i, " = ", out, "[5,7]{0,1} ", ops[i], "(a, b)", attrs, "\n");
    shapes += StrCat(i ? ", " : "", out, "[5,7]{0,1}");
    names += StrCat(i ? ", r" : "r", i);
  }
  return text + StrCat("  ROOT t = (", shapes, ") tuple(", names, ")\n}\n");
}
std::string UnaryOps(const std::vector<std::string>& ops, const std::string& in,
                     const std::vector<std::string>& outs) {
  std::string text = StrCat("HloModule m\nENTRY e {\n  a = ", in, "[3,9,2]{1,2,0} parameter(0)\n");
  std::string shapes, names;
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string& out = outs.size() == 1 ? outs[0] : outs[i];
    text += StrCat("  r", i, " = ", out, "[3,9,2] ", ops[i], "(a)\n");
    shapes += StrCat(i ? ", " : "", out, "[3,9,2]");
    names += StrCat(i ? ", r" : "r", i);
  }
  return text + StrCat("  ROOT t = (", shapes, ") tuple(", names, ")\n}\n");
}

TEST(ElementwiseTest, FloatBinaryOps) {
  for (const std::string& t : kFloatTypes) {
    SCOPED_TRACE(t);
    ExpectFusedMatchesEvaluator(BinaryOps({"add", "subtract", "multiply", "divide", "remainder", "power", "atan2",
                                           "maximum", "minimum"},
                                          t, t),
                                SpecFor(t));
  }
}

TEST(ElementwiseTest, FloatUnaryOps) {
  for (const std::string& t : kFloatTypes) {
    SCOPED_TRACE(t);
    ExpectFusedMatchesEvaluator(
        UnaryOps({"abs", "negate", "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "sqrt",
                  "rsqrt", "cbrt", "sine", "cosine", "tan", "tanh", "erf", "ceil", "floor", "round-nearest-afz",
                  "round-nearest-even", "sign", "copy"},
                 t, {t}),
        SpecFor(t));
    ExpectFusedMatchesEvaluator(UnaryOps({"is-finite"}, t, {"pred"}), SpecFor(t));
  }
}

TEST(ElementwiseTest, IntegerBinaryOpsIncludingDivisionByZero) {
  for (const std::string& t : kIntTypes) {
    SCOPED_TRACE(t);
    ExpectFusedMatchesEvaluator(BinaryOps({"add", "subtract", "multiply", "divide", "remainder", "maximum",
                                           "minimum", "and", "or", "xor", "shift-left", "shift-right-logical",
                                           "shift-right-arithmetic", "power"},
                                          t, t),
                                {0, 0, 0});
  }
}

TEST(ElementwiseTest, IntegerEdgeValues) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = s32[6] constant({7, -2147483648, 5, -7, 3, -1})
  b = s32[6] constant({0, -1, 2, 2, 40, 33})
  d = s32[6] divide(a, b)
  r = s32[6] remainder(a, b)
  sl = s32[6] shift-left(a, b)
  sra = s32[6] shift-right-arithmetic(a, b)
  srl = s32[6] shift-right-logical(a, b)
  ROOT t = (s32[6], s32[6], s32[6], s32[6], s32[6]) tuple(d, r, sl, sra, srl)
})", {0, 0, 0});
}

TEST(ElementwiseTest, IntegerUnaryOps) {
  for (const std::string& t : kIntTypes) {
    SCOPED_TRACE(t);
    ExpectFusedMatchesEvaluator(
        UnaryOps({"abs", "negate", "not", "popcnt", "count-leading-zeros", "sign", "copy"}, t, {t}), {0, 0, 0});
  }
}

TEST(ElementwiseTest, PredOps) {
  ExpectFusedMatchesEvaluator(BinaryOps({"and", "or", "xor"}, "pred", "pred"), {0, 0, 0});
  ExpectFusedMatchesEvaluator(UnaryOps({"not"}, "pred", {"pred"}), {0, 0, 0});
}

TEST(ElementwiseTest, CompareAllDirectionsAndTypes) {
  std::vector<std::string> types = kFloatTypes;
  types.insert(types.end(), kIntTypes.begin(), kIntTypes.end());
  types.push_back("pred");
  for (const std::string& t : types) {
    SCOPED_TRACE(t);
    std::string text = StrCat("HloModule m\nENTRY e {\n  a = ", t, "[5,7]{0,1} parameter(0)\n  b = ", t,
                              "[5,7] parameter(1)\n");
    std::string shapes, names;
    int n = 0;
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      for (bool total : {false, true}) {
        if (total && t[0] != 'f' && t[0] != 'b') continue;
        text += StrCat("  r", n, " = pred[5,7] compare(a, b), direction=", dir, total ? ", type=TOTALORDER" : "",
                       "\n");
        shapes += StrCat(n ? ", " : "", "pred[5,7]");
        names += StrCat(n ? ", r" : "r", n);
        ++n;
      }
    }
    text += StrCat("  ROOT t = (", shapes, ") tuple(", names, ")\n}\n");
    ExpectFusedMatchesEvaluator(text, {0, 0, 0});
  }
}

TEST(ElementwiseTest, CompareTotalOrderOnSpecialValues) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[6] constant({-0, 0, nan, -inf, 1, -nan})
  b = f32[6] constant({0, -0, 1, -1, nan, nan})
  lt = pred[6] compare(a, b), direction=LT, type=TOTALORDER
  eq = pred[6] compare(a, b), direction=EQ, type=TOTALORDER
  ne = pred[6] compare(a, b), direction=NE
  mx = f32[6] maximum(a, b)
  mn = f32[6] minimum(a, b)
  ROOT t = (pred[6], pred[6], pred[6], f32[6], f32[6]) tuple(lt, eq, ne, mx, mn)
})", {0, 0, 0});
}

TEST(ElementwiseTest, ConvertBetweenAllTypes) {
  std::vector<std::string> types = kFloatTypes;
  types.insert(types.end(), kIntTypes.begin(), kIntTypes.end());
  types.push_back("pred");
  for (const std::string& from : types) {
    SCOPED_TRACE(from);
    std::vector<std::string> ops(types.size(), "convert");
    // bf16 is the least precise result type: its tolerance covers all.
    ExpectFusedMatchesEvaluator(UnaryOps(ops, from, types), {1e-2, 1e-2, 2});
  }
}

TEST(ElementwiseTest, ConvertSaturatesAndMapsNanToZero) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[7] constant({nan, 1e10, -1e10, 3.7, -3.7, 255.5, -0.5})
  s = s32[7] convert(a)
  u = u8[7] convert(a)
  s8 = s8[7] convert(a)
  ROOT t = (s32[7], u8[7], s8[7]) tuple(s, u, s8)
})", {0, 0, 0});
}

TEST(ElementwiseTest, SelectClampAndBitcastConvert) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  p = pred[4,6] parameter(0)
  a = f32[4,6] parameter(1)
  b = f32[4,6]{0,1} parameter(2)
  lo = f32[] constant(-0.5)
  hi = f32[] constant(0.5)
  s = f32[4,6] select(p, a, b)
  c = f32[4,6] clamp(lo, s, hi)
  i = s32[4,6] bitcast-convert(c)
  ROOT t = (f32[4,6], s32[4,6]) tuple(c, i)
})", {0, 0, 0});
}

TEST(ElementwiseTest, UnfusedSingleOps) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
})");
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[1,0,3] parameter(0)
  ROOT r = f32[1,0,3] negate(a)
})");
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[1,1,17,1]{2,0,3,1} parameter(0)
  ROOT r = f32[1,1,17,1]{0,1,2,3} exponential(a)
})");
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = s16[3,5]{0,1} parameter(0)
  b = s16[3,5] parameter(1)
  ROOT r = s16[3,5] divide(a, b)
})", {0, 0, 0});
}

TEST(ElementwiseTest, LargeKernelRunsInParallelAndMatches) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[300,517] parameter(0)
  b = f32[300,517]{0,1} parameter(1)
  ROOT r = f32[300,517] multiply(a, b)
})");
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[100003] parameter(0)
  ROOT r = f32[100003] sqrt(a)
})");
  CpuCompileOptions one_thread;
  one_thread.num_threads = 1;
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[300,517] parameter(0)
  ROOT r = f32[300,517] exponential(a)
})", {1e-6, 1e-5, 8}, one_thread);
}

}  // namespace
}  // namespace passlab
