#include <gtest/gtest.h>

#include "passes/collectives/all_reduce_simplifier.h"
#include "test/passes/collectives/collective_test_modules.h"
#include "test/passes/collective_pass_util.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

using collective_test::Module;

TEST(AllReduceSimplifierTest, RemovesAllReduceOverGroupsOfOne) {
  auto r = RunCollectivePass(std::make_unique<AllReduceSimplifier>(), Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(p), replica_groups={{0},{1}}, to_apply=add
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT p = f32[4]{0} parameter(0)", "NOT:all-reduce("}));
}

TEST(AllReduceSimplifierTest, SumOfReplicatedValueBecomesMultiply) {
  auto r = RunCollectivePass(std::make_unique<AllReduceSimplifier>(), Module("HloModule m, replica_count=4", R"(
ENTRY e {
  c = f32[4] constant({1, 2, 3, 4})
  ar = f32[4] all-reduce(c), replica_groups={{0,1},{2,3}}, to_apply=add
  mx = f32[4] all-reduce(c), replica_groups={}, to_apply=max
  ROOT t = (f32[4], f32[4]) tuple(ar, mx)
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"constant(2)", "multiply(c,", "NOT:all-reduce("}));
}

TEST(AllReduceSimplifierTest, KeepsAllReduceOfPerDeviceValues) {
  auto r = RunCollectivePass(std::make_unique<AllReduceSimplifier>(), Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p = f32[4] parameter(0)
  rid = u32[] replica-id()
  f = f32[] convert(rid)
  b = f32[4] broadcast(f), dimensions={}
  ar = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add
  ar2 = f32[4] all-reduce(b), replica_groups={{0,1}}, to_apply=add
  ROOT t = (f32[4], f32[4]) tuple(ar, ar2)
})"));
  EXPECT_FALSE(r.changed);
}

TEST(AllReduceSimplifierTest, RemovesAllGatherOverGroupsOfOne) {
  auto r = RunCollectivePass(std::make_unique<AllReduceSimplifier>(), Module("HloModule m, num_partitions=2", R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT ag = f32[4] all-gather(p), channel_id=1, replica_groups={{0},{1}}, use_global_device_ids=true, dimensions={0}
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"NOT:all-gather("}));
}

}  // namespace
}  // namespace passlab
