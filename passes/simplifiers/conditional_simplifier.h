// ConditionalSimplifier ("simplify-conditional"): a conditional whose branch
// index is a constant, or that has a single branch, is replaced by the body
// of the branch it always takes (inlined like CallInliner does).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_CONDITIONAL_SIMPLIFIER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_CONDITIONAL_SIMPLIFIER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ConditionalSimplifier : public HloModulePass {
 public:
  std::string_view name() const override { return "simplify-conditional"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_CONDITIONAL_SIMPLIFIER_H_
