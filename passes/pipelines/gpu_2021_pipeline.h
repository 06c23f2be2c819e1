// The seed-era XLA:GPU pipeline ("gpu-2021"): XLA:GPU around 2021, as seed
// 003's blog measured it (its table 1), with that era's passes, order and
// pass names. Kept beside today's pipeline (pipelines.h) so that seed 003's
// experiment can still be reproduced and the two compared.
#ifndef PASSLAB_PASSES_PIPELINES_GPU_2021_PIPELINE_H_
#define PASSLAB_PASSES_PIPELINES_GPU_2021_PIPELINE_H_

#include <memory>

#include "core/pass/hlo_pass_pipeline.h"

namespace passlab::gpu2021 {

// The sub-pipelines, in the order BuildGpuPipeline runs them. Each builder
// comments its own ordering constraints.
std::unique_ptr<HloPassPipeline> BuildSpmdPartitionerPipeline();
std::unique_ptr<HloPassPipeline> BuildOptimizationPipeline();
std::unique_ptr<HloPassPipeline> BuildCollectiveOptimizationsPipeline();
std::unique_ptr<HloPassPipeline> BuildConvCanonicalizationPipeline();
std::unique_ptr<HloPassPipeline> BuildLayoutAssignmentPipeline();
std::unique_ptr<HloPassPipeline> BuildPostLayoutAssignmentPipeline();
// Producer-consumer instruction fusion, fusion merger, multi-output fusion.
std::unique_ptr<HloPassPipeline> BuildFusionPipeline();
std::unique_ptr<HloPassPipeline> BuildHorizontalFusionPipeline();
std::unique_ptr<HloPassPipeline> BuildPostFusionOptimizationPipeline();
// Copy insertion, constant names, the latency-hiding scheduler, remat.
std::unique_ptr<HloPassPipeline> BuildIrEmitPreparePipeline();
// The whole seed-era pipeline, named "gpu-2021".
std::unique_ptr<HloPassPipeline> BuildGpuPipeline();

}  // namespace passlab::gpu2021

#endif  // PASSLAB_PASSES_PIPELINES_GPU_2021_PIPELINE_H_
