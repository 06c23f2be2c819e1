// The opcodes XLA added since the seed end to end: modules with acos, acosh,
// asin, asinh, atanh, cosh, sinh, mulhi, ragged-dot, scaled-dot and scan
// print back as parsed, run through the gpu pipeline (ragged_dot_rewriter,
// scaled-dot-rewriter and scan_expander lower the last three, as in today's
// XLA:GPU), compile and run on the CPU backend, and match the evaluator,
// whose ragged-dot, scaled-dot and scan are written independently of the
// expanders. Without its expander, a ragged-dot is refused by the CPU backend.
#include <gtest/gtest.h>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "passes/pipelines/pipelines.h"
#include "test/e2e/e2e_util.h"

namespace passlab {
namespace {

// Parses, checks the round trip, runs the gpu pipeline and the CPU backend
// and compares with the evaluator on `args` (random when empty). Returns the
// optimized module's text.
std::string ExpectRunsLikeEvaluator(const std::string& text, std::vector<Literal> args = {}, double tol = 1e-4) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "";
  absl::StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(PrintModule(**m));
  EXPECT_TRUE(again.ok()) << again.status().message();
  if (again.ok()) EXPECT_EQ(PrintModule(**again), PrintModule(**m));
  if (args.empty()) args = MakeRandomArguments(*(*m)->entry_computation(), 7);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**m, args);
  EXPECT_TRUE(expected.ok()) << expected.status().message();
  if (!expected.ok()) return "";
  VariantRun r = OptimizeAndRun(text, "", args);
  EXPECT_EQ(r.error, "");
  if (!r.error.empty()) return "";
  absl::Status same = CompareLiterals(*expected, r.result, {.abs = tol, .rel = tol});
  EXPECT_TRUE(same.ok()) << same.message() << "\n" << r.optimized;
  return r.optimized;
}

Literal F32(std::vector<int64_t> dims, std::vector<float> values) {
  Literal l(Shape(PrimitiveType::kF32, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) l.SetDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

Literal S32(std::vector<int64_t> dims, std::vector<int64_t> values) {
  Literal l(Shape(PrimitiveType::kS32, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) l.SetInt(static_cast<int64_t>(i), values[i]);
  return l;
}

TEST(Xla2026OpcodesTest, UnaryFunctionsCompileToLibm) {
  // Inputs in every function's domain: x in [0.1, 0.9] (acos, asin, atanh),
  // 1 + x (acosh).
  std::vector<float> xs = {0.1f, 0.25f, 0.5f, 0.75f, 0.9f, 0.3f};
  std::string optimized = ExpectRunsLikeEvaluator(R"(HloModule unary
ENTRY e {
  x = f32[6] parameter(0)
  one = f32[] constant(1)
  ones = f32[6] broadcast(one), dimensions={}
  xp1 = f32[6] add(x, ones)
  a = f32[6] acos(x)
  b = f32[6] acosh(xp1)
  c = f32[6] asin(x)
  d = f32[6] asinh(x)
  e = f32[6] atanh(x)
  f = f32[6] cosh(x)
  g = f32[6] sinh(x)
  ab = f32[6] add(a, b)
  cd = f32[6] add(c, d)
  ef = f32[6] add(e, f)
  abcd = f32[6] multiply(ab, cd)
  efg = f32[6] subtract(ef, g)
  ROOT r = f32[6] add(abcd, efg)
})",
                                                   [&] {
                                                     std::vector<Literal> a;
                                                     a.push_back(F32({6}, xs));
                                                     return a;
                                                   }());
  EXPECT_NE(optimized.find("acosh("), std::string::npos) << optimized;
}

TEST(Xla2026OpcodesTest, MulhiCompiles) {
  ExpectRunsLikeEvaluator(R"(HloModule mulhi
ENTRY e {
  a = s32[64] parameter(0)
  b = s32[64] parameter(1)
  c = u32[64] convert(a)
  d = u32[64] convert(b)
  hi = s32[64] mulhi(a, b)
  uhi = u32[64] mulhi(c, d)
  back = s32[64] convert(uhi)
  ROOT r = (s32[64], s32[64]) tuple(hi, back)
})");
}

TEST(Xla2026OpcodesTest, RaggedDotRunsAsAMaskedDot) {
  const std::string text = R"(HloModule ragged
ENTRY e {
  lhs = f32[6,4] parameter(0)
  rhs = f32[3,4,5] parameter(1)
  sizes = s32[3] parameter(2)
  ROOT r = f32[6,5] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})";
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  ASSERT_TRUE(m.ok());
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 3);
  args[2] = S32({3}, {2, 0, 3});  // 5 of 6 rows in groups; group 1 empty
  std::string optimized = ExpectRunsLikeEvaluator(text, std::move(args));
  EXPECT_EQ(optimized.find("ragged-dot"), std::string::npos) << optimized;
  // Without the rewriter the ragged-dot stays, and the CPU backend has no
  // emitter or routine for it: the executable is refused, naming the op.
  VariantRun r = OptimizeAndRun(text, "ragged_dot_rewriter", MakeRandomArguments(*(*m)->entry_computation(), 3));
  EXPECT_NE(r.error.find("compile: r (ragged-dot)"), std::string::npos) << r.error;
  EXPECT_NE(r.optimized.find("ragged-dot("), std::string::npos) << r.optimized;
}

TEST(Xla2026OpcodesTest, RaggedDotContractingRuns) {
  const std::string text = R"(HloModule ragged_k
ENTRY e {
  lhs = f32[3,8] parameter(0)
  rhs = f32[8,2] parameter(1)
  sizes = s32[2] parameter(2)
  ROOT r = f32[2,3,2] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
})";
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  ASSERT_TRUE(m.ok());
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 5);
  args[2] = S32({2}, {3, 5});
  ExpectRunsLikeEvaluator(text, std::move(args));
}

TEST(Xla2026OpcodesTest, ScaledDotRunsDequantized) {
  std::string optimized = ExpectRunsLikeEvaluator(R"(HloModule scaled
ENTRY e {
  lhs = f32[4,8] parameter(0)
  rhs = f32[8,6] parameter(1)
  ls = f32[4,2] parameter(2)
  rs = f32[2,6] parameter(3)
  ROOT r = f32[4,6] scaled-dot(lhs, rhs, ls, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_EQ(optimized.find("scaled-dot"), std::string::npos) << optimized;
}

TEST(Xla2026OpcodesTest, ScanRunsAsALoop) {
  std::string optimized = ExpectRunsLikeEvaluator(R"(HloModule scan
body {
  x = f32[3] parameter(0)
  acc = f32[3] parameter(1)
  s = f32[3] add(x, acc)
  m = f32[3] multiply(s, x)
  ROOT t = (f32[3], f32[3]) tuple(m, s)
}
ENTRY e {
  xs = f32[5,3] parameter(0)
  init = f32[3] parameter(1)
  ROOT r = (f32[5,3], f32[3]) scan(xs, init), dimensions={0}, num_carries=1, is_reverse=true, to_apply=body
})");
  EXPECT_EQ(optimized.find("scan("), std::string::npos) << optimized;
}

TEST(Xla2026OpcodesTest, LengthOneScanIsOneApplication) {
  std::string optimized = ExpectRunsLikeEvaluator(R"(HloModule scan1
body {
  x = f32[4] parameter(0)
  acc = f32[4] parameter(1)
  s = f32[4] add(x, acc)
  ROOT t = (f32[4], f32[4]) tuple(s, s)
}
ENTRY e {
  xs = f32[1,4] parameter(0)
  init = f32[4] parameter(1)
  ROOT r = (f32[1,4], f32[4]) scan(xs, init), dimensions={0}, num_carries=1, to_apply=body
})");
  EXPECT_EQ(optimized.find("while("), std::string::npos) << optimized;
}

}  // namespace
}  // namespace passlab
