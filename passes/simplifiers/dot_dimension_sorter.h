// DotDimensionSorter ("dot_dimension_sorter"): reorders the contracting
// dimension pairs of a dot so that one side lists them in memory order
// (major to minor, by its layout). The product is the same (pairs stay
// paired); what changes is that contracting dimensions consecutive in memory
// are now also listed in order, so the gemm rewriter can read them as one
// contiguous K without a transpose. A side whose contracting dimensions are
// consecutive is sorted, unless that would unsort the other side's
// consecutive, sorted ones (XLA's rule). Runs before GemmRewriter, once
// layouts are final.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_DOT_DIMENSION_SORTER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_DOT_DIMENSION_SORTER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class DotDimensionSorter : public HloModulePass {
 public:
  std::string_view name() const override { return "dot_dimension_sorter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_DOT_DIMENSION_SORTER_H_
