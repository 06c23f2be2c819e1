// WhileLoopConstantSinking ("while-loop-constant-sinking"): a loop-carried
// value that starts as a constant and that the body passes through unchanged
// is a constant in every iteration; its reads inside the body and condition
// become that constant (seed 003), which lets algsimp and constant folding
// simplify the loop. The tuple element itself stays (removing it is
// WhileLoopSimplifier's job).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_CONSTANT_SINKING_H_
#define PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_CONSTANT_SINKING_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class WhileLoopConstantSinking : public HloModulePass {
 public:
  std::string_view name() const override { return "while-loop-constant-sinking"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_CONSTANT_SINKING_H_
