// A sub-pipeline that runs only on partitioned modules (num_partitions > 1):
// XLA:GPU builds its spmd-partitioner pipeline only for those; passlab's
// pipelines are static, so this one skips itself on one-partition modules.
#ifndef PASSLAB_PASSES_PIPELINES_PARTITIONED_MODULE_PIPELINE_H_
#define PASSLAB_PASSES_PIPELINES_PARTITIONED_MODULE_PIPELINE_H_

#include "core/ir/hlo_module.h"
#include "core/pass/hlo_pass_pipeline.h"

namespace passlab {

class PartitionedModulePipeline : public HloPassPipeline {
 public:
  using HloPassPipeline::HloPassPipeline;

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override {
    if (module.config().num_partitions <= 1) return false;
    return HloPassPipeline::RunImpl(module, context);
  }
};

// The other branch of XLA:GPU's RunSPMDPasses: "sharding-removal" runs on
// modules that are not partitioned (num_partitions 1) and on no others.
class UnpartitionedModulePipeline : public HloPassPipeline {
 public:
  using HloPassPipeline::HloPassPipeline;

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override {
    if (module.config().num_partitions > 1) return false;
    return HloPassPipeline::RunImpl(module, context);
  }
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_PIPELINES_PARTITIONED_MODULE_PIPELINE_H_
