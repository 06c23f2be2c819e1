#include "passes/simplifiers/call_inliner.h"

#include "absl/container/flat_hash_map.h"
#include "core/ir/str_util.h"

namespace passlab {

absl::StatusOr<HloInstruction*> InlineCall(HloInstruction* call) {
  HloComputation* caller = call->parent();
  const HloComputation* callee = call->to_apply();
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (int64_t i = 0; i < callee->num_parameters(); ++i) {
    map[callee->parameter_instruction(i)] = call->mutable_operand(i);
  }
  for (HloInstruction* inst : callee->MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) operands.push_back(map.at(op));
    std::unique_ptr<HloInstruction> clone = inst->CloneWithNewOperands(inst->shape(), operands);
    // Keep the body's names readable but unique in the caller.
    clone->SetName(StrCat(inst->name()));
    if (clone->metadata().empty()) clone->set_metadata(call->metadata());
    HloInstruction* added = caller->AddInstruction(std::move(clone));
    map[inst] = added;
  }
  for (HloInstruction* inst : callee->MakeInstructionPostOrder()) {
    for (HloInstruction* pred : inst->control_predecessors()) {
      map.at(pred)->AddControlDependencyTo(map.at(inst));
    }
  }
  HloInstruction* root = map.at(callee->root_instruction());
  call->CopyControlDependenciesTo(root);
  call->DropAllControlDeps();
  if (absl::Status s = caller->ReplaceInstruction(call, root); !s.ok()) return s;
  return root;
}

absl::StatusOr<bool> CallInliner::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  // Callers after callees in this order, so inlined bodies are call-free when
  // the callee was processed first.
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() != HloOpcode::kCall) continue;
      absl::StatusOr<HloInstruction*> r = InlineCall(inst);
      if (!r.ok()) return r.status();
      BumpCounter("inlined call");
      changed = true;
    }
  }
  if (changed) module.RemoveUnusedComputations();
  return changed;
}

}  // namespace passlab
