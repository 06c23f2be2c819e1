#include "passes/simplifiers/hlo_dce.h"

#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool IsDead(const HloInstruction* inst) {
  return inst->user_count() == 0 && !inst->IsRoot() && inst->opcode() != HloOpcode::kParameter &&
         !inst->HasSideEffect() && inst->control_successors().empty();
}

// XLA's RemoveDeadParameters with remove_dead_parameters_from_entry_computation
// (xla/hlo/transforms/simplifiers/hlo_dce.cc): unused entry parameters go,
// highest number first, and so do their entry layout entries.
absl::StatusOr<bool> RemoveDeadEntryParameters(HloModule& module) {
  HloModuleConfig& config = module.config();
  if (!config.input_output_alias.empty() || !config.buffer_donor.empty()) return false;
  HloComputation* entry = module.entry_computation();
  std::vector<HloInstruction*> parameters = entry->parameter_instructions();
  bool changed = false;
  for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
    HloInstruction* p = *it;
    if (p->user_count() != 0 || p->IsRoot() || !p->control_successors().empty()) continue;
    int64_t number = p->parameter_number();
    if (absl::Status s = entry->RemoveParameter(number); !s.ok()) return s;
    if (config.entry_computation_layout.has_value() &&
        number < static_cast<int64_t>(config.entry_computation_layout->parameters.size())) {
      auto& layout = config.entry_computation_layout->parameters;
      layout.erase(layout.begin() + number);
    }
    auto& to_params = config.allow_spmd_sharding_propagation_to_parameters;
    if (number < static_cast<int64_t>(to_params.size()) && to_params.size() > 1) {
      to_params.erase(to_params.begin() + number);
    }
    changed = true;
  }
  return changed;
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
  if (options_.remove_dead_parameters_from_entry_computation) {
    absl::StatusOr<bool> removed = RemoveDeadEntryParameters(module);
    if (!removed.ok()) return removed.status();
    if (*removed) changed = true;
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
