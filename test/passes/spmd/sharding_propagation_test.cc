// ShardingPropagation ("sharding-propagation"): hand-written before/after
// checks (forward and backward through each handled op), the corpus, and
// the evaluator check (annotations never change values), plus the
// spmd-partitioner pipeline's place and its single-device pass-through.
#include <gtest/gtest.h>

#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"
#include "passes/spmd/sharding_propagation.h"
#include "test/passes/corpus_pass_util.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

PassResult Propagate(const std::string& hlo) {
  PassResult r = RunPass(std::make_unique<ShardingPropagation>(), hlo);
  std::erase(r.text, '%');
  return r;
}

TEST(ShardingPropagationTest, DataParallelMlpForwardAndBackward) {
  // The batch split of x reaches every activation; the weights, read by a
  // dot whose result is split on the batch, are replicated.
  auto r = Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
  w = f32[4,3] parameter(1)
  b = f32[3] parameter(2)
  d = f32[8,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,3] broadcast(b), dimensions={1}
  a = f32[8,3] add(d, bb)
  z = f32[] constant(0)
  zb = f32[8,3] broadcast(z), dimensions={}
  ROOT h = f32[8,3] maximum(a, zb)
})");
  EXPECT_TRUE(r.changed);
  // (In XLA's printed order: b comes where its first user needs it.)
  EXPECT_TRUE(Matches(r.text, {"w = f32[4,3]{1,0} parameter(1), sharding={replicated}",
                               "d = f32[8,3]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                               "sharding={devices=[2,1]<=[2]}",
                               "b = f32[3]{0} parameter(2), sharding={replicated}",
                               "bb = f32[8,3]{1,0} broadcast(b), dimensions={1}, sharding={devices=[2,1]<=[2]}",
                               "a = f32[8,3]{1,0} add(d, bb), sharding={devices=[2,1]<=[2]}",
                               "ROOT h = f32[8,3]{1,0} maximum(a, zb), sharding={devices=[2,1]<=[2]}"}));
}

TEST(ShardingPropagationTest, DotContractingSplitGivesReplicatedResult) {
  auto r = Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[8,4] parameter(0), sharding={devices=[1,2]<=[2]}
  w = f32[4,3] parameter(1), sharding={devices=[2,1]<=[2]}
  ROOT d = f32[8,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT d = f32[8,3]{1,0} dot(x, w)", "sharding={replicated}"}));
}

TEST(ShardingPropagationTest, DotRhsFreeSplitMovesToResultColumns) {
  auto r = Propagate(R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[8,4] parameter(0), sharding={replicated}
  w = f32[4,12] parameter(1), sharding={devices=[1,4]<=[4]}
  d = f32[8,12] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[8,12] negate(d)
})");
  EXPECT_TRUE(r.changed);
  // The lhs comes first and is replicated: the first operand decides.
  EXPECT_TRUE(Matches(r.text, {"d = f32[8,12]{1,0} dot(x, w)", "sharding={replicated}"}));
  auto r2 = Propagate(R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[8,4] parameter(0)
  w = f32[4,12] parameter(1), sharding={devices=[1,4]<=[4]}
  d = f32[8,12] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[8,12] negate(d)
})");
  EXPECT_TRUE(Matches(r2.text, {"x = f32[8,4]{1,0} parameter(0), sharding={replicated}",
                                "sharding={devices=[1,4]<=[4]}", "ROOT n = f32[8,12]{1,0} negate(d), "
                                "sharding={devices=[1,4]<=[4]}"}));
}

TEST(ShardingPropagationTest, ReduceKeepsOrDropsTheSplit) {
  auto r = Propagate(R"(HloModule m, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,6] parameter(0), sharding={devices=[2,1]<=[2]}
  z = f32[] constant(0)
  rows = f32[8] reduce(x, z), dimensions={1}, to_apply=add
  all = f32[6] reduce(x, z), dimensions={0}, to_apply=add
  ROOT t = (f32[8], f32[6]) tuple(rows, all)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"rows = f32[8]{0} reduce(x, z), dimensions={1}, to_apply=add, sharding={devices=[2]<=[2]}",
                               "all = f32[6]{0} reduce(x, z), dimensions={0}, to_apply=add, sharding={replicated}",
                               "ROOT t = (f32[8]{0}, f32[6]{0}) tuple(rows, all), sharding={{devices=[2]<=[2]}, "
                               "{replicated}}"}));
}

TEST(ShardingPropagationTest, TransposeAndReshapeMoveTheSplitDimension) {
  auto r = Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,6] parameter(0), sharding={devices=[2,1]<=[2]}
  t = f32[6,4] transpose(x), dimensions={1,0}
  r = f32[6,2,2] reshape(t)
  f = f32[24] reshape(x)
  g = f32[24] reshape(t)
  ROOT tup = (f32[24], f32[24]) tuple(f, g)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"t = f32[6,4]{1,0} transpose(x), dimensions={1,0}, sharding={devices=[1,2]<=[2]}",
                               "r = f32[6,2,2]{2,1,0} reshape(t), sharding={devices=[1,2,1]<=[2]}",
                               "f = f32[24]{0} reshape(x), sharding={devices=[2]<=[2]}"}));
  // [6,4] split on its columns -> [24]: a device's columns are not one
  // block of the result; nothing is propagated.
  EXPECT_TRUE(Matches(r.text, {"g = f32[24]{0} reshape(t)\n"}));
}

TEST(ShardingPropagationTest, BackwardFromAnnotatedRoot) {
  auto r = Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[3,8] parameter(0)
  t = f32[8,3] transpose(p), dimensions={1,0}
  ROOT n = f32[8,3] negate(t), sharding={devices=[2,1]<=[2]}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"p = f32[3,8]{1,0} parameter(0), sharding={devices=[1,2]<=[2]}",
                               "t = f32[8,3]{1,0} transpose(p), dimensions={1,0}, sharding={devices=[2,1]<=[2]}"}));
}

TEST(ShardingPropagationTest, ConvolutionBatchSplit) {
  auto r = Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,5,5,2] parameter(0), sharding={devices=[2,1,1,1]<=[2]}
  k = f32[3,3,2,3] parameter(1)
  ROOT c = f32[4,5,5,3] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"k = f32[3,3,2,3]{3,2,1,0} parameter(1), sharding={replicated}",
                               "sharding={devices=[2,1,1,1]<=[2]}"}));
}

TEST(ShardingPropagationTest, MaximalShardingSpreads) {
  auto r = Propagate(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0), sharding={maximal device=0}
  ROOT n = f32[4] negate(p)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT n = f32[4]{0} negate(p), sharding={maximal device=0}"}));
}

TEST(ShardingPropagationTest, KeepsExistingAnnotations) {
  auto r = Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[4,2] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT n = f32[4,2] negate(p), sharding={replicated}
})");
  EXPECT_FALSE(r.changed);
}

TEST(ShardingPropagationTest, UnannotatedModuleIsUnchanged) {
  auto r = Propagate(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[4,2] parameter(0)
  ROOT n = f32[4,2] negate(p)
})");
  EXPECT_FALSE(r.changed);
}

TEST(ShardingPropagationTest, CorpusModulesStayValid) {
  CorpusPassStats stats = CheckPassOnCorpus("sharding={", [] { return std::make_unique<ShardingPropagation>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  EXPECT_GT(stats.changed, 0);
}

TEST(SpmdPartitionerPipelineTest, FirstInGpuPipelineAndRegistered) {
  for (const char* name : {"sharding-propagation", "spmd-partitioning"}) {
    ASSERT_NE(FindRegisteredPass(name), nullptr) << name;
    EXPECT_FALSE(FindRegisteredPass(name)->required) << name;
  }
  std::unique_ptr<HloPassPipeline> gpu = BuildGpuPipeline();
  const std::vector<PassOccurrence>& occurrences = gpu->Occurrences();
  ASSERT_FALSE(occurrences.empty());
  EXPECT_NE(occurrences.front().pipeline_path.find("spmd-partitioner"), std::string::npos)
      << occurrences.front().pipeline_path;
  int64_t simplify_dce = -1, propagation = -1, optimization = -1;
  for (size_t i = 0; i < occurrences.size(); ++i) {
    const PassOccurrence& o = occurrences[i];
    if (o.pipeline_path.find("spmd-simplify") != std::string::npos && o.pass_name == "dce") simplify_dce = i;
    if (o.pass_name == "sharding-propagation") propagation = i;
    if (optimization < 0 && o.pipeline_path.find("optimization") != std::string::npos) optimization = i;
  }
  int64_t partitioning = -1;
  for (size_t i = 0; i < occurrences.size(); ++i) {
    if (occurrences[i].pass_name == "spmd-partitioning") partitioning = i;
  }
  ASSERT_GE(simplify_dce, 0);
  EXPECT_LT(simplify_dce, propagation);
  EXPECT_LT(propagation, partitioning);
  EXPECT_LT(partitioning, optimization);
}

TEST(SpmdPartitionerPipelineTest, SkipsSinglePartitionModules) {
  // Annotated but one partition: XLA:GPU does not build the pipeline.
  auto m = ParseHloModule(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0), sharding={maximal device=0}
  c = f32[4] constant({0, 0, 0, 0})
  a = f32[4] add(p, c)
  ROOT n = f32[4] negate(a)
})");
  ASSERT_TRUE(m.ok());
  std::unique_ptr<HloPassPipeline> pipeline = BuildSpmdPartitionerPipeline();
  absl::StatusOr<bool> changed = pipeline->Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(*changed);
}

TEST(SpmdPartitionerPipelineTest, SimplifiesPropagatesAndPartitions) {
  auto m = ParseHloModule(R"(HloModule m, num_partitions=2
ENTRY e {
  p = f32[4] parameter(0), sharding={devices=[2]<=[2]}
  c = f32[4] constant({0, 0, 0, 0})
  a = f32[4] add(p, c)
  ROOT n = f32[4] negate(a)
})");
  ASSERT_TRUE(m.ok());
  std::unique_ptr<HloPassPipeline> pipeline = BuildSpmdPartitionerPipeline();
  absl::StatusOr<bool> changed = pipeline->Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  PrintOptions options;
  options.print_metadata = false;
  options.print_operand_shape = false;
  std::string text = PrintModule(**m, options);
  std::erase(text, '%');
  EXPECT_TRUE(Matches(text, {"NOT:add(", "p = f32[2]{0} parameter(0)", "f32[2]{0} negate(p), sharding={devices=[2]<=[2]}"}));
}

}  // namespace
}  // namespace passlab
