#include <gtest/gtest.h>

#include "passes/collectives/reduce_scatter_creator.h"
#include "test/passes/collectives/collective_test_modules.h"
#include "test/passes/collective_pass_util.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

using collective_test::Module;

TEST(ReduceScatterCreatorTest, DynamicSliceAtPartitionOffsetBecomesReduceScatter) {
  auto r = RunCollectivePass(std::make_unique<ReduceScatterCreator>(), Module("HloModule m, num_partitions=4", R"(
ENTRY e {
  p = f32[8,3] parameter(0)
  ar = f32[8,3] all-reduce(p), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add
  pid = u32[] partition-id()
  two = u32[] constant(2)
  off = u32[] multiply(pid, two)
  zero = u32[] constant(0)
  ROOT ds = f32[2,3] dynamic-slice(ar, off, zero), dynamic_slice_sizes={2,3}
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"reduce-scatter(p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, "
                               "use_global_device_ids=true, to_apply=add",
                               "NOT:all-reduce("}));
}

TEST(ReduceScatterCreatorTest, TableLookupOffsetsInSubgroups) {
  // Groups {0,2} and {1,3}: member k of each group reads rows [2k, 2k+2).
  auto r = RunCollectivePass(std::make_unique<ReduceScatterCreator>(), Module("HloModule m, num_partitions=4", R"(
ENTRY e {
  p = f32[4,2] parameter(0)
  ar = f32[4,2] all-reduce(p), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add
  table = s32[4] constant({0, 0, 2, 2})
  pid = u32[] partition-id()
  at = s32[1] dynamic-slice(table, pid), dynamic_slice_sizes={1}
  off = s32[] reshape(at)
  zero = s32[] constant(0)
  ROOT ds = f32[2,2] dynamic-slice(ar, off, zero), dynamic_slice_sizes={2,2}
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"reduce-scatter(p)", "replica_groups={{0,2},{1,3}}"}));
}

TEST(ReduceScatterCreatorTest, KeepsSlicesAtOtherOffsets) {
  // Every partition reads the same rows: not a scatter.
  auto r = RunCollectivePass(std::make_unique<ReduceScatterCreator>(), Module("HloModule m, num_partitions=2", R"(
ENTRY e {
  p = f32[4] parameter(0)
  ar = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  one = s32[] constant(1)
  ROOT ds = f32[2] dynamic-slice(ar, one), dynamic_slice_sizes={2}
})"));
  EXPECT_FALSE(r.changed);
}

}  // namespace
}  // namespace passlab
