// RngExpander draws from the module's state, not from the evaluator's own
// `rng` stream, so the values cannot be compared with the unexpanded module:
// these tests check the structure, the distributions (bounds, mean,
// variance) and determinism given the state.
#include <cmath>
#include <set>

#include "core/ir/str_util.h"
#include "passes/expanders/rng_expander.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

struct Expanded {
  std::unique_ptr<HloModule> module;
  std::string text;
  bool changed = false;
};

Expanded Expand(const std::string& hlo) {
  Expanded e;
  auto m = ParseHloModule(hlo, "rng.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return e;
  e.module = std::move(*m);
  HloPassPipeline pipeline("test");
  pipeline.AddPass<RngExpander>();
  absl::StatusOr<bool> changed = pipeline.Run(*e.module);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  e.changed = changed.ok() && *changed;
  absl::Status verified = VerifyModule(*e.module);
  EXPECT_TRUE(verified.ok()) << verified.message();
  PrintOptions options;
  options.print_metadata = false;
  e.text = PrintModule(*e.module, options);
  auto reparsed = ParseHloModule(e.text, "roundtrip.hlo");
  EXPECT_TRUE(reparsed.ok()) << reparsed.status().message();
  if (reparsed.ok()) {
    EXPECT_EQ(PrintModule(**reparsed, options), e.text);
  }
  return e;
}

Literal EvaluateWithSeed(const HloModule& m, uint64_t seed) {
  EvaluatorOptions options;
  options.rng_seed = seed;
  absl::StatusOr<Literal> r = HloEvaluator(options).Evaluate(m, {});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : Literal();
}

struct Moments {
  double mean = 0, variance = 0, min = INFINITY, max = -INFINITY;
};

Moments MomentsOf(const Literal& l) {
  Moments m;
  const int64_t n = l.element_count();
  for (int64_t i = 0; i < n; ++i) {
    double v = l.GetDouble(i);
    m.mean += v / n;
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
  }
  for (int64_t i = 0; i < n; ++i) m.variance += (l.GetDouble(i) - m.mean) * (l.GetDouble(i) - m.mean) / n;
  return m;
}

TEST(RngExpanderTest, UniformBecomesStateAndPhiloxBits) {
  Expanded e = Expand(R"(
ENTRY e {
  a = f32[] constant(-2)
  b = f32[] constant(3)
  ROOT r = f32[10] rng(a, b), distribution=rng_uniform
})");
  EXPECT_TRUE(e.changed);
  // 10 f32 values take three 128-bit philox blocks.
  EXPECT_TRUE(Matches(e.text, {"%rng_uniform_f32_10_seed_24301", "concatenate(", "rng-bit-generator(",
                               "algorithm=rng_philox", "shift-right-logical(", "convert(", "multiply(", "add(",
                               "ENTRY", "rng-get-and-update-state(), delta=3", "call(", "NOT: rng("}))
      << e.text;
}

TEST(RngExpanderTest, UniformFloatsStayInBoundsWithUniformMoments) {
  Expanded e = Expand(R"(
ENTRY e {
  a = f32[] constant(-2)
  b = f32[] constant(3)
  ROOT r = f32[64,64] rng(a, b), distribution=rng_uniform
})");
  ASSERT_TRUE(e.changed);
  Moments m = MomentsOf(EvaluateWithSeed(*e.module, 1));
  EXPECT_GE(m.min, -2.0);
  EXPECT_LT(m.max, 3.0);
  EXPECT_NEAR(m.mean, 0.5, 0.1);             // sd of the mean: 0.023
  EXPECT_NEAR(m.variance, 25.0 / 12, 0.15);  // sd: 0.02
  EXPECT_LT(m.min, -1.9);
  EXPECT_GT(m.max, 2.9);
}

TEST(RngExpanderTest, NormalHasMeanDeviationAndGaussianMass) {
  for (const char* type : {"f32", "f64"}) {
    Expanded e = Expand(StrCat(R"(
ENTRY e {
  mu = )", type, R"([] constant(1.5)
  sigma = )", type, R"([] constant(2)
  ROOT r = )", type, R"([64,64] rng(mu, sigma), distribution=rng_normal
})"));
    ASSERT_TRUE(e.changed);
    EXPECT_TRUE(Matches(e.text, {StrCat("%rng_normal_", type, "_64x64"), "log(", "sqrt(", "select(", "ENTRY",
                                 StrCat("delta=", std::string(type) == "f32" ? 1024 : 2048)}))
        << e.text;
    Literal l = EvaluateWithSeed(*e.module, 3);
    Moments m = MomentsOf(l);
    EXPECT_NEAR(m.mean, 1.5, 0.15) << type;   // sd of the mean: 0.031
    EXPECT_NEAR(m.variance, 4.0, 0.4) << type;  // sd: 0.09
    int64_t within_one_sigma = 0;
    for (int64_t i = 0; i < l.element_count(); ++i) within_one_sigma += std::abs(l.GetDouble(i) - 1.5) < 2.0;
    EXPECT_NEAR(static_cast<double>(within_one_sigma) / l.element_count(), 0.6827, 0.03) << type;
    EXPECT_LT(m.min, 1.5 - 2 * 2.5);  // tails reach past 2.5 sigma
    EXPECT_GT(m.max, 1.5 + 2 * 2.5);
  }
}

TEST(RngExpanderTest, UniformIntegersCoverTheHalfOpenRange) {
  Expanded e = Expand(R"(
ENTRY e {
  a = s32[] constant(-5)
  b = s32[] constant(7)
  ROOT r = s32[2048] rng(a, b), distribution=rng_uniform
})");
  ASSERT_TRUE(e.changed);
  EXPECT_TRUE(Matches(e.text, {"bitcast-convert(", "remainder(", "ENTRY", "delta=512"})) << e.text;
  Literal l = EvaluateWithSeed(*e.module, 5);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < l.element_count(); ++i) seen.insert(l.GetInt(i));
  EXPECT_EQ(seen.size(), 12u);
  EXPECT_EQ(*seen.begin(), -5);
  EXPECT_EQ(*seen.rbegin(), 6);
}

TEST(RngExpanderTest, DeterministicGivenTheStateAndDrawsDistinctBits) {
  Expanded e = Expand(R"(
ENTRY e {
  a = u64[] constant(0)
  b = u64[] constant(1000000)
  x = u64[8] rng(a, b), distribution=rng_uniform
  y = u64[8] rng(a, b), distribution=rng_uniform
  ROOT t = (u64[8], u64[8]) tuple(x, y)
})");
  ASSERT_TRUE(e.changed);
  // One generated computation serves both draws.
  EXPECT_TRUE(Matches(e.text, {"%rng_uniform_u64_8_seed_24301", "NOT:%rng_uniform_u64_8_seed_24301.1"})) << e.text;
  Literal first = EvaluateWithSeed(*e.module, 9);
  Literal again = EvaluateWithSeed(*e.module, 9);
  Literal other = EvaluateWithSeed(*e.module, 10);
  const Literal& x = first.tuple_elements()[0];
  const Literal& y = first.tuple_elements()[1];
  int64_t same_xy = 0, same_other = 0;
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(x.GetBits(i), again.tuple_elements()[0].GetBits(i));
    EXPECT_EQ(y.GetBits(i), again.tuple_elements()[1].GetBits(i));
    EXPECT_LT(x.GetBits(i), 1000000u);
    same_xy += x.GetBits(i) == y.GetBits(i);
    same_other += x.GetBits(i) == other.tuple_elements()[0].GetBits(i);
  }
  EXPECT_LT(same_xy, 2);     // the second draw advanced the state
  EXPECT_LT(same_other, 2);  // another state, other values
}

TEST(RngExpanderTest, HalfPrecisionDrawsInF32) {
  Expanded e = Expand(R"(
ENTRY e {
  a = bf16[] constant(0)
  b = bf16[] constant(1)
  ROOT r = bf16[4,4] rng(a, b), distribution=rng_uniform
})");
  ASSERT_TRUE(e.changed);
  EXPECT_TRUE(Matches(e.text, {"%rng_uniform_f32_4x4", "ENTRY", "f32[] convert(", "f32[4,4]{1,0} call(",
                               "ROOT", "bf16[4,4]{1,0} convert("}))
      << e.text;
  Moments m = MomentsOf(EvaluateWithSeed(*e.module, 2));
  EXPECT_GE(m.min, 0.0);
  EXPECT_LE(m.max, 1.0);  // rounding to bf16 may reach b
}

TEST(RngExpanderTest, EdgeCaseEmptyShapeAndScalar) {
  Expanded e = Expand(R"(
ENTRY e {
  a = f32[] constant(0)
  b = f32[] constant(1)
  x = f32[0,3] rng(a, b), distribution=rng_uniform
  y = f32[] rng(a, b), distribution=rng_normal
  ROOT t = (f32[0,3], f32[]) tuple(x, y)
})");
  ASSERT_TRUE(e.changed);
  EXPECT_TRUE(Matches(e.text, {"delta=0", "delta=1", "NOT: rng("})) << e.text;
  EvaluateWithSeed(*e.module, 1);
}

TEST(RngExpanderTest, LeavesPredRng) {
  Expanded e = Expand(R"(
ENTRY e {
  a = pred[] constant(false)
  b = pred[] constant(true)
  ROOT r = pred[4] rng(a, b), distribution=rng_uniform
})");
  EXPECT_FALSE(e.changed);
}

// Every corpus module with rng still verifies after the pass and, where
// the evaluator runs it, evaluates to the same shapes (values differ by
// design: another stream).
TEST(RngExpanderTest, CorpusModulesStillVerifyAndEvaluate) {
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  int candidates = 0, changed = 0, evaluated = 0;
  for (const auto& [name, text] : CorpusTextsWith(" rng(")) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, options);
    if (!m.ok() || !VerifyModule(**m).ok()) continue;
    ++candidates;
    std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 3);
    absl::StatusOr<Literal> before = absl::UnimplementedError("too large to evaluate here");
    if (SmallModule(**m, 1 << 14)) before = HloEvaluator().Evaluate(**m, args);
    HloPassPipeline pipeline("corpus");
    pipeline.AddPass<RngExpander>();
    absl::StatusOr<bool> ran = pipeline.Run(**m);
    ASSERT_TRUE(ran.ok()) << name << ": " << ran.status().message();
    if (!*ran) continue;
    ++changed;
    absl::Status verified = VerifyModule(**m);
    EXPECT_TRUE(verified.ok()) << name << ": " << verified.message();
    if (!before.ok()) continue;
    absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
    ASSERT_TRUE(after.ok()) << name << ": " << after.status().message();
    EXPECT_EQ(after->shape().ToString(), before->shape().ToString()) << name;
    ++evaluated;
  }
  if (candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(changed, 0);
  EXPECT_GT(evaluated, 0);
}

}  // namespace
}  // namespace passlab
