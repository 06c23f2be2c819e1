// WhileLoopConstantSinking ("while-loop-constant-sinking"), after XLA's
// xla/service/while_loop_constant_sinking.cc: a loop-carried value that
// starts as a constant (or, with sink_broadcast_of_constants, a broadcast of
// one) and that the body passes through unchanged is that constant in every
// iteration; its reads inside the body (but the pass-through) and the
// condition become copies of it, which lets algsimp and constant folding
// simplify the loop. The body and condition are cloned first ("body.sunk"),
// so computations shared with other callers stay as they were; loops are
// visited outermost first, so a constant sunk into an outer body reaches an
// inner loop in the same run. The tuple element itself stays (removing it is
// WhileLoopSimplifier's job).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_CONSTANT_SINKING_H_
#define PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_CONSTANT_SINKING_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct WhileLoopConstantSinkingOptions {
  // XLA's sink_broadcast_of_constants: also sink broadcast(constant).
  bool sink_broadcast_of_constants = false;
  // XLA's sink_only_scalar_constants.
  bool sink_only_scalar_constants = false;
};

class WhileLoopConstantSinking : public HloModulePass {
 public:
  explicit WhileLoopConstantSinking(WhileLoopConstantSinkingOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "while-loop-constant-sinking"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  WhileLoopConstantSinkingOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_CONSTANT_SINKING_H_
