// Named pipelines, assembled in XLA:GPU's order (seed 003, table 1) from the
// passes passlab has so far. Each ordering constraint is commented where the
// pipeline is built.
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

// "optimization" (alias "default"): XLA's first sub-pipeline with the
// "simplification" fixed point inside it.
// XLA:GPU's "spmd-partitioner" (call inlining, the spmd-simplify fixed
// point, sharding propagation, SPMD partitioning); skips modules with one
// partition.
std::unique_ptr<HloPassPipeline> BuildSpmdPartitionerPipeline();
std::unique_ptr<HloPassPipeline> BuildOptimizationPipeline();

// XLA:GPU's "collective-optimizations" sub-pipeline (simplifier, folder,
// reduce-scatter creator).
std::unique_ptr<HloPassPipeline> BuildCollectiveOptimizationsPipeline();

// XLA:GPU's "conv_canonicalization" sub-pipeline: convolutions become DNN
// library calls.
std::unique_ptr<HloPassPipeline> BuildConvCanonicalizationPipeline();

// XLA:GPU's "layout assignment" sub-pipeline (flatten-call-graph, layouts).
std::unique_ptr<HloPassPipeline> BuildLayoutAssignmentPipeline();
// XLA:GPU's "post-layout_assignment" sub-pipeline.
std::unique_ptr<HloPassPipeline> BuildPostLayoutAssignmentPipeline();
// XLA:GPU's "fusion" sub-pipeline (producer-consumer, merger, multi-output).
std::unique_ptr<HloPassPipeline> BuildFusionPipeline();
// XLA:GPU's "horizontal-fusion" sub-pipeline.
std::unique_ptr<HloPassPipeline> BuildHorizontalFusionPipeline();
// XLA:GPU's "GPU-ir-emit-prepare" sub-pipeline (copy insertion, constant names,
// latency-hiding scheduler, rematerialization).
std::unique_ptr<HloPassPipeline> BuildIrEmitPreparePipeline();
// XLA:GPU's "post-fusion optimization" sub-pipeline (collective combiners,
// async collectives).
std::unique_ptr<HloPassPipeline> BuildPostFusionOptimizationPipeline();
// "gpu" (alias "default"): every sub-pipeline passlab has, in XLA:GPU's order.
std::unique_ptr<HloPassPipeline> BuildGpuPipeline();

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
