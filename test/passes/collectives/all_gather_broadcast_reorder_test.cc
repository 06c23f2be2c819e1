// AllGatherBroadcastReorder ("all-gather-bcast-reorder"): hand-written
// before/after checks, the corpus, and every participant's values before and
// after on the multi-participant evaluator (collective_pass_util.h).
#include <gtest/gtest.h>

#include "passes/collectives/all_gather_broadcast_reorder.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"
#include "test/passes/collective_pass_util.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

CollectivePassResult Reorder(const std::string& hlo) {
  return RunCollectivePass(std::make_unique<AllGatherBroadcastReorder>(), hlo);
}

TEST(AllGatherBroadcastReorderTest, GathersOperandAlongOperandDimension) {
  auto r = Reorder(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[3] parameter(0)
  b = f32[5,3] broadcast(p), dimensions={1}
  ROOT ag = f32[5,12] all-gather(b), replica_groups={}, dimensions={1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[12]{0} all-gather(p), replica_groups={}, dimensions={0}",
                               "f32[5,12]{1,0} broadcast(all-gather", "), dimensions={1}",
                               "NOT:broadcast(p)"}));
}

TEST(AllGatherBroadcastReorderTest, GathersAlongBroadcastDimensionThroughUnitDimension) {
  // Each participant's block along dimension 0 is uniform: gather one row
  // per participant and broadcast it into its block.
  auto r = Reorder(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[3] parameter(0)
  b = f32[4,3] broadcast(p), dimensions={1}
  ROOT ag = f32[8,3] all-gather(b), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[1,3]{1,0} reshape(p)",
                               "f32[2,3]{1,0} all-gather(reshape", "), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true",
                               "f32[2,4,3]{2,1,0} broadcast(all-gather", "), dimensions={0,2}",
                               "f32[8,3]{1,0} reshape(broadcast"}));
}

TEST(AllGatherBroadcastReorderTest, GathersAlongMiddleBroadcastDimension) {
  auto r = Reorder(R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[2,3] parameter(0)
  b = f32[2,4,3] broadcast(p), dimensions={0,2}
  ROOT ag = f32[2,8,3] all-gather(b), replica_groups={{0,1}}, dimensions={1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,1,3]{2,1,0} reshape(p)", "f32[2,2,3]{2,1,0} all-gather(",
                               "f32[2,2,4,3]{3,2,1,0} broadcast(all-gather", "), dimensions={0,1,3}"}));
}

TEST(AllGatherBroadcastReorderTest, GathersScalarBroadcast) {
  auto r = Reorder(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[] parameter(0)
  b = f32[2,3] broadcast(p), dimensions={}
  ROOT ag = f32[2,12] all-gather(b), replica_groups={{0,1,2,3}}, dimensions={1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[1]{0} reshape(p)", "f32[4]{0} all-gather(",
                               "f32[2,4,3]{2,1,0} broadcast(all-gather", "), dimensions={1}"}));
}

TEST(AllGatherBroadcastReorderTest, KeepsBroadcastForItsOtherUsers) {
  auto r = Reorder(R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[3] parameter(0)
  b = f32[5,3] broadcast(p), dimensions={1}
  ag = f32[5,6] all-gather(b), replica_groups={}, dimensions={1}
  n = f32[5,3] negate(b)
  ROOT t = (f32[5,6], f32[5,3]) tuple(ag, n)
})");
  EXPECT_TRUE(r.changed);
  // (Printed in XLA's post order: the root tuple's operands in turn.)
  EXPECT_TRUE(Matches(r.text, {"f32[6]{0} all-gather(p)", "b = f32[5,3]{1,0} broadcast(p)", "negate(b)"}));
}

TEST(AllGatherBroadcastReorderTest, KeepsBroadcastAddingNoDimension) {
  // Nothing shrinks: the broadcast's operand is as large as its result.
  auto r = Reorder(R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[5,3] parameter(0)
  b = f32[5,3] broadcast(p), dimensions={0,1}
  ROOT ag = f32[10,3] all-gather(b), replica_groups={}, dimensions={0}
})");
  EXPECT_FALSE(r.changed);
}

TEST(AllGatherBroadcastReorderTest, KeepsAllGatherOfOtherOps) {
  auto r = Reorder(R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[5,3] parameter(0)
  n = f32[5,3] negate(p)
  ROOT ag = f32[10,3] all-gather(n), replica_groups={}, dimensions={0}
})");
  EXPECT_FALSE(r.changed);
}

TEST(AllGatherBroadcastReorderTest, KeepsTupleAllGather) {
  auto r = Reorder(R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[3] parameter(0)
  b = f32[5,3] broadcast(p), dimensions={1}
  q = f32[2] parameter(1)
  ROOT ag = (f32[10,3], f32[4]) all-gather(b, q), replica_groups={}, dimensions={0}
})");
  EXPECT_FALSE(r.changed);
}

TEST(AllGatherBroadcastReorderTest, CorpusModulesStayValid) {
  CorpusCollectiveStats stats = CheckCollectivePassOnCorpus(
      " all-gather(", [] { return std::make_unique<AllGatherBroadcastReorder>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  EXPECT_GT(stats.candidates, 0);
}

TEST(AllGatherBroadcastReorderTest, RegisteredAfterReduceScatterCreator) {
  ASSERT_NE(FindRegisteredPass("all-gather-bcast-reorder"), nullptr);
  EXPECT_FALSE(FindRegisteredPass("all-gather-bcast-reorder")->required);
  std::unique_ptr<HloPassPipeline> pipeline = BuildCollectiveOptimizationsPipeline();
  std::vector<std::string> names;
  for (const PassOccurrence& o : pipeline->Occurrences()) names.push_back(o.pass_name);
  auto creator = std::find(names.begin(), names.end(), "reduce-scatter-creator");
  auto reorder = std::find(names.begin(), names.end(), "all-gather-bcast-reorder");
  ASSERT_NE(reorder, names.end());
  EXPECT_LT(creator, reorder);
}

}  // namespace
}  // namespace passlab
