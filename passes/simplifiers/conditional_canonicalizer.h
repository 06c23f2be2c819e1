// ConditionalCanonicalizer ("conditional-canonicalizer"): gives every
// conditional a tuple result. A conditional returning an array T becomes one
// returning (T) whose branches end in tuple(root), followed by
// get-tuple-element 0 for its users. Backends (and XLA's later conditional
// passes) then handle one result form. A branch computation that something
// else also calls is cloned first, so no other caller sees the new root.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_CONDITIONAL_CANONICALIZER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_CONDITIONAL_CANONICALIZER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ConditionalCanonicalizer : public HloModulePass {
 public:
  std::string_view name() const override { return "conditional-canonicalizer"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_CONDITIONAL_CANONICALIZER_H_
