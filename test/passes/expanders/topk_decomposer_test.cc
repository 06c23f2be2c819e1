#include "core/ir/str_util.h"
#include "passes/expanders/topk_decomposer.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

TEST(TopkDecomposerTest, LargestBecomesStableSortWithIotaAndSlices) {
  PassResult r = RunPass(std::make_unique<TopkDecomposer>(), R"(
ENTRY e {
  x = f32[3,8] parameter(0)
  ROOT t = (f32[3,3], s32[3,3]) topk(x), k=3, largest=true
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%topk_gt_f32", "compare(", "direction=GT", "type=TOTALORDER", "ENTRY",
                               "s32[3,8]{1,0} iota(), iota_dimension=1", "sort(", "dimensions={1}", "is_stable=true",
                               "f32[3,3]{1,0} slice(", "slice={[0:3], [0:3]}", "s32[3,3]{1,0} slice(",
                               "NOT:topk("}))
      << r.text;
}

// Ties keep the lower index first (RunPass compares values and indices
// with the evaluator's topk); NaN and signed zeros sort in total order.
TEST(TopkDecomposerTest, SmallestWithTiesNaNAndSignedZeros) {
  PassResult r = RunPass(std::make_unique<TopkDecomposer>(), R"(
ENTRY e {
  x = f32[2,6] constant({{3, 1, 3, 1, 2, 1}, {0, -0, nan, -1, 0, -0}})
  ROOT t = (f32[2,4], s32[2,4]) topk(x), k=4, largest=false
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"direction=LT", "type=TOTALORDER"})) << r.text;
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(*r.module, {});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const Literal& indices = out->tuple_elements()[1];
  const int64_t want[] = {1, 3, 5, 4, 3, 1, 5, 0};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(indices.GetInt(i), want[i]) << i;
}

TEST(TopkDecomposerTest, IntegersAndValuesOnlySkipTheIota) {
  PassResult r = RunPass(std::make_unique<TopkDecomposer>(), R"(
ENTRY e {
  x = s32[4,5] parameter(0)
  t = (s32[4,2], s32[4,2]) topk(x), k=2, largest=true
  ROOT v = s32[4,2] get-tuple-element(t), index=0
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%topk_gt_s32", "NOT:TOTALORDER", "ENTRY", "s32[4,5]{1,0} sort(", "NOT:iota(",
                               "NOT:topk("}))
      << r.text;
}

TEST(TopkDecomposerTest, EdgeCaseKeepsLayoutsAndHandlesKZero) {
  PassResult r = RunPass(std::make_unique<TopkDecomposer>(), R"(
ENTRY e {
  x = f32[10,5]{0,1} parameter(0)
  a = (f32[10,2]{0,1}, s32[10,2]{0,1}) topk(x), k=2, largest=true
  b = (f32[10,0], s32[10,0]) topk(x), k=0, largest=false
  ROOT t = ((f32[10,2]{0,1}, s32[10,2]{0,1}), (f32[10,0], s32[10,0])) tuple(a, b)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[10,5]{0,1} iota(", "f32[10,2]{0,1} slice(", "s32[10,2]{0,1} slice(",
                               "f32[10,0]{1,0} slice(", "NOT:topk("}))
      << r.text;
}

TEST(TopkDecomposerTest, LeavesSortAlone) {
  EXPECT_FALSE(RunPass(std::make_unique<TopkDecomposer>(), R"(
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}

ENTRY e {
  x = f32[8] parameter(0)
  ROOT s = f32[8] sort(x), dimensions={0}, to_apply=gt
})").changed);
}

TEST(TopkDecomposerTest, CorpusModulesStillVerifyAndCompute) {
  CorpusPassStats stats = CheckPassOnCorpus(" topk(", [] { return std::make_unique<TopkDecomposer>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(stats.changed, 0);
  EXPECT_EQ(stats.changed, stats.candidates);
}

}  // namespace
}  // namespace passlab
