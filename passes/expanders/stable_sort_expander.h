// StableSortExpander ("stable-sort-expander", as XLA's
// xla/hlo/transforms/expanders/stable_sort_expander.cc): turns every sort
// with is_stable=true into an unstable sort that is stable by construction.
// An s32 iota along the sort dimension breaks ties: an operand that is one
// already, else a new last operand (the sort then returns a tuple; users
// see get-tuple-elements of the original operands' results, wrapped in a
// tuple when there were several). The comparator c (cloned when it gets the
// new iota's parameters, or when other instructions call it too) becomes
//   select(c(a, b) == c(b, a), iota_a < iota_b, c(a, b))
// where c(b, a) is c's body cloned with each parameter pair swapped.
// Sorts of more than 2^31-1 elements are an error (as in XLA).
// Runs before anything that assumes sorts may be emitted unstable (XLA:GPU's
// sort emitter is a bitonic sort, which is not stable).
#ifndef PASSLAB_PASSES_EXPANDERS_STABLE_SORT_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_STABLE_SORT_EXPANDER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class StableSortExpander : public HloModulePass {
 public:
  std::string_view name() const override { return "stable-sort-expander"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_STABLE_SORT_EXPANDER_H_
