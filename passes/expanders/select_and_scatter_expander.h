// SelectAndScatterExpander ("select_and_scatter_expander"): rewrites
// select-and-scatter as the two steps its definition describes:
//   select:  for every window, the position of the element that survives
//            select(choice, x) over the window's real (non-padding) elements
//            in order, the first one being the initial choice;
//   scatter: a scatter of the source into broadcast(init) at those
//            positions with the scatter computation.
// Windows of up to 64 elements with an elementwise select (max pooling's
// GE) are unrolled: one strided slice of the padded operand per window
// element and a chain of elementwise selects, all emitted kernels. Larger
// windows use a variadic reduce-window over (operand, position) instead.
// A window of padding only selects nothing: its index is out of bounds and
// the scatter skips it. Windows with dilation are left alone
// (select-and-scatter has none in XLA).
#ifndef PASSLAB_PASSES_EXPANDERS_SELECT_AND_SCATTER_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_SELECT_AND_SCATTER_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class SelectAndScatterExpander : public OpExpanderPass {
 public:
  std::string_view name() const override { return "select_and_scatter_expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_SELECT_AND_SCATTER_EXPANDER_H_
