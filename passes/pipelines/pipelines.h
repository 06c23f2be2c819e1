// Named pipelines: today's XLA:GPU default path ("gpu") and its
// sub-pipelines, and the seed-era pipeline ("gpu-2021", seed 003's table 1).
// Each ordering constraint is commented where the pipeline is built.
#ifndef PASSLAB_PASSES_PIPELINES_PIPELINES_H_
#define PASSLAB_PASSES_PIPELINES_PIPELINES_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "passes/registry.h"
#include "core/pass/pass_filter.h"

namespace passlab {

// Today's XLA:GPU default path for one NVIDIA GPU ("gpu", alias "default"),
// sub-pipeline by sub-pipeline in XLA's order with XLA's names
// (xla/service/gpu/gpu_compiler.cc, nvptx_compiler.cc, fusion_pipeline.cc).
// The seed-era pipeline is gpu2021::BuildGpuPipeline ("gpu-2021",
// gpu_2021_pipeline.h). Each builder comments its ordering constraints.
std::unique_ptr<HloPassPipeline> BuildPreSpmdPartitionerPipeline();
// Partitioned modules only (num_partitions > 1).
std::unique_ptr<HloPassPipeline> BuildSpmdPartitionerPipeline();
std::unique_ptr<HloPassPipeline> BuildShardingRemovalPipeline();
std::unique_ptr<HloPassPipeline> BuildOptimizationPipeline();
std::unique_ptr<HloPassPipeline> BuildCollectiveOptimizationsPipeline();
std::unique_ptr<HloPassPipeline> BuildConvCanonicalizationPipeline();
std::unique_ptr<HloPassPipeline> BuildLayoutAssignmentPipeline();
std::unique_ptr<HloPassPipeline> BuildLayoutNormalizationPipeline();
std::unique_ptr<HloPassPipeline> BuildNvptxPostLayoutPart1Pipeline();
std::unique_ptr<HloPassPipeline> BuildHloNormalizationPipeline();
std::unique_ptr<HloPassPipeline> BuildPostLayoutAssignmentPipeline();
std::unique_ptr<HloPassPipeline> BuildNvptxPostLayoutPart2Pipeline();
// Priority fusion (cost model), CSE/DCE, multi-output fusion.
std::unique_ptr<HloPassPipeline> BuildFusionPipeline();
std::unique_ptr<HloPassPipeline> BuildPostFusionOptimizationPipeline();
std::unique_ptr<HloPassPipeline> BuildAsyncCollectiveConversionPipeline();
std::unique_ptr<HloPassPipeline> BuildPostFusionSimplificationPipeline();
// Fusion wrapper and the config assigner (the single autotuner).
std::unique_ptr<HloPassPipeline> BuildAutotunerPipeline();
std::unique_ptr<HloPassPipeline> BuildPreSchedulingCopyInsertionPipeline();
std::unique_ptr<HloPassPipeline> BuildPreSchedulingPipeline();
std::unique_ptr<HloPassPipeline> BuildPostSchedulingPipeline();
// The whole of today's default path, named "gpu".
std::unique_ptr<HloPassPipeline> BuildGpuPipeline();

// A pass of XLA's default path that passlab does not run: where XLA runs
// it (the sub-pipeline's path in "gpu", and the passlab pass it follows
// there; empty: at the start), XLA's name, and why it is not modelled.
// `passlab opt --list-passes` shows them in their place.
struct NotModelledPass {
  std::string pipeline_path;
  std::string after;
  std::string xla_name;
  std::string reason;
};
const std::vector<NotModelledPass>& NotModelledPasses();

std::vector<std::string> PipelineNames();
absl::StatusOr<std::unique_ptr<HloPassPipeline>> BuildNamedPipeline(std::string_view name);

// A named pipeline with the CLI's pass filters attached (the filter observer
// lives as long as the pipeline). Empty filters attach nothing.
struct FilteredPipeline {
  std::unique_ptr<HloPassPipeline> pipeline;
  std::unique_ptr<PassFilterObserver> filter;
};
// `options` (--pass-option) rebuilds the passes it names with those
// options; `removed` (an ablation's --xla_disable_hlo_passes) takes passes
// and sub-pipelines of those names out of the pipeline first.
absl::StatusOr<FilteredPipeline> BuildFilteredPipeline(std::string_view name, std::string_view disable,
                                                      std::string_view enable_only = "",
                                                      bool disable_all = false,
                                                      const PassOptionOverrides& options = {},
                                                      const std::vector<std::string>& removed = {});

}  // namespace passlab

#endif  // PASSLAB_PASSES_PIPELINES_PIPELINES_H_
