#include <gtest/gtest.h>

#include "passes/collectives/all_reduce_combiner.h"
#include "test/passes/collectives/collective_test_modules.h"
#include "test/passes/collective_pass_util.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

using collective_test::Module;

TEST(AllReduceCombinerTest, CombinesIndependentAllReduces) {
  auto r = RunCollectivePass(std::make_unique<AllReduceCombiner>(), Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[2,3] parameter(1)
  a = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add
  b = f32[2,3] all-reduce(q), replica_groups={{0,1}}, to_apply=add
  ROOT t = (f32[4], f32[2,3]) tuple(a, b)
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[4]{0}, f32[2,3]{1,0}) all-reduce(p, q)", "get-tuple-element(", "index=1"}));
}

TEST(AllReduceCombinerTest, KeepsDependentAndDifferentGroups) {
  auto r = RunCollectivePass(std::make_unique<AllReduceCombiner>(), Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add
  n = f32[4] negate(a)
  b = f32[4] all-reduce(n), replica_groups={{0,1}}, to_apply=add
  c = f32[4] all-reduce(p), replica_groups={{0},{1}}, to_apply=add
  d = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=max
  ROOT t = (f32[4], f32[4], f32[4]) tuple(b, c, d)
})"));
  EXPECT_FALSE(r.changed);
}

TEST(AllReduceCombinerTest, RespectsByteThreshold) {
  auto r = RunCollectivePass(std::make_unique<AllReduceCombiner>(AllReduceCombinerOptions{.combine_threshold_in_bytes = 20}),
                             Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add
  b = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add
  ROOT t = (f32[4], f32[4]) tuple(a, b)
})"));
  EXPECT_FALSE(r.changed);
}

// XLA's all_reduce_combiner_test.cc, CrossCombineGroupCycle: crs00 and crs11
// (add) combine; crs01 and crs10 (max) then cannot without a cycle; crs02 and
// crs12 combine. Sets form anew after each combination.
TEST(AllReduceCombinerTest, SetsFormAgainAfterEachCombination) {
  auto r = RunCollectivePass(std::make_unique<AllReduceCombiner>(), Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  crs00 = f32[16] all-reduce(p0), replica_groups={}, to_apply=add
  crs10 = f32[16] all-reduce(p1), replica_groups={}, to_apply=max
  crs01 = f32[16] all-reduce(crs00), replica_groups={}, to_apply=max
  crs11 = f32[16] all-reduce(crs10), replica_groups={}, to_apply=add
  add0 = f32[16] add(crs01, crs11)
  crs02 = f32[16] all-reduce(add0), replica_groups={}, to_apply=add
  crs12 = f32[16] all-reduce(crs11), replica_groups={}, to_apply=add
  ROOT t = (f32[16], f32[16]) tuple(crs02, crs12)
})"));
  EXPECT_TRUE(r.changed);
  int64_t all_reduces = 0;
  for (const HloInstruction* inst : r.module->entry_computation()->instructions()) {
    all_reduces += inst->opcode() == HloOpcode::kAllReduce ? 1 : 0;
  }
  EXPECT_EQ(all_reduces, 4) << r.text;
  EXPECT_TRUE(Matches(r.text, {"all-reduce(p0, crs10)"})) << r.text;
}

// XLA's DoNotCombineWithControlDependencies and
// DoNotCombineOpWithSchedulingAnnotation.
TEST(AllReduceCombinerTest, KeepsControlDependentAndScheduledAllReduces) {
  EXPECT_FALSE(RunCollectivePass(std::make_unique<AllReduceCombiner>(), Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  a = f32[16] all-reduce(p0), replica_groups={}, to_apply=add, frontend_attributes={_scheduling_group_id="0"}
  b = f32[16] all-reduce(p1), replica_groups={}, to_apply=add
  ROOT t = (f32[16], f32[16]) tuple(a, b)
})")).changed);
}

}  // namespace
}  // namespace passlab
