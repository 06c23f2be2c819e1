#include "passes/layout/move_copy_to_users.h"

#include <vector>

#include "core/pass/hlo_rewrite_visitor.h"

namespace passlab {
namespace {

bool IsCopy(const HloInstruction* h) { return h->opcode() == HloOpcode::kCopy; }

// `copied`'s dimensions and layout with `like`'s element type.
Shape ShapeIn(const HloInstruction* copied, const Shape& like) {
  Shape s = copied->shape();
  s.set_element_type(like.element_type());
  return s;
}

class Visitor : public HloRewriteVisitor {
 public:
  // op(copy(x), rest...) => copy(op(x, rest...)) for the layout-preserving
  // ops whose other operands are scalars or indices.
  absl::Status HandlePad(HloInstruction* hlo) override { return SinkFirstOperandCopy(hlo); }
  absl::Status HandleSlice(HloInstruction* hlo) override { return SinkFirstOperandCopy(hlo); }
  absl::Status HandleDynamicSlice(HloInstruction* hlo) override { return SinkFirstOperandCopy(hlo); }
  absl::Status HandleReverse(HloInstruction* hlo) override { return SinkFirstOperandCopy(hlo); }
  absl::Status HandleReduceWindow(HloInstruction* hlo) override {
    if (hlo->shape().IsTuple()) return absl::OkStatus();  // variadic reduce-windows are left alone
    return SinkFirstOperandCopy(hlo);
  }

  // reduce(copy(x)) => reduce(x): reductions read any layout.
  absl::Status HandleReduce(HloInstruction* hlo) override {
    HloInstruction* operand = hlo->mutable_operand(0);
    if (!IsCopy(operand) || hlo->shape().IsTuple()) return absl::OkStatus();
    return ReplaceWithNewInstruction(
        hlo, hlo->CloneWithNewOperands(hlo->shape(), {operand->mutable_operand(0), hlo->mutable_operand(1)}));
  }

  absl::Status HandleBitcastConvert(HloInstruction*) override { return absl::OkStatus(); }
  absl::Status HandleCopy(HloInstruction*) override { return absl::OkStatus(); }
  absl::Status HandleReducePrecision(HloInstruction*) override { return absl::OkStatus(); }

  // convert(copy(x)) => copy(convert(x)), unless a convolution is the only
  // user (the convert likely fuses into it).
  absl::Status HandleConvert(HloInstruction* hlo) override {
    if (hlo->user_count() == 1 && hlo->users()[0]->opcode() == HloOpcode::kConvolution) return absl::OkStatus();
    return SinkFirstOperandCopy(hlo);
  }

  absl::Status DefaultAction(HloInstruction* hlo) override {
    if (IsElementwiseUnary(hlo->opcode())) return SinkFirstOperandCopy(hlo);
    if (IsElementwiseBinary(hlo->opcode())) return SinkBinary(hlo);
    return absl::OkStatus();
  }

  // concatenate(copy(x1), ..., copy(xn)) => copy(concatenate(x1, ..., xn))
  // when every xi has the same layout.
  absl::Status HandleConcatenate(HloInstruction* hlo) override {
    if (!IsCopy(hlo->operand(0))) return absl::OkStatus();
    const Shape& inner = hlo->operand(0)->operand(0)->shape();
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : hlo->operands()) {
      if (!IsCopy(op) || !op->operand(0)->shape().has_layout() || !inner.has_layout() ||
          op->operand(0)->shape().layout() != inner.layout()) {
        return absl::OkStatus();
      }
      operands.push_back(op->mutable_operand(0));
    }
    Shape shape = hlo->shape();
    shape.set_layout(inner.layout());
    HloInstruction* concat = AddInstruction(hlo, hlo->CloneWithNewOperands(shape, operands));
    return ReplaceWithCopy(hlo, concat);
  }

 private:
  absl::Status SinkFirstOperandCopy(HloInstruction* hlo) {
    HloInstruction* operand = hlo->mutable_operand(0);
    if (!IsCopy(operand)) return absl::OkStatus();
    HloInstruction* copied = operand->mutable_operand(0);
    std::vector<HloInstruction*> operands = hlo->operands();
    operands[0] = copied;
    Shape shape = hlo->shape();
    shape.set_layout(copied->shape().layout());
    HloInstruction* earlier = AddInstruction(hlo, hlo->CloneWithNewOperands(shape, operands));
    return ReplaceWithCopy(hlo, earlier);
  }

  // binary(copy(a), copy(b)) => copy(binary(a, b)) when a and b have the
  // same shape and layout.
  absl::Status SinkBinary(HloInstruction* hlo) {
    HloInstruction* a = hlo->mutable_operand(0);
    HloInstruction* b = hlo->mutable_operand(1);
    if (!IsCopy(a) || !IsCopy(b)) return absl::OkStatus();
    HloInstruction* copied_a = a->mutable_operand(0);
    HloInstruction* copied_b = b->mutable_operand(0);
    if (copied_a->shape() != copied_b->shape()) return absl::OkStatus();
    HloInstruction* earlier =
        AddInstruction(hlo, hlo->CloneWithNewOperands(ShapeIn(copied_a, hlo->shape()), {copied_a, copied_b}));
    return ReplaceWithCopy(hlo, earlier);
  }

  absl::Status ReplaceWithCopy(HloInstruction* hlo, HloInstruction* earlier) {
    HloInstruction* copy = AddInstruction(hlo, HloInstruction::CreateUnary(hlo->shape(), HloOpcode::kCopy, earlier));
    return ReplaceInstruction(hlo, copy);
  }
};

}  // namespace

absl::StatusOr<bool> MoveCopyToUsers::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
