#include "passes/expanders/operand_upcaster.h"

#include "core/ir/hlo_computation.h"

namespace passlab {
namespace {

bool IsDotOrConv(const HloInstruction* i) {
  return i->opcode() == HloOpcode::kDot || i->opcode() == HloOpcode::kConvolution;
}

// Higher "rank" holds more values: f64 > f32 > f16/bf16 > f8; ints by width.
int Precision(PrimitiveType t) {
  if (IsFloatingPointType(t)) return 1000 + ExponentBits(t) * 100 + MantissaBits(t);
  return PrimitiveBitWidth(t);
}

bool SameKind(PrimitiveType a, PrimitiveType b) {
  return IsFloatingPointType(a) == IsFloatingPointType(b) && IsComplexType(a) == IsComplexType(b);
}

}  // namespace

bool OperandUpcaster::InstructionMatchesPattern(HloInstruction* inst) {
  if (!IsDotOrConv(inst)) return false;
  PrimitiveType r = inst->shape().element_type();
  for (const HloInstruction* op : inst->operands()) {
    PrimitiveType t = op->shape().element_type();
    if (t != r && SameKind(t, r) && Precision(t) < Precision(r)) return true;
  }
  return false;
}

absl::StatusOr<HloInstruction*> OperandUpcaster::ExpandInstruction(HloInstruction* inst) {
  HloComputation* c = inst->parent();
  PrimitiveType r = inst->shape().element_type();
  std::vector<HloInstruction*> operands;
  for (HloInstruction* op : inst->operands()) {
    PrimitiveType t = op->shape().element_type();
    if (t != r && SameKind(t, r) && Precision(t) < Precision(r)) {
      Shape s = op->shape();
      s.set_element_type(r);
      operands.push_back(c->AddInstruction(HloInstruction::CreateConvert(s, op)));
    } else {
      operands.push_back(op);
    }
  }
  return c->AddInstruction(inst->CloneWithNewOperands(inst->shape(), operands));
}

bool ResultCaster::InstructionMatchesPattern(HloInstruction* inst) {
  if (!IsDotOrConv(inst)) return false;
  PrimitiveType r = inst->shape().element_type();
  PrimitiveType a = inst->operand(0)->shape().element_type();
  return a == inst->operand(1)->shape().element_type() && a != r && SameKind(a, r) && Precision(r) < Precision(a);
}

absl::StatusOr<HloInstruction*> ResultCaster::ExpandInstruction(HloInstruction* inst) {
  HloComputation* c = inst->parent();
  Shape wide = inst->shape();
  wide.set_element_type(inst->operand(0)->shape().element_type());
  HloInstruction* computed = c->AddInstruction(inst->CloneWithNewOperands(wide, inst->operands()));
  return c->AddInstruction(HloInstruction::CreateConvert(inst->shape(), computed));
}

}  // namespace passlab
