#include "core/ir/status_macros.h"
#include "passes/simplifiers/zero_sized_hlo_elimination.h"

namespace passlab {

absl::StatusOr<bool> ZeroSizedHloElimination::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      const Shape& shape = inst->shape();
      if (!shape.IsArray() || shape.element_count() != 0 || !shape.is_static() ||
          inst->opcode() == HloOpcode::kConstant || inst->opcode() == HloOpcode::kParameter ||
          inst->HasSideEffect() || !inst->control_predecessors().empty() ||
          !inst->control_successors().empty()) {
        continue;
      }
      auto constant = HloInstruction::CreateConstant(Literal(shape));
      constant->set_metadata(inst->metadata());
      HloInstruction* added = c->AddInstruction(std::move(constant));
      RETURN_IF_ERROR(c->ReplaceInstruction(inst, added));
      BumpCounter("zero-sized instruction => constant");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
