// ReshapeMover ("reshape-mover"): sinks reshapes and transposes below
// elementwise instructions, so that chains of them meet, cancel or fold:
//
//   add(reshape(a), reshape(b))      => reshape(add(a, b))
//   mul(transpose(a), constant)      => transpose(mul(a, transpose'(constant)))
//   max(reshape(a), broadcast(0.0))  => reshape(max(a, broadcast'(0.0)))
//
// An elementwise instruction moves when every operand is either an
// equivalent rearrangement (same kind, same input dimensions, same
// permutation) or trivially rearrangeable (a constant, whose rearrangement
// constant folding removes; a broadcast of a scalar), and at least one
// operand is a rearrangement of something else. Runs inside the
// simplification fixed point, before constant folding.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_RESHAPE_MOVER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_RESHAPE_MOVER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ReshapeMover : public HloComputationPass {
 public:
  std::string_view name() const override { return "reshape-mover"; }

 protected:
  absl::StatusOr<bool> RunOnComputation(HloComputation& computation) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_RESHAPE_MOVER_H_
