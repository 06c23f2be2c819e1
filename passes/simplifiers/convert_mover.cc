#include "passes/simplifiers/convert_mover.h"

#include "core/pass/hlo_rewrite_visitor.h"

namespace passlab {
namespace {

// Every value of `from` is exactly representable in `to`, and `to` takes
// more bytes: converting from -> to widens.
bool IsExactWidening(PrimitiveType from, PrimitiveType to) {
  if (PrimitiveBitWidth(to) <= PrimitiveBitWidth(from)) return false;
  if (IsFloatingPointType(from) && IsFloatingPointType(to)) {
    return ExponentBits(to) >= ExponentBits(from) && MantissaBits(to) >= MantissaBits(from);
  }
  if (IsSignedIntegralType(from)) return IsSignedIntegralType(to);
  if (IsUnsignedIntegralType(from)) return IsIntegralType(to);
  return false;
}

// A convert to fewer bytes of the same kind of number (float to float,
// integer to integer): the inverse direction of an exact widening.
bool IsNarrowing(const HloInstruction& convert) {
  PrimitiveType from = convert.operand(0)->shape().element_type(), to = convert.shape().element_type();
  if (PrimitiveBitWidth(to) >= PrimitiveBitWidth(from)) return false;
  return (IsFloatingPointType(from) && IsFloatingPointType(to)) || (IsIntegralType(from) && IsIntegralType(to));
}

Shape WithElementType(const Shape& shape, PrimitiveType type) {
  Shape s = shape;
  s.set_element_type(type);
  return s;
}

class Visitor : public HloRewriteVisitor {
 public:
  explicit Visitor(HloPassInterface& pass) : pass_(pass) {}

  absl::Status HandleReshape(HloInstruction* inst) override { return SinkWideningConverts(inst); }
  absl::Status HandleTranspose(HloInstruction* inst) override { return SinkWideningConverts(inst); }
  absl::Status HandleSlice(HloInstruction* inst) override { return SinkWideningConverts(inst); }
  absl::Status HandleReverse(HloInstruction* inst) override { return SinkWideningConverts(inst); }
  absl::Status HandleConcatenate(HloInstruction* inst) override { return SinkWideningConverts(inst); }

  // convert_narrow(op(a, ...)) => op(convert_narrow(a), ...)
  absl::Status HandleConvert(HloInstruction* convert) override {
    HloInstruction* op = convert->mutable_operand(0);
    if (!IsNarrowing(*convert) || !IsDataMovement(op->opcode()) || op->user_count() != 1) return absl::OkStatus();
    PrimitiveType narrow = convert->shape().element_type();
    std::vector<HloInstruction*> operands;
    for (HloInstruction* a : op->operands()) {
      operands.push_back(AddInstruction(
          convert, HloInstruction::CreateConvert(WithElementType(a->shape(), narrow), a)));
    }
    pass_.BumpCounter("convert_narrow(op(A)) => op(convert_narrow(A))");
    return ReplaceWithNewInstruction(convert, op->CloneWithNewOperands(convert->shape(), operands));
  }

 private:
  static bool IsDataMovement(HloOpcode op) {
    return op == HloOpcode::kReshape || op == HloOpcode::kTranspose || op == HloOpcode::kSlice ||
           op == HloOpcode::kReverse || op == HloOpcode::kConcatenate;
  }

  // op(convert_wide(a), ...) => convert_wide(op(a, ...))
  absl::Status SinkWideningConverts(HloInstruction* inst) {
    if (!inst->shape().IsArray()) return absl::OkStatus();
    std::vector<HloInstruction*> narrow_operands;
    PrimitiveType narrow = PrimitiveType::kInvalid;
    for (HloInstruction* op : inst->operands()) {
      if (op->opcode() != HloOpcode::kConvert) return absl::OkStatus();
      PrimitiveType from = op->operand(0)->shape().element_type();
      if (narrow != PrimitiveType::kInvalid && from != narrow) return absl::OkStatus();
      if (!IsExactWidening(from, op->shape().element_type())) return absl::OkStatus();
      narrow = from;
      narrow_operands.push_back(op->mutable_operand(0));
    }
    HloInstruction* moved = AddInstruction(
        inst, inst->CloneWithNewOperands(WithElementType(inst->shape(), narrow), narrow_operands));
    pass_.BumpCounter("op(convert_wide(A)) => convert_wide(op(A))");
    return ReplaceWithNewInstruction(inst, HloInstruction::CreateConvert(inst->shape(), moved));
  }

  HloPassInterface& pass_;
};

}  // namespace

absl::StatusOr<bool> ConvertMover::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor(*this);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
