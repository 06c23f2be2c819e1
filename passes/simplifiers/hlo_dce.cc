#include "passes/simplifiers/hlo_dce.h"

#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool IsDead(const HloInstruction* inst) {
  return inst->user_count() == 0 && !inst->IsRoot() && inst->opcode() != HloOpcode::kParameter &&
         !inst->HasSideEffect() && inst->control_successors().empty();
}

}  // namespace

absl::StatusOr<bool> HloDCE::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    // Reverse post order: users before operands, so one sweep removes chains.
    std::vector<HloInstruction*> order = c->MakeInstructionPostOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      HloInstruction* inst = *it;
      if (!IsDead(inst)) continue;
      BumpCounter("removed instructions");
      if (absl::Status s = c->RemoveInstruction(inst); !s.ok()) return s;
      changed = true;
    }
  }
  if (options_.remove_unused_computations) {
    int64_t removed = module.RemoveUnusedComputations();
    if (removed > 0) {
      BumpCounter("removed computations", removed);
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
