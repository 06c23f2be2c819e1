// The multi-participant evaluator: every collective on hand-computed values,
// groups chosen by replica groups / channel ids / global device ids, async
// forms, and a failing participant that must not hang the others.
#include "core/eval/multi_participant_evaluator.h"

#include <gtest/gtest.h>

#include "core/eval/sharded_literal.h"
#include "core/ir/hlo_sharding_util.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

constexpr char kAdd[] = R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
)";

// Runs `body` (an entry computation without parameters) on every device and
// returns each device's printed result.
std::vector<std::string> RunOnDevices(const std::string& header, const std::string& body) {
  auto m = ParseHloModule(header + kAdd + body);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return {};
  int64_t n = (*m)->config().replica_count * (*m)->config().num_partitions;
  std::vector<std::vector<Literal>> args(n);
  auto r = EvaluateParticipants(**m, args);
  EXPECT_TRUE(r.ok()) << r.status().message();
  std::vector<std::string> out;
  if (r.ok()) {
    for (const Literal& l : *r) out.push_back(l.ToString());
  }
  return out;
}

// Each device's value: {10 * partition + k, ...} for k = 0..3.
constexpr char kPartitionValue[] = R"(
  p = u32[] partition-id()
  ps = s32[] convert(p)
  ten = s32[] constant(10)
  base = s32[] multiply(ps, ten)
  b = s32[4] broadcast(base), dimensions={}
  i = s32[4] iota(), iota_dimension=0
  v = s32[4] add(b, i)
)";

TEST(MultiParticipantEvaluatorTest, AllReduceOverFlattenedIds) {
  std::vector<std::string> r = RunOnDevices("HloModule m, num_partitions=4\n", std::string("ENTRY e {") + kPartitionValue + R"(
  ROOT ar = s32[4] all-reduce(v), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add
})");
  ASSERT_EQ(r.size(), 4u);
  for (const std::string& s : r) EXPECT_EQ(s, "{60, 64, 68, 72}");
}

TEST(MultiParticipantEvaluatorTest, SubgroupsReduceSeparately) {
  std::vector<std::string> r = RunOnDevices("HloModule m, num_partitions=4\n", std::string("ENTRY e {") + kPartitionValue + R"(
  ROOT ar = s32[4] all-reduce(v), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add
})");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0], "{20, 22, 24, 26}");
  EXPECT_EQ(r[2], "{20, 22, 24, 26}");
  EXPECT_EQ(r[1], "{40, 42, 44, 46}");
}

TEST(MultiParticipantEvaluatorTest, CrossReplicaWithoutChannelStaysInPartition) {
  // 2 replicas x 2 partitions; no channel id: replicas of one partition meet.
  std::vector<std::string> r =
      RunOnDevices("HloModule m, replica_count=2, num_partitions=2\n", R"(ENTRY e {
  rid = u32[] replica-id()
  pid = u32[] partition-id()
  r = s32[] convert(rid)
  p = s32[] convert(pid)
  hundred = s32[] constant(100)
  rp = s32[] multiply(r, hundred)
  v = s32[] add(rp, p)
  ROOT ar = s32[] all-reduce(v), replica_groups={}, to_apply=add
})");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0], "100");  // devices 0 (r0,p0) and 2 (r1,p0): 0 + 100
  EXPECT_EQ(r[1], "102");  // devices 1 and 3: 1 + 101
  EXPECT_EQ(r[2], "100");
}

TEST(MultiParticipantEvaluatorTest, AllGatherReduceScatterAllToAll) {
  std::string body = std::string("ENTRY e {") + kPartitionValue + R"(
  ag = s32[8] all-gather(v), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}
  rs = s32[2] reduce-scatter(v), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}, to_apply=add
  a2a = s32[4] all-to-all(v), channel_id=3, replica_groups={{0,1}}, dimensions={0}
  ROOT t = (s32[8], s32[2], s32[4]) tuple(ag, rs, a2a)
})";
  std::vector<std::string> r = RunOnDevices("HloModule m, num_partitions=2\n", body);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], "({0, 1, 2, 3, 10, 11, 12, 13}, {10, 12}, {0, 1, 10, 11})");
  EXPECT_EQ(r[1], "({0, 1, 2, 3, 10, 11, 12, 13}, {14, 16}, {2, 3, 12, 13})");
}

TEST(MultiParticipantEvaluatorTest, CollectivePermuteAndBroadcast) {
  std::string body = std::string("ENTRY e {") + kPartitionValue + R"(
  cp = s32[4] collective-permute(v), channel_id=1, source_target_pairs={{0,1},{1,2}}
  cb = s32[4] collective-broadcast(v), channel_id=2, replica_groups={{2,0,1}}
  ROOT t = (s32[4], s32[4]) tuple(cp, cb)
})";
  std::vector<std::string> r = RunOnDevices("HloModule m, num_partitions=3\n", body);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], "({0, 0, 0, 0}, {20, 21, 22, 23})");  // nobody sends to 0
  EXPECT_EQ(r[1], "({0, 1, 2, 3}, {20, 21, 22, 23})");
  EXPECT_EQ(r[2], "({10, 11, 12, 13}, {20, 21, 22, 23})");
}

TEST(MultiParticipantEvaluatorTest, AsyncFormsMatchSyncForms) {
  std::string body = std::string("ENTRY e {") + kPartitionValue + R"(
  ars = s32[4] all-reduce-start(v), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ard = s32[4] all-reduce-done(ars)
  ags = (s32[4], s32[8]) all-gather-start(v), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}
  agd = s32[8] all-gather-done(ags)
  rss = ((s32[4]), s32[2], s32[]) reduce-scatter-start(v), channel_id=3, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}, to_apply=add
  rsd = s32[2] reduce-scatter-done(rss)
  ROOT t = (s32[4], s32[8], s32[2]) tuple(ard, agd, rsd)
})";
  std::vector<std::string> r = RunOnDevices("HloModule m, num_partitions=2\n", body);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], "({10, 12, 14, 16}, {0, 1, 2, 3, 10, 11, 12, 13}, {10, 12})");
  EXPECT_EQ(r[1], "({10, 12, 14, 16}, {0, 1, 2, 3, 10, 11, 12, 13}, {14, 16})");
}

TEST(MultiParticipantEvaluatorTest, CollectivesInLoopsMeetPerIteration) {
  std::string body = R"(
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ar = s32[] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ROOT t = (s32[], s32[]) tuple(i1, ar)
}
ENTRY e {
  p = u32[] partition-id()
  x = s32[] convert(p)
  one = s32[] constant(1)
  x1 = s32[] add(x, one)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, x1)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=1
})";
  std::vector<std::string> r = RunOnDevices("HloModule m, num_partitions=2\n", body);
  ASSERT_EQ(r.size(), 2u);
  // (1 + 2) doubled twice more: 3, 6, 12.
  EXPECT_EQ(r[0], "12");
  EXPECT_EQ(r[1], "12");
}

TEST(MultiParticipantEvaluatorTest, FailingParticipantDoesNotHang) {
  // Device 1 finds its group names a device that does not exist and fails;
  // device 0 waits at the all-reduce and must be released.
  auto m = ParseHloModule(std::string("HloModule m, num_partitions=2\n") + kAdd + R"(ENTRY e {
  c = s32[] constant(1)
  ROOT ar = s32[] all-reduce(c), channel_id=1, replica_groups={{0},{1,7}}, use_global_device_ids=true, to_apply=add
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<std::vector<Literal>> args(2);
  MultiParticipantOptions options;
  options.rendezvous_timeout_ms = 20000;
  auto r = EvaluateParticipants(**m, args, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("device 7"), std::string::npos) << r.status().message();
}

TEST(MultiParticipantEvaluatorTest, ShardAndUnshardRoundTrip) {
  Literal full(Shape::Array(PrimitiveType::kS32, {4, 6}));
  for (int64_t i = 0; i < 24; ++i) full.SetInt(i, i);
  HloSharding s;
  s.kind = HloSharding::Kind::kTiled;
  s.tile_dims = {2, 3};
  s.devices = {5, 4, 3, 2, 1, 0};
  std::vector<Literal> parts;
  for (int64_t d = 0; d < 6; ++d) {
    auto p = ShardLiteral(full, s, d);
    ASSERT_TRUE(p.ok()) << p.status().message();
    parts.push_back(std::move(*p));
  }
  EXPECT_EQ(parts[5].ToString(), "{ {0, 1}, {6, 7} }");
  EXPECT_EQ(parts[0].ToString(), "{ {16, 17}, {22, 23} }");
  auto back = UnshardLiteral(parts, s, full.shape());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, full);
  // Partial replication: two tiles, each on two devices.
  HloSharding partial = TiledSharding(2, 0, 2);
  partial.tile_dims.push_back(2);
  partial.iota_reshape_dims = {4};
  partial.last_tile_dim_replicate = true;
  EXPECT_EQ(ShardingTileIndex(partial, 2, 3), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ShardShape(full.shape(), partial).ToString(false), "s32[2,6]");
}

}  // namespace
}  // namespace passlab
