// CallInliner ("call-inliner"): replaces each kCall by a copy of the called
// computation's body in the caller (parameters become the call's operands,
// the body's root replaces the call); computations left uncalled are removed.
// After it no call instruction remains, which later passes and the backend
// rely on (XLA runs it first in the "optimization" pipeline).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_CALL_INLINER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_CALL_INLINER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class CallInliner : public HloModulePass {
 public:
  std::string_view name() const override { return "call-inliner"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

// Inlines one call; returns the instruction that replaced it.
absl::StatusOr<HloInstruction*> InlineCall(HloInstruction* call);

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_CALL_INLINER_H_
