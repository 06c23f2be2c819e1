#include "passes/spmd/sharding_remover.h"

#include <algorithm>
#include <map>
#include <string>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// XLA's names (sharding_remover.cc; sdy::k*/spmd::k* constants) and what
// becomes of each once its users read its operand.
enum class Leaves { kDeadCall, kCopy, kNothing };
constexpr char kShardingGroup[] = "xla.sdy.ShardingGroup";
const std::map<std::string, Leaves, std::less<>>& Removed() {
  static const auto* targets = new std::map<std::string, Leaves, std::less<>>{
      // XLA's DCE keeps these custom calls: a copy stands in for them.
      {"Sharding", Leaves::kCopy},
      {"xla.sdy.PropagationBarrier", Leaves::kCopy},
      {"xla.sdy.FuncResultSharding", Leaves::kCopy},
      {"ShardBarrierFrom", Leaves::kCopy},
      {"ShardBarrierTo", Leaves::kCopy},
      // Left unused, for DCE.
      {"SPMDShardToFullShape", Leaves::kDeadCall},
      {"SPMDFullToShardShape", Leaves::kDeadCall},
      // Dangling (no users): removed at once.
      {kShardingGroup, Leaves::kNothing}};
  return *targets;
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
      auto removed = Removed().find(target);
      if (removed == Removed().end()) continue;
      if (inst->operand_count() != 1) {
        return absl::InvalidArgumentError(StrCat(inst->name(), ": a \"", target,
                                                 "\" custom call must have exactly one operand, not ",
                                                 inst->operand_count()));
      }
      if (removed->second == Leaves::kNothing) {
        RETURN_IF_ERROR(c->RemoveInstruction(inst));
        changed = true;
        continue;
      }
      HloInstruction* operand = inst->mutable_operand(0);
      RETURN_IF_ERROR(inst->ReplaceAllUsesWith(operand));
      changed = true;
      BumpCounter(StrCat("\"", target, "\" custom call removed"));
      if (removed->second == Leaves::kCopy) {
        HloInstruction* copy = c->AddInstruction(HloInstruction::CreateUnary(inst->shape(), HloOpcode::kCopy, operand));
        RETURN_IF_ERROR(c->ReplaceInstruction(inst, copy));
      }
    }
  }
  return changed;
}

}  // namespace passlab
