// SelectAndScatterExpander ("select_and_scatter_expander"): rewrites
// select-and-scatter as the two steps its definition describes:
//   select:  a variadic reduce-window over (operand, linear position) whose
//            reducer keeps the accumulated element when select(acc, x) holds
//            (the first element of a window wins against the empty init,
//            position -1), giving the selected position of every window;
//   scatter: a scatter of the source into broadcast(init) at those
//            positions (as coordinates) with the scatter computation.
// Windows without an element of the operand (all padding) select -1, which
// becomes an out-of-bounds index the scatter skips. Windows with dilation
// are left alone (select-and-scatter has none in XLA).
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
