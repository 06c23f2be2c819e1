#include "passes/expanders/logistic_expander.h"

#include "core/ir/hlo_computation.h"

namespace passlab {

bool LogisticExpander::InstructionMatchesPattern(HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kLogistic && IsFloatingPointType(inst->shape().element_type());
}

absl::StatusOr<HloInstruction*> LogisticExpander::ExpandInstruction(HloInstruction* inst) {
  HloComputation* c = inst->parent();
  const Shape& s = inst->shape();
  Literal one_lit(Shape::Scalar(s.element_type()));
  one_lit.SetDouble(0, 1.0);
  HloInstruction* one = c->AddInstruction(HloInstruction::CreateConstant(std::move(one_lit)));
  HloInstruction* ones = c->AddInstruction(HloInstruction::CreateBroadcast(s, one, {}));
  HloInstruction* neg = c->AddInstruction(HloInstruction::CreateUnary(s, HloOpcode::kNegate, inst->mutable_operand(0)));
  HloInstruction* exp = c->AddInstruction(HloInstruction::CreateUnary(s, HloOpcode::kExp, neg));
  HloInstruction* denom = c->AddInstruction(HloInstruction::CreateBinary(s, HloOpcode::kAdd, ones, exp));
  return c->AddInstruction(HloInstruction::CreateBinary(s, HloOpcode::kDivide, ones, denom));
}

}  // namespace passlab
