// ConvertMover ("convert-mover"): moves converts across ops that commute
// with them (concatenate, pad, reshape, slice, transpose: they only move
// elements), so that the data movement happens in the narrower type, as
// XLA's ConvertMover (xla/hlo/transforms/simplifiers/convert_mover.cc):
//   op(convert_wide(a), ..., constant) => convert_wide(op(a, ..., convert_narrow(constant)))
//   convert_narrow(op(a, ...))         => op(convert_narrow(a), ...)
// "Wide"/"narrow" compare bit widths only. A widening convert moves down
// when every operand is either a convert from the same source type with no
// other user, or a constant that survives the round trip through the
// narrow type; a narrowing convert moves up when it is the op's only user.
// Sub-byte integer types are never the narrow side. Fusion computations are
// left alone. Runs before layout assignment (it ignores layouts); algsimp's
// convert(convert(A)) rule and constant folding tidy what the moves expose.
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
