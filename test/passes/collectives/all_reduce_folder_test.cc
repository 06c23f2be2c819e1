#include <gtest/gtest.h>

#include "passes/collectives/all_reduce_folder.h"
#include "test/passes/collectives/collective_test_modules.h"
#include "test/passes/collective_pass_util.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

using collective_test::Module;

TEST(AllReduceFolderTest, FoldsOrthogonalGroups) {
  auto r = RunCollectivePass(std::make_unique<AllReduceFolder>(), Module("HloModule m, replica_count=4", R"(
ENTRY e {
  p = f32[4] parameter(0)
  a0 = f32[4] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
  ROOT a1 = f32[4] all-reduce(a0), replica_groups={{0,2},{1,3}}, to_apply=add
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"all-reduce(p), replica_groups={{0,1,2,3}}", "NOT:a0"}));
}

TEST(AllReduceFolderTest, KeepsGroupsThatWouldCountTwice) {
  // The second all-reduce sums a value both members already share: the
  // result is twice the first one's, not one all-reduce.
  auto r = RunCollectivePass(std::make_unique<AllReduceFolder>(), Module("HloModule m, replica_count=4", R"(
ENTRY e {
  p = f32[4] parameter(0)
  a0 = f32[4] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
  ROOT a1 = f32[4] all-reduce(a0), replica_groups={{0,1},{2,3}}, to_apply=add
})"));
  EXPECT_FALSE(r.changed);
}

TEST(AllReduceFolderTest, KeepsDifferentReductionsAndSharedInner) {
  auto r = RunCollectivePass(std::make_unique<AllReduceFolder>(), Module("HloModule m, replica_count=4", R"(
ENTRY e {
  p = f32[4] parameter(0)
  a0 = f32[4] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
  a1 = f32[4] all-reduce(a0), replica_groups={{0,2},{1,3}}, to_apply=max
  b0 = f32[4] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
  b1 = f32[4] all-reduce(b0), replica_groups={{0,2},{1,3}}, to_apply=add
  ROOT t = (f32[4], f32[4], f32[4]) tuple(a1, b1, b0)
})"));
  EXPECT_FALSE(r.changed);
}

// XLA's all_reduce_folder_test.cc, MatchingCollectiveGroupKeysAllowFolding:
// the participants come from the groups themselves (ids 0..3); a matching
// collective_group_key is kept.
TEST(AllReduceFolderTest, FoldsGroupsOfTheirOwnIdsAndKeepsMatchingKeys) {
  auto r = RunCollectivePass(std::make_unique<AllReduceFolder>(), Module("HloModule m, replica_count=4", R"(
ENTRY e {
  p0 = f32[8] parameter(0)
  ar0 = f32[8] all-reduce(p0), replica_groups={{0,1},{2,3}}, to_apply=add, frontend_attributes={collective_group_key="g0"}
  ROOT ar1 = f32[8] all-reduce(ar0), replica_groups={{0,2},{1,3}}, to_apply=add, frontend_attributes={collective_group_key="g0"}
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"replica_groups={{0,1,2,3}}", "collective_group_key=\"g0\"", "NOT:all-reduce(ar0"}))
      << r.text;
}

}  // namespace
}  // namespace passlab
