// WhileLoopSimplifier ("simplify-while-loops"), seed 003's rules:
//   - a loop whose trip count is 0 is replaced by its initial value;
//   - a loop whose trip count is 1 is replaced by its body, inlined once;
//   - a nested loop state ((a, (b, c))) is flattened to (a, b, c);
//   - duplicate loop-carried values (same initial value, updated alike) are
//     merged into one;
//   - loop-carried values nothing reads (only passed on unchanged) are
//     removed from the state.
// The trip count comes from an induction variable: a tuple element with a
// constant initial value, incremented by a constant in the body, compared
// with a constant in the condition (LT/LE/GT/GE/NE). Loops with side effects
// are left alone; the state rewrites also need a body and condition called
// only by the loop (FlattenCallGraph runs first) and a tuple body root.
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
