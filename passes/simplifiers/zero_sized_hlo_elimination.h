// ZeroSizedHloElimination ("zero_sized_hlo_elimination"): replaces
// side-effect-free array instructions with zero elements by a constant of the
// same shape (the value is empty either way), cutting their inputs loose.
// BatchNormExpander can create zero-sized ops, so it runs after it.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_ZERO_SIZED_HLO_ELIMINATION_H_
#define PASSLAB_PASSES_SIMPLIFIERS_ZERO_SIZED_HLO_ELIMINATION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ZeroSizedHloElimination : public HloModulePass {
 public:
  std::string_view name() const override { return "zero_sized_hlo_elimination"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_ZERO_SIZED_HLO_ELIMINATION_H_
