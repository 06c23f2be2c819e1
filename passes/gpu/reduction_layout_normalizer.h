// ReductionLayoutNormalizer ("reduction-layout-normalizer", after XLA:GPU's
// pass): makes every reduce input have the default (descending) layout, so
// that logical dimension order is memory order for the grouper, splitter
// and tree rewriter. Each input is transposed into its memory order (with a
// default layout that transpose moves no bytes, which XLA writes as a
// bitcast), the reduce runs over the renumbered dimensions, and the result
// is transposed back into the original output's dimension order and layout.
// Runs after layout assignment, before ReductionDimensionGrouper.
#ifndef PASSLAB_PASSES_GPU_REDUCTION_LAYOUT_NORMALIZER_H_
#define PASSLAB_PASSES_GPU_REDUCTION_LAYOUT_NORMALIZER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ReductionLayoutNormalizer : public HloModulePass {
 public:
  std::string_view name() const override { return "reduction-layout-normalizer"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_GPU_REDUCTION_LAYOUT_NORMALIZER_H_
