// WhileLoopInvariantCodeMotion ("while-loop-invariant-code-motion"): moves
// instructions of a while body that compute the same value in every
// iteration out of the loop. An instruction is invariant when all its
// operands are: constants, reads of loop-carried values the body passes on
// unchanged, or other invariant instructions. Hoisted values that the body
// still needs enter the loop as new (unchanged) loop-carried values.
//
// As in XLA, constants, and "free" data movement (bitcast, reshape,
// broadcast, iota, transpose, slice, reverse, get-tuple-element) are not worth
// hoisting on their own; they move only as operands of a hoisted instruction
// that is (options can change this). Side-effecting instructions never move.
// Needs: a body and condition called only by this loop (FlattenCallGraph).
// After it, WhileLoopSimplifier drops state the body no longer reads.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
#define PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_INVARIANT_CODE_MOTION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct WhileLoopInvariantCodeMotionOptions {
  bool hoist_constants = false;  // hoist instructions computed from constants only
  bool hoist_reshapes = false;   // hoist free data movement on its own
};

class WhileLoopInvariantCodeMotion : public HloModulePass {
 public:
  explicit WhileLoopInvariantCodeMotion(WhileLoopInvariantCodeMotionOptions options = {})
      : options_(options) {}
  std::string_view name() const override { return "while-loop-invariant-code-motion"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  WhileLoopInvariantCodeMotionOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
