// SpmdPartitioner ("spmd-partitioning"): hand-written before/after checks,
// the values check (the unpartitioned module on one participant against
// sharding-propagation + spmd-partitioning on N participants of the
// multi-participant evaluator, each given its shard of the same arguments,
// results put back together per the output sharding), unsupported
// shardings as clear errors, and the corpus.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/eval/sharded_literal.h"
#include "core/ir/hlo_sharding_util.h"
#include "core/ir/str_util.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/spmd/spmd_partitioner.h"
#include "test/passes/collective_pass_util.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

absl::StatusOr<bool> PropagateAndPartition(HloModule& m) {
  HloPassPipeline pipeline("test");
  pipeline.AddPass<ShardingPropagation>();
  pipeline.AddPass<SpmdPartitioner>();
  return pipeline.Run(m);
}

const HloSharding& ShardingOr(const HloInstruction* inst, const HloSharding& fallback) {
  return inst->has_sharding() ? inst->sharding() : fallback;
}

// Partitions `hlo` and checks the values; returns the partitioned text
// (without metadata, operand shapes and '%').
std::string PartitionAndCompare(const std::string& hlo) {
  auto m = ParseHloModule(hlo, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "";
  HloModule& module = **m;
  const int64_t partitions = module.config().num_partitions;
  std::vector<Literal> args = MakeRandomArguments(*module.entry_computation(), 2024);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(module, args);
  EXPECT_TRUE(expected.ok()) << expected.status().message();
  const Shape full_result = module.entry_computation()->root_instruction()->shape();
  absl::StatusOr<bool> changed = PropagateAndPartition(module);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  if (!changed.ok() || !expected.ok()) return "";
  EXPECT_TRUE(*changed);
  absl::Status verified = VerifyModule(module);
  EXPECT_TRUE(verified.ok()) << verified.message() << "\n" << PrintModule(module);
  // Device d gets its shard of every argument.
  const HloSharding replicated = ReplicatedSharding();
  std::vector<std::vector<Literal>> per_device(partitions);
  for (int64_t d = 0; d < partitions; ++d) {
    for (size_t i = 0; i < args.size(); ++i) {
      const HloInstruction* param = module.entry_computation()->parameter_instruction(static_cast<int64_t>(i));
      absl::StatusOr<Literal> shard = ShardLiteral(args[i], ShardingOr(param, replicated), d);
      EXPECT_TRUE(shard.ok()) << shard.status().message();
      if (!shard.ok()) return "";
      per_device[d].push_back(*std::move(shard));
    }
  }
  absl::StatusOr<std::vector<Literal>> results = EvaluateParticipants(module, per_device);
  EXPECT_TRUE(results.ok()) << results.status().message() << "\n" << PrintModule(module);
  if (!results.ok()) return "";
  const HloInstruction* root = module.entry_computation()->root_instruction();
  absl::StatusOr<Literal> whole = UnshardLiteral(*results, ShardingOr(root, replicated), full_result);
  EXPECT_TRUE(whole.ok()) << whole.status().message();
  if (whole.ok()) {
    absl::Status same = CompareLiterals(*expected, *whole, {.abs = 1e-4, .rel = 1e-4});
    EXPECT_TRUE(same.ok()) << "partitioning changed the values: " << same.message() << "\n" << PrintModule(module);
  }
  PrintOptions options;
  options.print_metadata = false;
  options.print_operand_shape = false;
  std::string text = PrintModule(module, options);
  std::erase(text, '%');
  return text;
}

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(SpmdPartitionerTest, DataParallelMlpStep) {
  // Forward on a batch split in two, the weight gradient contracts the
  // batch: local partial products and an all-reduce; the updated weight is
  // replicated.
  std::string text = PartitionAndCompare(std::string("HloModule mlp, num_partitions=2\n") + kAdd + R"(
ENTRY step {
  x = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
  t = f32[8,3] parameter(1), sharding={devices=[2,1]<=[2]}
  w = f32[4,3] parameter(2), sharding={replicated}
  b = f32[3] parameter(3), sharding={replicated}
  d = f32[8,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,3] broadcast(b), dimensions={1}
  a = f32[8,3] add(d, bb)
  z = f32[] constant(0)
  zb = f32[8,3] broadcast(z), dimensions={}
  y = f32[8,3] maximum(a, zb)
  dy = f32[8,3] subtract(y, t)
  gw = f32[4,3] dot(x, dy), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  gb = f32[3] reduce(dy, z), dimensions={0}, to_apply=add
  lr = f32[] constant(0.1)
  lrw = f32[4,3] broadcast(lr), dimensions={}
  sw = f32[4,3] multiply(lrw, gw)
  nw = f32[4,3] subtract(w, sw), sharding={replicated}
  lrb = f32[3] broadcast(lr), dimensions={}
  sb = f32[3] multiply(lrb, gb)
  nb = f32[3] subtract(b, sb), sharding={replicated}
  ROOT out = (f32[4,3], f32[3], f32[8,3]) tuple(nw, nb, y)
})");
  // (In XLA's printed order: a parameter comes where its first user needs it.)
  EXPECT_TRUE(Matches(text, {"x = f32[4,4]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}", "f32[4,3]{1,0} dot(x, w)",
                             "t = f32[4,3]{1,0} parameter(1)", "f32[4,3]{1,0} all-reduce(",
                             "use_global_device_ids=true", "NOT:all-gather("}));
}

TEST(SpmdPartitionerTest, TensorParallelDotSplitOnNonContractingDimension) {
  std::string text = PartitionAndCompare(R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[6,5] parameter(0), sharding={replicated}
  w = f32[5,8] parameter(1), sharding={devices=[1,4]<=[4]}
  d = f32[6,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,4]<=[4]}
  ROOT n = f32[6,8] tanh(d)
})");
  EXPECT_TRUE(Matches(text, {"w = f32[5,2]{1,0} parameter(1)", "f32[6,2]{1,0} dot(x, w)",
                             "ROOT", "f32[6,2]{1,0} tanh(", "NOT:all-reduce(", "NOT:all-gather("}));
}

TEST(SpmdPartitionerTest, TensorParallelDotSplitOnContractingDimension) {
  std::string text = PartitionAndCompare(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[6,8] parameter(0), sharding={devices=[1,2]<=[2]}
  w = f32[8,3] parameter(1), sharding={devices=[2,1]<=[2]}
  ROOT d = f32[6,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(Matches(text, {"x = f32[6,4]{1,0} parameter(0)", "w = f32[4,3]{1,0} parameter(1)",
                             "f32[6,3]{1,0} dot(x, w)", "all-reduce(", "to_apply=sum", "NOT:all-gather("}));
}

TEST(SpmdPartitionerTest, ReduceOverSplitDimensionAllReduces) {
  std::string text = PartitionAndCompare(std::string("HloModule m, num_partitions=4\n") + kAdd + R"(
ENTRY e {
  x = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  z = f32[] constant(0)
  cols = f32[6] reduce(x, z), dimensions={0}, to_apply=add
  rows = f32[8] reduce(x, z), dimensions={1}, to_apply=add
  ROOT t = (f32[6], f32[8]) tuple(cols, rows)
})");
  EXPECT_TRUE(Matches(text, {"f32[6]{0} reduce(x, z", "dimensions={0}, to_apply=add", "f32[6]{0} all-reduce(",
                             "f32[2]{0} reduce(x, z"}));
}

TEST(SpmdPartitionerTest, MaxReduceWithAnyInitCombines) {
  PartitionAndCompare(R"(HloModule m, num_partitions=2
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  c = f32[] constant(0.25)
  ROOT r = f32[] reduce(x, c), dimensions={0}, to_apply=max
})");
}

TEST(SpmdPartitionerTest, SumWithNonZeroInitRunsOnWholeOperand) {
  // init 1 would be counted on every partition: the reduce runs whole.
  std::string text = PartitionAndCompare(std::string("HloModule m, num_partitions=2\n") + kAdd + R"(
ENTRY e {
  x = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  one = f32[] constant(1)
  ROOT r = f32[] reduce(x, one), dimensions={0}, to_apply=add
})");
  EXPECT_TRUE(Matches(text, {"f32[8]{0} all-gather(x)", "reduce(", "NOT:all-reduce("}));
}

TEST(SpmdPartitionerTest, ReplicatedToSplitSlicesAtPartitionOffset) {
  // Devices in reverse order: partition 1 holds the first tile.
  std::string text = PartitionAndCompare(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[4,6] parameter(0), sharding={replicated}
  ROOT n = f32[4,6] negate(p), sharding={devices=[1,2]1,0}
})");
  EXPECT_TRUE(Matches(text, {"s32[2]{0} constant({3, 0})", "partition-id()", "f32[4,3]{1,0} dynamic-slice(p,",
                             "f32[4,3]{1,0} negate("}));
}

TEST(SpmdPartitionerTest, TransposeReshapeAndBroadcastStayLocal) {
  std::string text = PartitionAndCompare(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,6] parameter(0), sharding={devices=[2,1]<=[2]}
  t = f32[6,4] transpose(x), dimensions={1,0}
  b = f32[3,6,4] broadcast(t), dimensions={1,2}
  ROOT r = f32[18,4] reshape(b)
})");
  EXPECT_TRUE(Matches(text, {"f32[6,2]{1,0} transpose(x)", "f32[3,6,2]{2,1,0} broadcast(", "f32[18,2]{1,0} reshape(",
                             "NOT:all-gather("}));
}

TEST(SpmdPartitionerTest, ConvolutionSplitOnBatch) {
  std::string text = PartitionAndCompare(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,5,5,2] parameter(0), sharding={devices=[2,1,1,1]<=[2]}
  k = f32[3,3,2,3] parameter(1)
  ROOT c = f32[4,5,5,3] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  EXPECT_TRUE(Matches(text, {"x = f32[2,5,5,2]{3,2,1,0} parameter(0)", "f32[2,5,5,3]{3,2,1,0} convolution(x, k)",
                             "NOT:all-gather("}));
}

TEST(SpmdPartitionerTest, OtherOpsRunOnGatheredOperands) {
  // A concatenate along the split dimension is not partitioned locally:
  // gathered, computed whole, sliced back.
  std::string text = PartitionAndCompare(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,2] parameter(0), sharding={devices=[2,1]<=[2]}
  y = f32[4,2] parameter(1), sharding={devices=[2,1]<=[2]}
  ROOT c = f32[8,2] concatenate(x, y), dimensions={0}, sharding={devices=[2,1]<=[2]}
})");
  EXPECT_TRUE(Matches(text, {"f32[4,2]{1,0} all-gather(x)", "f32[8,2]{1,0} concatenate(", "dynamic-slice("}));
}

TEST(SpmdPartitionerTest, UnsupportedShardingIsAnErrorNamingTheInstruction) {
  for (const char* sharding : {"{devices=[2,1,2]<=[4] last_tile_dim_replicate}", "{devices=[2,2]<=[4]}",
                               "{maximal device=1}"}) {
    auto m = ParseHloModule(StrCat(R"(HloModule m, num_partitions=4
ENTRY e {
  p = f32[4,4] parameter(0), sharding=)",
                                   sharding, R"(
  ROOT bad = f32[4,4] negate(p)
})"));
    ASSERT_TRUE(m.ok()) << m.status().message();
    absl::StatusOr<bool> changed = PropagateAndPartition(**m);
    ASSERT_FALSE(changed.ok()) << sharding;
    EXPECT_NE(changed.status().message().find("spmd-partitioning: p: unsupported sharding"), std::string::npos)
        << changed.status().message();
  }
}

TEST(SpmdPartitionerTest, SingleDeviceAndUnannotatedModulesAreUnchanged) {
  for (const char* header : {"HloModule m", "HloModule m, num_partitions=2"}) {
    auto r = RunPass(std::make_unique<SpmdPartitioner>(), StrCat(header, R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
})"));
    EXPECT_FALSE(r.changed) << header;
  }
  auto r = RunPass(std::make_unique<SpmdPartitioner>(), R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0), sharding={devices=[2]<=[2]}
  ROOT n = f32[4] negate(p)
})");
  EXPECT_FALSE(r.changed);
}

TEST(SpmdPartitionerTest, CorpusModulesVerifyOrFailClearly) {
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  int candidates = 0, partitioned = 0, refused = 0;
  for (const auto& [name, text] : CorpusTextsWith("sharding={")) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, options);
    if (!m.ok() || !VerifyModule(**m).ok() || (*m)->config().num_partitions <= 1) continue;
    ++candidates;
    absl::StatusOr<bool> changed = PropagateAndPartition(**m);
    if (!changed.ok()) {
      // Unsupported shardings: a clear message naming the instruction.
      EXPECT_TRUE(absl::IsUnimplemented(changed.status())) << name << ": " << changed.status().message();
      EXPECT_NE(changed.status().message().find("spmd-partitioning: "), std::string::npos)
          << name << ": " << changed.status().message();
      ++refused;
      continue;
    }
    if (!*changed) continue;
    ++partitioned;
    absl::Status verified = VerifyModule(**m);
    EXPECT_TRUE(verified.ok()) << name << ": " << verified.message();
  }
  if (candidates == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  EXPECT_GT(partitioned + refused, 0);
  std::printf("corpus: %d partitioned modules with shardings, %d partitioned, %d refused\n", candidates, partitioned,
              refused);
}

}  // namespace
}  // namespace passlab
