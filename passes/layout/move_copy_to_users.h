// MoveCopyToUsers ("move_copy_to_users", after XLA:GPU's
// xla/backends/gpu/transforms/move_copy_to_users.cc): sinks layout-changing
// copies below the layout-preserving ops that use them, so that the copy
// (a physical transposition) happens once, late: op(copy(x)) =>
// copy(op(x)) for pad, slice, dynamic-slice, reduce-window, reverse,
// convert (unless it feeds only a convolution) and the other elementwise
// unary ops (not reduce-precision), binary ops of two copies of
// same-shaped values, and concatenates whose operands are all copies from
// one layout. A reduce reads the copy's operand directly (reductions handle
// any layout).
//
// Runs after layout assignment, before LayoutNormalization.
#ifndef PASSLAB_PASSES_LAYOUT_MOVE_COPY_TO_USERS_H_
#define PASSLAB_PASSES_LAYOUT_MOVE_COPY_TO_USERS_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class MoveCopyToUsers : public HloModulePass {
 public:
  std::string_view name() const override { return "move_copy_to_users"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LAYOUT_MOVE_COPY_TO_USERS_H_
