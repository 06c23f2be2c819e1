// ReductionDimensionGrouper ("reduction-dimension-grouper", as XLA:GPU's
// xla/backends/gpu/transforms/reduction_dimension_grouper.cc): merges runs
// of adjacent reduced dimensions into one dimension by bitcasting the
// inputs, so that reduce(f32[10,20,30], dims={1,2}) becomes
// reduce(f32[10,600], dims={1}). The reduction emitter and
// TreeReductionRewriter then see one reduced dimension per block. Expects
// default (normalized) layouts: run ReductionLayoutNormalizer first.
#ifndef PASSLAB_PASSES_GPU_REDUCTION_DIMENSION_GROUPER_H_
#define PASSLAB_PASSES_GPU_REDUCTION_DIMENSION_GROUPER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ReductionDimensionGrouper : public HloModulePass {
 public:
  std::string_view name() const override { return "reduction-dimension-grouper"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_GPU_REDUCTION_DIMENSION_GROUPER_H_
