#include "passes/spmd/sharding_remover.h"

#include <algorithm>
#include <set>
#include <string>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// XLA's names (sharding_remover.cc; sdy::k*/spmd::k* constants).
constexpr char kShardingGroup[] = "xla.sdy.ShardingGroup";
const std::set<std::string, std::less<>>& Removed() {
  static const auto* names = new std::set<std::string, std::less<>>{
      "Sharding",          "SPMDShardToFullShape",       "SPMDFullToShardShape",
      kShardingGroup,      "xla.sdy.PropagationBarrier", "xla.sdy.FuncResultSharding",
      "ShardBarrierFrom",  "ShardBarrierTo"};
  return *names;
}
// Those replaced by a copy (XLA's DCE does not remove the custom calls).
bool ReplacedByCopy(std::string_view target) {
  return target == "Sharding" || target == "xla.sdy.FuncResultSharding" || target == "xla.sdy.PropagationBarrier" ||
         target == "ShardBarrierFrom" || target == "ShardBarrierTo";
}

}  // namespace

absl::StatusOr<bool> ShardingRemover::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    std::vector<HloInstruction*> order = c->MakeInstructionPostOrder();
    std::reverse(order.begin(), order.end());
    for (HloInstruction* inst : order) {
      if (inst->opcode() != HloOpcode::kCustomCall) continue;
      const std::string& target = inst->custom_call_target();
      if (Removed().count(target) == 0) continue;
      if (inst->operand_count() != 1) {
        return absl::InvalidArgumentError(StrCat(inst->name(), ": a \"", target,
                                                 "\" custom call must have exactly one operand, not ",
                                                 inst->operand_count()));
      }
      if (target == kShardingGroup) {  // dangling: nothing reads it
        RETURN_IF_ERROR(c->RemoveInstruction(inst));
        changed = true;
        continue;
      }
      HloInstruction* operand = inst->mutable_operand(0);
      RETURN_IF_ERROR(inst->ReplaceAllUsesWith(operand));
      changed = true;
      BumpCounter(StrCat("\"", target, "\" custom call removed"));
      if (ReplacedByCopy(target)) {
        HloInstruction* copy = c->AddInstruction(HloInstruction::CreateUnary(inst->shape(), HloOpcode::kCopy, operand));
        RETURN_IF_ERROR(c->ReplaceInstruction(inst, copy));
      }
    }
  }
  return changed;
}

}  // namespace passlab
