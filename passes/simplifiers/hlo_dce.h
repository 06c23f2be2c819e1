// HloDCE ("dce"): removes instructions whose values nobody uses (not roots,
// not parameters, without side effects or control successors), in every
// computation, then computations that nothing calls any more. With
// use_call_analysis it also removes the unused parameters of computations
// whose every caller is a fusion, call or async-start, and those callers'
// operands (XLA's HloDCE with a call graph).
// Runs anywhere; guarantees no dead instruction is left.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_HLO_DCE_H_
#define PASSLAB_PASSES_SIMPLIFIERS_HLO_DCE_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct HloDceOptions {
  bool remove_unused_computations = true;
  // XLA's option of that name: also remove the entry computation's unused
  // parameters (renumbering the rest) and their entries in the entry
  // computation layout. Left alone when the module aliases or donates
  // parameters (their numbers would move).
  bool remove_dead_parameters_from_entry_computation = false;
  // XLA's option of that name: find each computation's callers, so that an
  // unused parameter of a computation called only by fusions, calls and
  // async-starts goes, with the callers' operand (and the async-start's
  // operand shape) for it; operands left dead go too.
  bool use_call_analysis = false;
};

class HloDCE : public HloModulePass {
 public:
  explicit HloDCE(HloDceOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "dce"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  HloDceOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_HLO_DCE_H_
