// WhileLoopSimplifier ("simplify-while-loops"), after XLA's
// xla/service/while_loop_simplifier.cc. Each loop (whose body and condition
// nothing else calls) gets at most one of these per run, in this order:
//   - repeated elements: ones the body passes through unchanged from the
//     same initial value, or updates with the same dynamic-update-slice, are
//     one element;
//   - a nested loop state ((a, (b, c))) is flattened to (a, b, c);
//   - dead elements: ones that affect no other element, the condition or a
//     side effect and are not read after the loop (or, as a group, only
//     affect each other and are read after the loop only when passed
//     through) leave the state; the loop's value is rebuilt as a tuple;
//   - elements that start as a constant and that the body sets to the same
//     constant leave the state and are read as that constant;
//   - a loop whose trip count is 0 is replaced by its initial value, one
//     whose trip count is 1 by its body, inlined once.
// The trip count comes from an induction variable: a tuple element with a
// constant initial value, incremented by a constant in the body, compared
// with a constant in the condition (LT/LE/GT/GE/NE). After a change, HloDCE
// runs (as in XLA). Body and condition are edited in place and renamed
// "<name>.clone" (XLA builds the new loop on clones).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_SIMPLIFIER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_SIMPLIFIER_H_

#include <optional>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class WhileLoopSimplifier : public HloModulePass {
 public:
  std::string_view name() const override { return "simplify-while-loops"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

// The number of iterations of `while_op` when an induction variable decides
// it; nullopt when unknown.
std::optional<int64_t> ComputeWhileTripCount(const HloInstruction& while_op);

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_SIMPLIFIER_H_
