// OperandUpcaster ("operand_upcaster"): a dot or convolution whose result
// type is wider than its operands' gets its operands converted to the result
// type, so the backend computes in the precision the program asked for.
// ResultCaster ("result_caster"): a dot or convolution whose result type is
// narrower than its operands' computes in the operand type and converts the
// result. Between them every dot/conv ends up with one element type.
#ifndef PASSLAB_PASSES_EXPANDERS_OPERAND_UPCASTER_H_
#define PASSLAB_PASSES_EXPANDERS_OPERAND_UPCASTER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class OperandUpcaster : public OpExpanderPass {
 public:
  std::string_view name() const override { return "operand_upcaster"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

class ResultCaster : public OpExpanderPass {
 public:
  std::string_view name() const override { return "result_caster"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_OPERAND_UPCASTER_H_
