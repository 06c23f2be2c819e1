#include "passes/expanders/comparison_expander.h"

#include "core/ir/hlo_computation.h"

namespace passlab {
namespace {

PrimitiveType SignedOfWidth(int bits) {
  switch (bits) {
    case 8: return PrimitiveType::kS8;
    case 16: return PrimitiveType::kS16;
    case 32: return PrimitiveType::kS32;
    case 64: return PrimitiveType::kS64;
    default: return PrimitiveType::kInvalid;
  }
}

}  // namespace

bool ComparisonExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kCompare || inst->attrs().comparison_type != ComparisonType::kTotalOrder) return false;
  PrimitiveType t = inst->operand(0)->shape().element_type();
  return IsFloatingPointType(t) && SignedOfWidth(PrimitiveBitWidth(t)) != PrimitiveType::kInvalid;
}

absl::StatusOr<HloInstruction*> ComparisonExpander::ExpandInstruction(HloInstruction* inst) {
  HloComputation* c = inst->parent();
  const Shape& fs = inst->operand(0)->shape();
  PrimitiveType it = SignedOfWidth(PrimitiveBitWidth(fs.element_type()));
  Shape is = fs;
  is.set_element_type(it);
  Literal max_lit(Shape::Scalar(it));
  max_lit.SetInt(0, PrimitiveBitWidth(fs.element_type()) == 64 ? std::numeric_limits<int64_t>::max()
                                                                : (int64_t{1} << (PrimitiveBitWidth(fs.element_type()) - 1)) - 1);
  HloInstruction* max_scalar = c->AddInstruction(HloInstruction::CreateConstant(std::move(max_lit)));
  HloInstruction* max = c->AddInstruction(HloInstruction::CreateBroadcast(is, max_scalar, {}));
  HloInstruction* zero_scalar = c->AddInstruction(HloInstruction::CreateConstant(Literal(Shape::Scalar(it))));
  HloInstruction* zero = c->AddInstruction(HloInstruction::CreateBroadcast(is, zero_scalar, {}));
  Shape ps = fs;
  ps.set_element_type(PrimitiveType::kPred);
  auto key = [&](HloInstruction* x) {
    // bits ^ (bits < 0 ? INT_MAX : 0)
    HloInstruction* bits = c->AddInstruction(HloInstruction::CreateUnary(is, HloOpcode::kBitcastConvert, x));
    HloInstruction* neg = c->AddInstruction(
        HloInstruction::CreateCompare(ps, bits, zero, ComparisonDirection::kLt, ComparisonType::kSigned));
    HloInstruction* mask = c->AddInstruction(HloInstruction::CreateTernary(is, HloOpcode::kSelect, neg, max, zero));
    return c->AddInstruction(HloInstruction::CreateBinary(is, HloOpcode::kXor, bits, mask));
  };
  HloInstruction* a = key(inst->mutable_operand(0));
  HloInstruction* b = key(inst->mutable_operand(1));
  return c->AddInstruction(
      HloInstruction::CreateCompare(inst->shape(), a, b, inst->attrs().comparison_direction, ComparisonType::kSigned));
}

}  // namespace passlab
