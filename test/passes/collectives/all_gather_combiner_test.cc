#include <gtest/gtest.h>

#include "passes/collectives/all_gather_combiner.h"
#include "test/passes/collectives/collective_test_modules.h"
#include "test/passes/collective_pass_util.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

using collective_test::Module;

// XLA's all_gather_combiner_test.cc, CombineAllGathersByDim: with
// combine_by_dim, only all-gathers along the same dimension combine.
TEST(AllGatherCombinerTest, CombinesAlongOneDimensionOnlyByDim) {
  auto r = RunCollectivePass(std::make_unique<AllGatherCombiner>(AllGatherCombinerOptions{.combine_by_dim = true}),
                             Module("HloModule m, num_partitions=2", R"(
ENTRY e {
  p = f32[2,3] parameter(0)
  q = f32[2,5] parameter(1)
  a = f32[4,3] all-gather(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}
  b = f32[4,5] all-gather(q), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}
  c = f32[2,6] all-gather(p), channel_id=3, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={1}
  ROOT t = (f32[4,3], f32[4,5], f32[2,6]) tuple(a, b, c)
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[4,3]{1,0}, f32[4,5]{1,0}) all-gather(p, q), channel_id=1"}));
  EXPECT_TRUE(Matches(r.text, {"all-gather(p), channel_id=3"}));
}

// XLA's CombineManyAllGathersDifferentDims: without combine_by_dim (XLA:GPU's
// default) the combined op gathers along the most frequent dimension; the
// others are bitcast there (dimensions swapped, layout following) and back.
// The values on every device stay the same.
TEST(AllGatherCombinerTest, CombinesDifferentDimsThroughBitcasts) {
  auto r = RunCollectivePass(std::make_unique<AllGatherCombiner>(), Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p0 = f32[2,7]{1,0} parameter(0)
  p1 = f32[3,8]{1,0} parameter(1)
  p2 = f32[4,9]{0,1} parameter(2)
  a0 = f32[4,7]{1,0} all-gather(p0), replica_groups={}, dimensions={0}
  a1 = f32[6,8]{1,0} all-gather(p1), replica_groups={}, dimensions={0}
  a2 = f32[4,18]{0,1} all-gather(p2), replica_groups={}, dimensions={1}
  ROOT t = (f32[4,7]{1,0}, f32[6,8]{1,0}, f32[4,18]{0,1}) tuple(a0, a1, a2)
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[9,4]{1,0} bitcast(p2)",
                               "(f32[4,7]{1,0}, f32[6,8]{1,0}, f32[18,4]{1,0}) all-gather(p0, p1, bitcast)",
                               "dimensions={0}", "f32[4,18]{0,1} bitcast("}))
      << r.text;
}

// XLA's CombineFromTwoDomainsWithSameMetadata and DomainPreventsCombining:
// all-gathers combine only within domains with equal metadata, and the
// combined op gets the tuple of the members' shardings.
TEST(AllGatherCombinerTest, CombinesOnlyWithinEqualDomains) {
  auto r = RunCollectivePass(std::make_unique<AllGatherCombiner>(), Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p0 = f32[4] parameter(0), sharding={maximal device=0}
  p1 = f32[4] parameter(1), sharding={maximal device=1}
  p2 = f32[4] parameter(2), sharding={maximal device=1}
  a0 = f32[8] all-gather(p0), replica_groups={}, dimensions={0}, sharding={maximal device=0}
  a1 = f32[8] all-gather(p1), replica_groups={}, dimensions={0}, sharding={maximal device=1}
  a2 = f32[8] all-gather(p2), replica_groups={}, dimensions={0}, sharding={maximal device=0}
  d0 = f32[8] domain(a0), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=0}}
  d1 = f32[8] domain(a1), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
  d2 = f32[8] domain(a2), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=0}}
  ROOT t = (f32[8], f32[8], f32[8]) tuple(d0, d1, d2)
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"all-gather(p0, p2)", "sharding={{maximal device=0}, {maximal device=0}}",
                               "all-gather(p1)"}))
      << r.text;
}

// XLA's DoNotCombineOverThreshold / CombineUpToThreshold and
// PreservesFrontendAttributesAndMergedMetadata.
TEST(AllGatherCombinerTest, ThresholdAndMergedAttributes) {
  const std::string hlo = Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p0 = f32[32] parameter(0)
  p1 = f32[32] parameter(1)
  a0 = f32[64] all-gather(p0), replica_groups={}, dimensions={0},
      frontend_attributes={color="red",is_pipelineable="true"}, metadata={op_type="ag" op_name="model/layer/ag_0"}
  a1 = f32[64] all-gather(p1), replica_groups={}, dimensions={0},
      frontend_attributes={color="blue",is_pipelineable="true"}, metadata={op_type="ag" op_name="model/layer/ag_1"}
  ROOT t = (f32[64], f32[64]) tuple(a0, a1)
})");
  EXPECT_FALSE(RunCollectivePass(std::make_unique<AllGatherCombiner>(
                                     AllGatherCombinerOptions{.combine_threshold_in_bytes = 511}),
                                 hlo)
                   .changed);
  auto r = RunCollectivePass(
      std::make_unique<AllGatherCombiner>(AllGatherCombinerOptions{.combine_threshold_in_bytes = 512}), hlo);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"all-gather(p0, p1)", "frontend_attributes={color=\"blue,red\",is_pipelineable=\"true\"}"}))
      << r.text;
  const HloInstruction* combined = nullptr;
  for (const HloInstruction* inst : r.module->entry_computation()->instructions()) {
    if (inst->opcode() == HloOpcode::kAllGather) combined = inst;
  }
  ASSERT_NE(combined, nullptr);
  EXPECT_EQ(combined->metadata().op_name, "model/layer/(ag_0:ag_1)");
  EXPECT_EQ(combined->metadata().op_type, "ag");
}

}  // namespace
}  // namespace passlab
