// DotDimensionMerger ("dot_dimension_merger", XLA's
// xla/hlo/transforms/simplifiers/dot_dimension_merger.cc): merges a dot's
// batch dimensions into one when on both operands they are sorted,
// logically consecutive and consecutive in the layout, by reshaping the
// operands (the layouts keep the merged dimension where the batch ones
// were, so the reshapes are bitcasts) and reshaping the product back.
// Layout-aware: runs after layout assignment (XLA:GPU's nvptx post-layout
// passes), before the gemm rewriter, which takes one batch dimension.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_DOT_DIMENSION_MERGER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_DOT_DIMENSION_MERGER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class DotDimensionMerger : public HloModulePass {
 public:
  std::string_view name() const override { return "dot_dimension_merger"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_DOT_DIMENSION_MERGER_H_
