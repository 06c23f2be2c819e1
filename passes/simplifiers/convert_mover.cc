#include "passes/simplifiers/convert_mover.h"

#include <deque>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"

namespace passlab {
namespace {

// convert(op(x)) == op(convert(x)): the op only moves elements around.
// (Bitcast also would, but this pass runs before layouts are meaningful.)
bool CommutesWithConvert(HloOpcode opcode) {
  return opcode == HloOpcode::kConcatenate || opcode == HloOpcode::kPad || opcode == HloOpcode::kReshape ||
         opcode == HloOpcode::kSlice || opcode == HloOpcode::kTranspose;
}

// Packed types (s4, u2, ...) are not supported by most ops.
bool IsSubByteNonPred(PrimitiveType type) { return PrimitiveBitWidth(type) < 8 && !IsPredType(type); }

// The constant converts to `type` and back without changing any element.
bool IsLosslesslyConvertibleTo(const Literal& literal, PrimitiveType type) {
  absl::StatusOr<Literal> there = literal.Convert(type);
  if (!there.ok()) return false;
  absl::StatusOr<Literal> back = there->Convert(literal.shape().element_type());
  return back.ok() && *back == literal;
}

Shape WithElementType(const Shape& shape, PrimitiveType type) {
  Shape s = shape;
  s.set_element_type(type);
  return s;
}

// `operand` as `type`: itself when it already is, else a new convert.
HloInstruction* ConvertTo(HloComputation& computation, HloInstruction* operand, PrimitiveType type) {
  if (operand->shape().element_type() == type) return operand;
  return computation.AddInstruction(HloInstruction::CreateConvert(WithElementType(operand->shape(), type), operand));
}

class ConvertMoves {
 public:
  ConvertMoves(HloComputation& computation, HloPassInterface& pass) : computation_(computation), pass_(pass) {}

  absl::StatusOr<bool> Run() {
    bool changed = false;
    for (HloInstruction* inst : computation_.MakeInstructionPostOrder()) {
      ASSIGN_OR_RETURN(bool moved, SinkWideningConverts(inst));
      changed |= moved;
    }
    // Upward moves walk from the root, so a convert keeps climbing through
    // a chain of ops; removed instructions are remembered and skipped.
    computation_.set_removal_listener([this](const HloInstruction* inst) { removed_.insert(inst); });
    std::vector<HloInstruction*> order = computation_.MakeInstructionPostOrder();
    std::deque<HloInstruction*> work(order.rbegin(), order.rend());
    absl::Status status = absl::OkStatus();
    while (!work.empty() && status.ok()) {
      HloInstruction* inst = work.front();
      work.pop_front();
      if (removed_.contains(inst)) continue;
      absl::StatusOr<bool> moved = HoistNarrowingConvert(inst, work);
      if (!moved.ok()) status = moved.status();
      changed |= moved.ok() && *moved;
    }
    computation_.set_removal_listener(nullptr);
    if (!status.ok()) return status;
    return changed;
  }

 private:
  // op(convert_wide(a), ..., c) => convert_wide(op(a, ..., convert_narrow(c)))
  absl::StatusOr<bool> SinkWideningConverts(HloInstruction* inst) {
    if (!CommutesWithConvert(inst->opcode()) || inst->operand_count() == 0) return false;
    const HloInstruction* convert = nullptr;
    for (const HloInstruction* operand : inst->operands()) {
      bool sole_convert = operand->opcode() == HloOpcode::kConvert && operand->user_count() == 1;
      if (!sole_convert && operand->opcode() != HloOpcode::kConstant) return false;
      if (sole_convert && convert == nullptr) convert = operand;
    }
    if (convert == nullptr) return false;
    PrimitiveType narrow = convert->operand(0)->shape().element_type();
    PrimitiveType wide = convert->shape().element_type();
    for (const HloInstruction* operand : inst->operands()) {
      if (operand->opcode() == HloOpcode::kConvert && operand->operand(0)->shape().element_type() != narrow) {
        return false;
      }
    }
    if (PrimitiveBitWidth(narrow) >= PrimitiveBitWidth(wide)) return false;
    for (const HloInstruction* operand : inst->operands()) {
      if (operand->opcode() == HloOpcode::kConstant && !IsLosslesslyConvertibleTo(operand->literal(), narrow)) {
        return false;
      }
    }
    if (IsSubByteNonPred(narrow)) return false;
    std::vector<HloInstruction*> narrow_operands;
    for (HloInstruction* operand : inst->operands()) {
      narrow_operands.push_back(operand->opcode() == HloOpcode::kConvert ? operand->mutable_operand(0)
                                                                         : ConvertTo(computation_, operand, narrow));
    }
    HloInstruction* moved = computation_.AddInstruction(
        inst->CloneWithNewOperands(WithElementType(inst->shape(), narrow), narrow_operands));
    pass_.BumpCounter("op(convert_wide(A)) => convert_wide(op(A))");
    RETURN_IF_ERROR(computation_.ReplaceWithNewInstruction(inst, HloInstruction::CreateConvert(inst->shape(), moved)));
    return true;
  }

  // convert_narrow(op(a, ...)) => op(convert_narrow(a), ...); the new
  // converts go to the front of `work` to climb further.
  absl::StatusOr<bool> HoistNarrowingConvert(HloInstruction* convert, std::deque<HloInstruction*>& work) {
    if (convert->opcode() != HloOpcode::kConvert) return false;
    HloInstruction* op = convert->mutable_operand(0);
    if (op->user_count() != 1 || !CommutesWithConvert(op->opcode())) return false;
    PrimitiveType wide = op->shape().element_type();
    PrimitiveType narrow = convert->shape().element_type();
    if (PrimitiveBitWidth(wide) <= PrimitiveBitWidth(narrow) || IsSubByteNonPred(narrow)) return false;
    std::vector<HloInstruction*> narrow_operands;
    for (HloInstruction* operand : op->operands()) {
      HloInstruction* narrowed = ConvertTo(computation_, operand, narrow);
      removed_.erase(narrowed);  // a new instruction may reuse a removed one's address
      work.push_front(narrowed);
      narrow_operands.push_back(narrowed);
    }
    pass_.BumpCounter("convert_narrow(op(A)) => op(convert_narrow(A))");
    RETURN_IF_ERROR(computation_.ReplaceWithNewInstruction(
        convert, op->CloneWithNewOperands(WithElementType(op->shape(), narrow), narrow_operands)));
    return true;
  }

  HloComputation& computation_;
  HloPassInterface& pass_;
  absl::flat_hash_set<const HloInstruction*> removed_;
};

}  // namespace

absl::StatusOr<bool> ConvertMover::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    ASSIGN_OR_RETURN(bool c, ConvertMoves(*computation, *this).Run());
    changed |= c;
  }
  return changed;
}

}  // namespace passlab
