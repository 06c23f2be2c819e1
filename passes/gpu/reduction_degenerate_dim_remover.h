// ReductionDegenerateDimRemover ("reduction-degenerate-dim-remover", after
// XLA:GPU's pass of that name): enforces that reduce inputs have no size-1
// dimensions. The inputs are reshaped without them, the reduce runs over
// the remaining reduced dimensions (possibly none: then it only applies the
// init value), and the result is reshaped back to the original shape.
// Runs before ReductionDimensionGrouper, which then sees only real dims.
#ifndef PASSLAB_PASSES_GPU_REDUCTION_DEGENERATE_DIM_REMOVER_H_
#define PASSLAB_PASSES_GPU_REDUCTION_DEGENERATE_DIM_REMOVER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ReductionDegenerateDimRemover : public HloModulePass {
 public:
  std::string_view name() const override { return "reduction-degenerate-dim-remover"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_GPU_REDUCTION_DEGENERATE_DIM_REMOVER_H_
