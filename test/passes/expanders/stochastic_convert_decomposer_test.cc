#include "core/ir/str_util.h"
#include "passes/expanders/stochastic_convert_decomposer.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

TEST(StochasticConvertDecomposerTest, FloatToIntBecomesFloorCompareAndSaturation) {
  PassResult r = RunPass(std::make_unique<StochasticConvertDecomposer>(), R"(
ENTRY e {
  x = f32[64] parameter(0)
  random = u32[64] parameter(1)
  ROOT c = s32[64] stochastic-convert(x, random)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // XLA's printed order: the NaN test (x != x) is reached first from the
  // root's select chain.
  EXPECT_TRUE(Matches(r.text, {"direction=NE", "abs(", "floor(", "subtract(", "multiply(", "u32[64]{0} convert(",
                               "direction=LT", "negate(", "direction=GE", "s32[64]{0} convert(",
                               "NOT:stochastic-convert("}))
      << r.text;
}

// Exact halves with chosen random bits, NaN, infinities, signed zero and
// values beyond the range: RunPass compares every element with the
// evaluator's stochastic-convert; a few are spelled out.
TEST(StochasticConvertDecomposerTest, EdgeValuesMatchTheEvaluatorExactly) {
  PassResult r = RunPass(std::make_unique<StochasticConvertDecomposer>(), R"(
ENTRY e {
  x = f32[10] constant({2.5, 2.5, -2.5, -2.5, nan, inf, -inf, -0, 3e9, -3e9})
  random = u32[10] constant({2147483647, 2147483648, 0, 4294967295, 7, 7, 7, 7, 0, 0})
  ROOT c = s32[10] stochastic-convert(x, random)
})");
  ASSERT_TRUE(r.changed);
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(*r.module, {});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const int64_t want[] = {3, 2, -3, -2, 0, 2147483647, -2147483648LL, 0, 2147483647, -2147483648LL};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out->GetInt(i), want[i]) << i;
}

TEST(StochasticConvertDecomposerTest, NarrowSignedAndUnsignedResultsSaturate) {
  PassResult r = RunPass(std::make_unique<StochasticConvertDecomposer>(), R"(
ENTRY e {
  x = bf16[6] constant({-300, -128.5, 127.25, 300, 0.75, -0.75})
  random = u16[6] constant({0, 0, 0, 0, 40000, 40000})
  ROOT c = s8[6] stochastic-convert(x, random)
})");
  ASSERT_TRUE(r.changed);
  absl::StatusOr<Literal> s8 = HloEvaluator().Evaluate(*r.module, {});
  ASSERT_TRUE(s8.ok()) << s8.status().message();
  const int64_t want[] = {-128, -128, 127, 127, 1, -1};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(s8->GetInt(i), want[i]) << i;
  PassResult u = RunPass(std::make_unique<StochasticConvertDecomposer>(), R"(
ENTRY e {
  x = f64[4,4] parameter(0)
  random = u64[4,4] parameter(1)
  ROOT c = u8[4,4] stochastic-convert(x, random)
})");
  EXPECT_TRUE(u.changed);
  ExpectModuleVerifies(u);
}

TEST(StochasticConvertDecomposerTest, LeavesFloatResultsAndMismatchedRandomWidths) {
  EXPECT_FALSE(RunPass(std::make_unique<StochasticConvertDecomposer>(), R"(
ENTRY e {
  x = f32[8] parameter(0)
  random = u32[8] parameter(1)
  ROOT c = bf16[8] stochastic-convert(x, random)
})").changed);
  EXPECT_FALSE(RunPass(std::make_unique<StochasticConvertDecomposer>(), R"(
ENTRY e {
  x = bf16[8] parameter(0)
  random = u32[8] parameter(1)
  ROOT c = s32[8] stochastic-convert(x, random)
})").changed);
}

TEST(StochasticConvertDecomposerTest, CorpusModulesStillVerifyAndCompute) {
  CorpusPassStats stats = CheckPassOnCorpus(
      "stochastic-convert(", [] { return std::make_unique<StochasticConvertDecomposer>(); }, 1 << 17);
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(stats.changed, 0);
  // bf16 modules are compared only for verification (CheckPassOnCorpus
  // compares f32/f64 values); the f32 one is compared element by element.
  EXPECT_GT(stats.evaluated, 0);
}

}  // namespace
}  // namespace passlab
