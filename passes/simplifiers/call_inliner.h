// CallInliner ("call-inliner"): replaces each kCall by a copy of the called
// computation's body in the caller (parameters become the call's operands,
// the body's root replaces the call), callees before callers, then removes
// what became dead (XLA's xla/service/call_inliner.cc). Like XLA it keeps a
// call that has a backend config, sits in an async computation, carries
// frontend attribute inlineable="false"/"xla_late", or (under Shardy,
// XLA's module option use_shardy_partitioner) calls a "shmap_body" or
// "xla.sdy.manual_computation_body" computation; with single_call_site it
// inlines only computations called once (inlineable="true" always inlines).
// The call's op_name prefixes the op_name of every inlined instruction (and
// of the instructions of loops and conditionals it contains).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_CALL_INLINER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_CALL_INLINER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct CallInlinerOptions {
  // XLA's single_call_site.
  bool single_call_site = false;
  // XLA reads this from the module config (use_shardy_partitioner).
  bool use_shardy_partitioner = false;
};

class CallInliner : public HloModulePass {
 public:
  explicit CallInliner(CallInlinerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "call-inliner"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  CallInlinerOptions options_;
};

// Inlines one call; returns the instruction that replaced it.
absl::StatusOr<HloInstruction*> InlineCall(HloInstruction* call);

// Whether the call's frontend attributes allow inlining it (XLA's
// CallInliner::InlineInstructionAllowed: not inlineable="false"/"xla_late").
bool CallInlineAllowed(const HloInstruction* call);

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_CALL_INLINER_H_
