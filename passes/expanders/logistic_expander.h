// LogisticExpander ("logistic-expander"): logistic(x) => 1 / (1 + exp(-x)),
// for backends without a logistic primitive. Runs before fusion.
#ifndef PASSLAB_PASSES_EXPANDERS_LOGISTIC_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_LOGISTIC_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class LogisticExpander : public OpExpanderPass {
 public:
  std::string_view name() const override { return "logistic-expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_LOGISTIC_EXPANDER_H_
