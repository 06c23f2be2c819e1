// GpuHorizontalInputFusion ("gpu_horizontal_input_fusion", XLA:GPU's 2021
// pass; seed 003 section 3.9): input (reduction) fusions that feed the same
// consumer, do not depend on each other and reduce alike (same input
// dimensions and reduced dimensions, so one loop nest computes them all)
// become one multi-output fusion: fewer kernel launches and more
// parallelism per kernel. Unlike sibling multi-output fusion they need not
// share an input.
//
// Runs in the horizontal-fusion sub-pipeline, after the fusion sub-pipeline
// has built the reduction fusions.
#ifndef PASSLAB_PASSES_FUSION_HORIZONTAL_INPUT_FUSION_H_
#define PASSLAB_PASSES_FUSION_HORIZONTAL_INPUT_FUSION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class GpuHorizontalInputFusion : public HloModulePass {
 public:
  std::string_view name() const override { return "gpu_horizontal_input_fusion"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_HORIZONTAL_INPUT_FUSION_H_
