// StableSortExpander ("stable-sort-expander"): turns every sort with
// is_stable=true into an unstable sort that is stable by construction. An
// s32 (s64 for dimensions of 2^31 elements or more) iota along the sort
// dimension becomes an extra operand, unless one is already sorted along, and
// the comparator breaks ties by it:
//   less'(a, b) = less(a, b) || (!less(b, a) && iota_a < iota_b)
// Users see the original operands' results (the iota's is dropped).
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
