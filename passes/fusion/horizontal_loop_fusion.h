// GpuHorizontalLoopFusion ("gpu_horizontal_loop_fusion", XLA:GPU's 2021
// pass; seed 003's concatenate/slice diagram): independent small loop
// fusions that feed one consumer become one kernel. Each one's value is
// flattened to 1-D, the values are concatenated, and the kernel's outputs
// are slices of the concatenation (an "input slices" kernel); outside, each
// slice is bitcast back to the original shape. Fewer kernel launches, and
// the small kernels share one loop's parallelism.
//
// Candidates: single-output loop fusions without a reduction, with a
// default layout (so the 1-D slice bitcasts back), at most 128 x 2048
// elements and 30 fused instructions (XLA's profitability limits); one
// element type per kernel (a concatenate's operands share it); none may
// depend on another. Runs in the horizontal-fusion sub-pipeline.
#ifndef PASSLAB_PASSES_FUSION_HORIZONTAL_LOOP_FUSION_H_
#define PASSLAB_PASSES_FUSION_HORIZONTAL_LOOP_FUSION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class GpuHorizontalLoopFusion : public HloModulePass {
 public:
  std::string_view name() const override { return "gpu_horizontal_loop_fusion"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_HORIZONTAL_LOOP_FUSION_H_
