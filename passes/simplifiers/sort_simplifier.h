// SortSimplifier ("simplify-sorts"): drops sort operands whose sorted output
// nobody reads and whose values the comparator never looks at (they would be
// permuted for nothing). A sort left with one operand returns an array.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_SORT_SIMPLIFIER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_SORT_SIMPLIFIER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class SortSimplifier : public HloModulePass {
 public:
  std::string_view name() const override { return "simplify-sorts"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_SORT_SIMPLIFIER_H_
