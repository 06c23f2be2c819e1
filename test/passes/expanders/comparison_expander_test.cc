#include "passes/expanders/comparison_expander.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(ComparisonExpanderTest, TotalOrderBecomesIntegerCompare) {
  PassResult r = RunPass(std::make_unique<ComparisonExpander>(), R"(
ENTRY e {
  a = f32[6] constant({nan, -nan, -0, 0, -inf, 1})
  b = f32[6] constant({1, -inf, 0, -0, -nan, 1})
  ROOT c = pred[6] compare(a, b), direction=LT, type=TOTALORDER
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"bitcast-convert(", "type=SIGNED", "NOT:TOTALORDER"})) << r.text;
  // The evaluator check in RunPass compares against the TOTALORDER semantics.
}

TEST(ComparisonExpanderTest, LeavesDefaultComparisons) {
  EXPECT_FALSE(RunPass(std::make_unique<ComparisonExpander>(),
                       "ENTRY e {\n a = f32[2] parameter(0)\n ROOT c = pred[2] compare(a, a), direction=LT\n}").changed);
}

TEST(ComparisonExpanderTest, EdgeCaseF64AndBf16) {
  PassResult r = RunPass(std::make_unique<ComparisonExpander>(), R"(
ENTRY e {
  a = f64[2] parameter(0)
  b = bf16[2] parameter(1)
  c1 = pred[2] compare(a, a), direction=GE, type=TOTALORDER
  c2 = pred[2] compare(b, b), direction=EQ, type=TOTALORDER
  ROOT t = (pred[2], pred[2]) tuple(c1, c2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"s64[2]{0} bitcast-convert(", "s16[2]{0} bitcast-convert("})) << r.text;
}

}  // namespace
}  // namespace passlab
