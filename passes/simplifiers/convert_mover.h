// ConvertMover ("convert-mover"): moves converts across ops that only move
// data (reshape, transpose, slice, reverse, concatenate), so that the data
// movement happens in the narrower type:
//   op(convert_wide(a), ...)  => convert_wide(op(a, ...))   (widening down)
//   convert_narrow(op(a, ...)) => op(convert_narrow(a), ...) (narrowing up)
// Both commute exactly (a data-movement op never looks at values). A
// widening convert moves down only when every operand is one from the same
// type; a narrowing convert moves up only when it is the op's only user, so
// the op is never duplicated. Runs in simplification-2 with algsimp, whose
// convert(convert(A)) rule then removes round trips the moves expose.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_CONVERT_MOVER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_CONVERT_MOVER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ConvertMover : public HloModulePass {
 public:
  std::string_view name() const override { return "convert-mover"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_CONVERT_MOVER_H_
