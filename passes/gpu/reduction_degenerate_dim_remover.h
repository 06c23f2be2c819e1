// ReductionDegenerateDimRemover ("reduction-degenerate-dim-remover", as
// XLA:GPU's xla/backends/gpu/transforms/reduction_degenerate_dim_remover.cc):
// enforces that reduce inputs have no size-1 dimensions. The inputs are
// bitcast without them, the reduce runs over the remaining reduced
// dimensions, and the result is bitcast back to the original shape (per
// element of a variadic reduce). When no real dimension is reduced, the
// reduce becomes a bitcast of its input (as in XLA, the init value is not
// applied). Runs before ReductionDimensionGrouper, which then sees only
// real dims.
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
