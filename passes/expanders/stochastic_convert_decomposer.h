// StochasticConvertDecomposer ("stochastic_convert_decomposer"): replaces
// a float-to-integer stochastic-convert(x, random) with plain HLO, XLA's
// decomposition:
//   whole = floor(|x|), fraction = |x| - whole
//   round_up = random < convert<unsigned>(fraction * 2^width(random))
//   r = sign(x) (whole + round_up), saturated to the integer type's range;
//   NaN => 0.
// |x| is rounded away from zero with probability fraction. The random
// operand is unsigned and as wide as x (the verifier's rule; other forms
// are left to the runtime). The scaled fraction is exact (a power-of-two
// scaling of a value below one), so the result equals the evaluator's bit
// for bit. Runs right after DotDecomposer in XLA:GPU's optimization
// pipeline. Optional: the runtime runs stochastic-convert as a routine.
#ifndef PASSLAB_PASSES_EXPANDERS_STOCHASTIC_CONVERT_DECOMPOSER_H_
#define PASSLAB_PASSES_EXPANDERS_STOCHASTIC_CONVERT_DECOMPOSER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class StochasticConvertDecomposer : public OpExpanderPass {
 public:
  std::string_view name() const override { return "stochastic_convert_decomposer"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_STOCHASTIC_CONVERT_DECOMPOSER_H_
