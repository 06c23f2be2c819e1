#include "passes/simplifiers/conditional_simplifier.h"

#include "core/ir/hlo_computation.h"
#include "passes/simplifiers/call_inliner.h"

namespace passlab {

absl::StatusOr<bool> ConditionalSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() != HloOpcode::kConditional || inst->HasSideEffect()) continue;
      const HloInstruction* index = inst->operand(0);
      int64_t n = inst->branch_count();
      int64_t taken;
      if (n == 1) {
        taken = 0;
      } else if (index->opcode() == HloOpcode::kConstant) {
        if (index->shape().element_type() == PrimitiveType::kPred) {
          taken = index->literal().GetBits(0) ? 0 : 1;
        } else {
          taken = index->literal().GetInt(0);
          if (taken < 0 || taken >= n) taken = n - 1;  // XLA: out of range takes the last branch
        }
      } else {
        continue;
      }
      HloComputation* branch = inst->branch_computation(taken);
      auto call = HloInstruction::CreateCall(inst->shape(), {inst->mutable_operand(taken + 1)}, branch);
      call->set_metadata(inst->metadata());
      HloInstruction* added = c->AddInstruction(std::move(call));
      if (absl::Status s = c->ReplaceInstruction(inst, added); !s.ok()) return s;
      absl::StatusOr<HloInstruction*> inlined = InlineCall(added);
      if (!inlined.ok()) return inlined.status();
      BumpCounter(n == 1 ? "single-branch conditional inlined" : "constant-index conditional inlined");
      changed = true;
    }
  }
  if (changed) module.RemoveUnusedComputations();
  return changed;
}

}  // namespace passlab
