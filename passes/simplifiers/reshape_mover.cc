#include "passes/simplifiers/reshape_mover.h"

#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"

namespace passlab {
namespace {

bool IsRearrange(const HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kReshape || inst->opcode() == HloOpcode::kTranspose;
}

bool IsTriviallyRearrangeable(const HloInstruction* inst) {
  if (inst->opcode() == HloOpcode::kConstant) return true;
  return inst->opcode() == HloOpcode::kBroadcast && inst->operand(0)->shape().IsScalar();
}

// Same kind of rearrangement from the same input dimensions.
bool EquivalentRearranges(const HloInstruction* a, const HloInstruction* b) {
  if (a->opcode() != b->opcode()) return false;
  if (a->operand(0)->shape().dimensions() != b->operand(0)->shape().dimensions()) return false;
  return a->opcode() != HloOpcode::kTranspose || a->dimensions() == b->dimensions();
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& p) {
  std::vector<int64_t> inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
  return inv;
}

// The instruction's operand in the un-rearranged space of `first`.
HloInstruction* UndoRearrange(HloComputation& c, HloInstruction* operand, const HloInstruction* first) {
  if (IsRearrange(operand) && EquivalentRearranges(operand, first)) return operand->mutable_operand(0);
  Shape shape = first->operand(0)->shape();
  shape.set_element_type(operand->shape().element_type());
  if (operand->opcode() == HloOpcode::kBroadcast) {
    return c.AddInstruction(HloInstruction::CreateBroadcast(shape, operand->mutable_operand(0), {}));
  }
  // A constant: rearranged back (constant folding turns this into a constant).
  if (first->opcode() == HloOpcode::kReshape) {
    return c.AddInstruction(HloInstruction::CreateReshape(shape, operand));
  }
  return c.AddInstruction(
      HloInstruction::CreateTranspose(shape, operand, InversePermutation(first->dimensions())));
}

// The first operand that rearranges a non-trivial value, if every operand
// can follow it.
const HloInstruction* MoveCandidate(const HloInstruction* inst) {
  if (!inst->IsElementwise() || inst->HasSideEffect() || inst->operand_count() == 0 ||
      inst->shape().IsTuple()) {
    return nullptr;
  }
  const HloInstruction* first = nullptr;
  for (const HloInstruction* op : inst->operands()) {
    if (op->shape().dimensions() != inst->shape().dimensions()) return nullptr;
    if (IsRearrange(op) && !IsTriviallyRearrangeable(op->operand(0))) {
      first = op;
      break;
    }
  }
  if (first == nullptr) return nullptr;
  for (const HloInstruction* op : inst->operands()) {
    if (IsRearrange(op) && EquivalentRearranges(op, first)) continue;
    if (!IsTriviallyRearrangeable(op)) return nullptr;
  }
  return first;
}

}  // namespace

absl::StatusOr<bool> ReshapeMover::RunOnComputation(HloComputation& computation) {
  bool changed = false;
  for (HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    const HloInstruction* first = MoveCandidate(inst);
    if (first == nullptr) continue;
    // op(r(a), r(b), c) => r(op(a, b, r^-1(c)))
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) operands.push_back(UndoRearrange(computation, op, first));
    Shape inner_shape = first->operand(0)->shape();
    inner_shape.set_element_type(inst->shape().element_type());
    std::unique_ptr<HloInstruction> moved = inst->CloneWithNewOperands(inner_shape, operands);
    moved->SetName("");
    moved->set_metadata(inst->metadata());
    HloInstruction* inner = computation.AddInstruction(std::move(moved));
    std::unique_ptr<HloInstruction> outer =
        first->opcode() == HloOpcode::kReshape
            ? HloInstruction::CreateReshape(inst->shape(), inner)
            : HloInstruction::CreateTranspose(inst->shape(), inner, first->dimensions());
    BumpCounter(first->opcode() == HloOpcode::kReshape ? "reshape sunk" : "transpose sunk");
    RETURN_IF_ERROR(computation.ReplaceWithNewInstruction(inst, std::move(outer)));
    changed = true;
  }
  return changed;
}

}  // namespace passlab
