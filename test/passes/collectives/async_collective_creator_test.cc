#include <gtest/gtest.h>

#include "passes/collectives/async_collective_creator.h"
#include "test/passes/collectives/collective_test_modules.h"
#include "test/passes/collective_pass_util.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

using collective_test::Module;

TEST(AsyncCollectiveCreatorTest, EveryCollectiveBecomesStartDone) {
  auto r = RunCollectivePass(std::make_unique<AsyncCollectiveCreator>(), Module("HloModule m, num_partitions=2", R"(
ENTRY e {
  p = f32[4] parameter(0)
  ar = f32[4] all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ag = f32[8] all-gather(p), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}
  cp = f32[4] collective-permute(p), channel_id=3, source_target_pairs={{0,1},{1,0}}
  rs = f32[2] reduce-scatter(p), channel_id=4, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}, to_apply=add
  a2a = f32[4] all-to-all(p), channel_id=5, replica_groups={{0,1}}, dimensions={0}
  ROOT t = (f32[4], f32[8], f32[4], f32[2], f32[4]) tuple(ar, ag, cp, rs, a2a)
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"all-reduce-start(p)", "all-reduce-done(", "NOT: all-reduce(p)"}));
  EXPECT_TRUE(Matches(r.text, {"all-gather-start(p)", "all-gather-done("}));
  EXPECT_TRUE(Matches(r.text, {"collective-permute-start(p)", "collective-permute-done("}));
  EXPECT_TRUE(Matches(r.text, {"reduce-scatter-start(p)", "reduce-scatter-done("}));
  EXPECT_TRUE(Matches(r.text, {"all-to-all-start(p)", "all-to-all-done("}));
}

TEST(AsyncCollectiveCreatorTest, LeavesDisabledKindsAndNonCollectives) {
  AsyncCollectiveCreatorOptions options;
  options.convert_all_reduce = false;
  auto r = RunCollectivePass(std::make_unique<AsyncCollectiveCreator>(options), Module("HloModule m, num_partitions=2", R"(
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT ar = f32[4] all-reduce(n), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
})"));
  EXPECT_FALSE(r.changed);
}

// XLA's async_collective_creator_test.cc,
// DoesNotSplitSingleAllReduceBelowThresholdWhenShouldNotIgnoreSizeCheck and
// SplitsSingleAllReduceBelowThresholdWhenShouldIgnoreSizeCheck: 400 bytes
// stay synchronous under a 4096-byte threshold unless the size check is
// ignored.
TEST(AsyncCollectiveCreatorTest, ThresholdAndGenericStartDone) {
  const std::string hlo = Module("HloModule m, replica_count=2", R"(
ENTRY e {
  p0 = f32[100] parameter(0)
  ROOT ar = f32[100] all-reduce(p0), replica_groups={}, to_apply=add
})");
  AsyncCollectiveCreatorOptions options;
  options.use_generic_async_start_done = true;
  options.all_reduce_min_threshold_in_bytes = 4096;
  EXPECT_FALSE(RunCollectivePass(std::make_unique<AsyncCollectiveCreator>(options), hlo).changed);
  // (The generic form of an all-reduce, which XLA's test checks next, is
  // one passlab's verifier rejects: all-reduce has its own async opcodes.)
  options.use_generic_async_start_done = false;
  options.should_ignore_size_check = true;
  auto r = RunCollectivePass(std::make_unique<AsyncCollectiveCreator>(options), hlo);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"all-reduce-start(p0)", "all-reduce-done("})) << r.text;
}

}  // namespace
}  // namespace passlab
