// ReductionLayoutNormalizer ("reduction-layout-normalizer", after XLA:GPU's
// pass): makes every reduce input have the default (descending) layout, so
// that logical dimension order is memory order for the grouper, splitter
// and tree rewriter. Each input is bitcast to its dimensions in memory order
// (default layout), the reduce runs over the renumbered dimensions with an
// output layout that keeps the original output's memory order, and that
// output is bitcast back to the original shape and layout
// (xla/backends/gpu/transforms/reduction_layout_normalizer.cc).
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
