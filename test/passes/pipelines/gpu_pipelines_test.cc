// The two named pipelines: "gpu" is today's XLA:GPU default path for one
// NVIDIA GPU (xla/service/gpu/gpu_compiler.cc OptimizeHloModule,
// RunPreSchedulingPasses, ScheduleGpuModule, RunPostSchedulingPipelines;
// nvptx_compiler.cc; fusion_pipeline.cc at openxla/xla 183fa00cb5), and
// "gpu-2021" is the seed era's (seed 003, table 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/ir/hlo_computation.h"
#include "passes/pipelines/gpu_2021_pipeline.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::vector<std::string> SubPipelineNames(HloPassPipeline& pipeline) {
  std::vector<std::string> names;
  for (const auto& p : pipeline.passes()) {
    if (p->IsPipeline()) names.emplace_back(p->name());
  }
  return names;
}

TEST(GpuPipelinesTest, TodaysSubPipelinesInXlaOrder) {
  std::unique_ptr<HloPassPipeline> gpu = BuildGpuPipeline();
  EXPECT_EQ(gpu->name(), "gpu");
  // gpu_compiler.cc's order; passlab has no dynamic-slice fusion,
  // host-compute, invariant-checker or collective-schedule pipelines.
  EXPECT_EQ(SubPipelineNames(*gpu),
            (std::vector<std::string>{"pre-spmd-partitioner", "spmd-partitioner", "sharding-removal", "optimization",
                                      "collective-optimizations", "conv_canonicalization", "layout assignment",
                                      "layout normalization", "nvptx post-layout_assignment part 1",
                                      "hlo normalization", "post-layout_assignment",
                                      "nvptx post-layout_assignment part 2", "fusion", "post-fusion optimization",
                                      "async-collective-conversion",
                                      "post-fusion-simplification-pipeline optimization", "autotuner",
                                      "pre-scheduling-copy-insertion", "pre-scheduling-passes",
                                      "post-scheduling-passes"}));
}

TEST(GpuPipelinesTest, SeedEraSubPipelinesInSeedOrder) {
  std::unique_ptr<HloPassPipeline> old = gpu2021::BuildGpuPipeline();
  EXPECT_EQ(old->name(), "gpu-2021");
  EXPECT_EQ(SubPipelineNames(*old),
            (std::vector<std::string>{"spmd-partitioner", "optimization", "collective-optimizations",
                                      "conv_canonicalization", "layout assignment", "post-layout_assignment",
                                      "fusion", "horizontal-fusion", "post-fusion optimization",
                                      "GPU-ir-emit-prepare"}));
}

TEST(GpuPipelinesTest, FusionIsTodaysOrTheSeedErasButNeverBoth) {
  std::set<std::string> today, seed;
  std::unique_ptr<HloPassPipeline> gpu = BuildGpuPipeline(), old = gpu2021::BuildGpuPipeline();
  for (const PassOccurrence& o : gpu->Occurrences()) today.insert(o.pass_name);
  for (const PassOccurrence& o : old->Occurrences()) seed.insert(o.pass_name);
  // Deleted from XLA in 2024 (fusion, fusion_merger) and 2025 (horizontal).
  for (const char* gone : {"fusion", "fusion_merger", "gpu_horizontal_loop_fusion", "gpu_horizontal_input_fusion",
                           "gpu-conv-algorithm-picker", "gemm-algorithm-picker", "gpusolver-rewriter"}) {
    EXPECT_EQ(today.count(gone), 0u) << gone;
    EXPECT_EQ(seed.count(gone), 1u) << gone;
  }
  EXPECT_EQ(today.count("config-assigner"), 1u);
  EXPECT_EQ(seed.count("config-assigner"), 0u);
}

TEST(GpuPipelinesTest, EveryOccurrenceIsARegisteredPass) {
  for (auto build : {BuildGpuPipeline, gpu2021::BuildGpuPipeline}) {
    std::unique_ptr<HloPassPipeline> pipeline = build();
    for (const PassOccurrence& o : pipeline->Occurrences()) {
      EXPECT_NE(FindRegisteredPass(o.pass_name), nullptr) << o.pipeline_path << " " << o.pass_name;
    }
  }
}

TEST(GpuPipelinesTest, NotModelledPassesHaveAPlaceAndAreNotRegistered) {
  std::unique_ptr<HloPassPipeline> gpu = BuildGpuPipeline();
  const std::vector<PassOccurrence>& occ = gpu->Occurrences();
  ASSERT_FALSE(NotModelledPasses().empty());
  for (const NotModelledPass& n : NotModelledPasses()) {
    EXPECT_FALSE(n.reason.empty()) << n.xla_name;
    EXPECT_EQ(FindRegisteredPass(n.xla_name), nullptr) << n.xla_name << " is modelled";
    bool path_found = false, after_found = n.after.empty();
    for (const PassOccurrence& o : occ) {
      if (o.pipeline_path.rfind(n.pipeline_path, 0) != 0) continue;
      path_found = true;
      if (o.pass_name == n.after) after_found = true;
    }
    // An empty sub-pipeline has no occurrences; its name must still exist.
    if (!path_found) {
      std::string leaf = n.pipeline_path.substr(n.pipeline_path.rfind('/') + 1);
      std::vector<std::string> subs = SubPipelineNames(*BuildGpuPipeline());
      EXPECT_NE(std::find(subs.begin(), subs.end(), leaf), subs.end()) << n.pipeline_path;
    }
    EXPECT_TRUE(after_found) << n.xla_name << " after " << n.after << " in " << n.pipeline_path;
  }
}

TEST(GpuPipelinesTest, NamedPipelines) {
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> d = BuildNamedPipeline("default");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->name(), "gpu");
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> old = BuildNamedPipeline("gpu-2021");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ((*old)->name(), "gpu-2021");
  for (const std::string& name : PipelineNames()) {
    absl::StatusOr<std::unique_ptr<HloPassPipeline>> p = BuildNamedPipeline(name);
    ASSERT_TRUE(p.ok()) << name;
    if (name != "default") EXPECT_EQ((*p)->name(), name);
  }
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> bad = BuildNamedPipeline("gpu-2019");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("gpu-2021"), std::string_view::npos) << bad.status().message();
}

// A dense layer with softmax and a reduction: both pipelines keep the values
// (checked on the evaluator) and leave nothing but fusions, library calls,
// parameters, constants, tuples and bitcasts in the entry computation.
TEST(GpuPipelinesTest, BothPipelinesComputeTheSameAndFuse) {
  constexpr char kModule[] = R"(
HloModule mlp

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[16,32] parameter(0)
  w = f32[32,10] parameter(1)
  b = f32[10] parameter(2)
  d = f32[16,10] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[16,10] broadcast(b), dimensions={1}
  l = f32[16,10] add(d, bb)
  ninf = f32[] constant(-inf)
  m = f32[16] reduce(l, ninf), dimensions={1}, to_apply=max
  mb = f32[16,10] broadcast(m), dimensions={0}
  s = f32[16,10] subtract(l, mb)
  ex = f32[16,10] exponential(s)
  zero = f32[] constant(0)
  sum = f32[16] reduce(ex, zero), dimensions={1}, to_apply=add
  sb = f32[16,10] broadcast(sum), dimensions={0}
  ROOT p = f32[16,10] divide(ex, sb)
})";
  for (auto build : {BuildGpuPipeline, gpu2021::BuildGpuPipeline}) {
    std::unique_ptr<HloPassPipeline> pipeline = build();
    SCOPED_TRACE(pipeline->name());
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kModule, "mlp.hlo");
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 7);
    absl::StatusOr<Literal> before = HloEvaluator().Evaluate(**m, args);
    ASSERT_TRUE(before.ok()) << before.status().message();
    absl::StatusOr<bool> changed = pipeline->Run(**m);
    ASSERT_TRUE(changed.ok()) << changed.status().message();
    absl::Status verified = VerifyModule(**m);
    EXPECT_TRUE(verified.ok()) << verified.message();
    for (HloInstruction* i : (*m)->entry_computation()->instructions()) {
      HloOpcode op = i->opcode();
      bool allowed = op == HloOpcode::kFusion || op == HloOpcode::kCustomCall || op == HloOpcode::kParameter ||
                     op == HloOpcode::kConstant || op == HloOpcode::kTuple || op == HloOpcode::kBitcast ||
                     op == HloOpcode::kGetTupleElement;
      EXPECT_TRUE(allowed) << i->name() << " " << HloOpcodeString(op) << " left unfused";
    }
    absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
    ASSERT_TRUE(after.ok()) << after.status().message();
    absl::Status same = CompareLiterals(*before, *after, {.abs = 1e-5, .rel = 1e-4});
    EXPECT_TRUE(same.ok()) << same.message();
  }
}

}  // namespace
}  // namespace passlab
