#include "passes/expanders/logistic_expander.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(LogisticExpanderTest, Expands) {
  PassResult r = RunPass(std::make_unique<LogisticExpander>(), "ENTRY e {\n p = f32[4] parameter(0)\n ROOT l = f32[4] logistic(p)\n}");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"negate(%p)", "exponential(", "ROOT %divide", "NOT:logistic("})) << r.text;
}

TEST(LogisticExpanderTest, NothingToExpand) {
  EXPECT_FALSE(RunPass(std::make_unique<LogisticExpander>(), "ENTRY e {\n p = f32[4] parameter(0)\n ROOT t = f32[4] tanh(p)\n}").changed);
}

TEST(LogisticExpanderTest, EdgeCaseBf16AndScalar) {
  PassResult r = RunPass(std::make_unique<LogisticExpander>(), "ENTRY e {\n p = bf16[] parameter(0)\n ROOT l = bf16[] logistic(p)\n}");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"bf16[] constant(1)", "ROOT %divide = bf16[]"})) << r.text;
}

}  // namespace
}  // namespace passlab
