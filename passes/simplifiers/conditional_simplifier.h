// ConditionalSimplifier ("simplify-conditional"), after XLA's
// xla/service/conditional_simplifier.cc. For each conditional (not one with
// a sharding, nor one whose branches reach channel instructions):
//   - result elements that every branch computes from the same values are
//     read from the first of them;
//   - result elements nobody reads are dropped from every branch (branches
//     are cloned first); a result nobody reads at all becomes ();
//   - a conditional with one branch or a constant branch index becomes a
//     call of that branch, and a cheap two-branch conditional on a pred
//     becomes both branches as calls plus selects; the calls are inlined
//     unless the frontend attribute inlineable="false" says otherwise. Not
//     done to side-effecting conditionals, ones with control edges or a
//     scheduling group;
// and then branch parameters' tuple elements no branch reads are dropped
// from the branch operands (the branch is cloned).
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
