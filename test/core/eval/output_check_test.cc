#include "core/eval/output_check.h"

#include <vector>

#include "gtest/gtest.h"

namespace passlab {
namespace {

std::vector<float> Ramp(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = 1.0f + 0.01f * static_cast<float>(i);
  return v;
}

OutputCheck Check(const Literal& expected, const Literal& actual) {
  std::vector<const Literal*> e, a;
  FlattenLeaves(expected, e);
  FlattenLeaves(actual, a);
  return CheckOutputs(e, a, OutputCheckOptions{});
}

TEST(OutputCheckTest, EqualLeavesMatch) {
  Literal x = Literal::Tuple({Literal::Vector<float>(Ramp(100)), Literal::Scalar<int32_t>(3)});
  OutputCheck c = Check(x, Literal(x));
  EXPECT_TRUE(c.ok);
  EXPECT_TRUE(c.close_leaves.empty());
  EXPECT_EQ(c.message, "outputs match the reference");
}

TEST(OutputCheckTest, OneElementOffButTheLeafCloseInNormIsAcceptedWithANote) {
  std::vector<float> v = Ramp(400);
  Literal expected = Literal::Tuple({Literal::Vector<float>(v)});
  v[7] *= 1.05f;  // 5% on one element of 400: ~0.25% in norm
  OutputCheck c = Check(expected, Literal::Tuple({Literal::Vector<float>(v)}));
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_EQ(c.close_leaves, std::vector<int>({0}));
  EXPECT_NE(c.message.find("in norm"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("{7}"), std::string::npos) << "names the worst element: " << c.message;
}

TEST(OutputCheckTest, ALeafOffInNormIsWrongAndEveryWrongLeafIsListed) {
  std::vector<float> v = Ramp(10);
  Literal expected = Literal::Tuple({Literal::Vector<float>(v), Literal::Vector<float>(v), Literal::Vector<float>(v)});
  std::vector<float> w = v;
  for (float& x : w) x *= 1.1f;  // 10% everywhere
  OutputCheck c = Check(expected, Literal::Tuple({Literal::Vector<float>(v), Literal::Vector<float>(w),
                                                  Literal::Vector<float>(w)}));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.wrong_leaves, std::vector<int>({1, 2}));
  EXPECT_NE(c.message.find("output 1"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("2 of 3 (1,2)"), std::string::npos) << c.message;
}

TEST(OutputCheckTest, IntegersHaveNoNormCriterion) {
  std::vector<int32_t> v(400, 5);
  Literal expected = Literal::Vector<int32_t>(v);
  v[3] = 6;
  OutputCheck c = Check(expected, Literal::Vector<int32_t>(v));
  EXPECT_FALSE(c.ok);
}

TEST(OutputCheckTest, LeafCountMismatchIsWrong) {
  Literal x = Literal::Tuple({Literal::Vector<float>(Ramp(4))});
  Literal y = Literal::Tuple({Literal::Vector<float>(Ramp(4)), Literal::Vector<float>(Ramp(4))});
  EXPECT_FALSE(Check(x, y).ok);
}

}  // namespace
}  // namespace passlab
