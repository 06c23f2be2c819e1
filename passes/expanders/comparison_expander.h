// ComparisonExpander ("comparison-expander"): float comparisons with
// type=TOTALORDER become integer comparisons of the bit patterns (negative
// values have their magnitude bits flipped so integer order is total float
// order: -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN).
#ifndef PASSLAB_PASSES_EXPANDERS_COMPARISON_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_COMPARISON_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class ComparisonExpander : public OpExpanderPass {
 public:
  std::string_view name() const override { return "comparison-expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_COMPARISON_EXPANDER_H_
