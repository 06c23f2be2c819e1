#include "passes/simplifiers/hlo_dce.h"

#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/ir/status_macros.h"
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
    RETURN_IF_ERROR(entry->RemoveParameter(number));
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

// Each computation's callers: the instructions that call it. An async-update
// or async-done shares its start's computation; the start is the caller.
using CallerMap = absl::flat_hash_map<const HloComputation*, std::vector<HloInstruction*>>;

CallerMap FindCallers(const HloModule& module) {
  CallerMap callers;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() == HloOpcode::kAsyncUpdate || inst->opcode() == HloOpcode::kAsyncDone) continue;
      for (HloComputation* callee : inst->called_computations()) callers[callee].push_back(inst);
    }
  }
  return callers;
}

// XLA's IsSafelyRemovable for a parameter of a non-entry computation: every
// caller passes operands one to one (fusion, call, async-start) and there is
// at least one to fix.
bool CallersCanDropOperands(const std::vector<HloInstruction*>& callers) {
  if (callers.empty()) return false;
  for (const HloInstruction* caller : callers) {
    HloOpcode op = caller->opcode();
    if (op != HloOpcode::kFusion && op != HloOpcode::kCall && op != HloOpcode::kAsyncStart) return false;
  }
  return true;
}

// Drops operand `number` of `caller`; an async-start (and the async-updates
// that carry its shape) also drops that operand's shape from element {0}.
void DropCallerOperand(HloInstruction* caller, int64_t number) {
  caller->RemoveOperandAt(number);
  if (caller->opcode() != HloOpcode::kAsyncStart) return;
  std::vector<HloInstruction*> carriers = {caller};
  for (size_t k = 0; k < carriers.size(); ++k) {
    std::vector<Shape>& operand_shapes = carriers[k]->mutable_shape()->mutable_tuple_shapes()[0].mutable_tuple_shapes();
    operand_shapes.erase(operand_shapes.begin() + number);
    for (HloInstruction* user : carriers[k]->users()) {
      if (user->opcode() == HloOpcode::kAsyncUpdate) carriers.push_back(user);
    }
  }
}

// Removes the dead instructions of `c`, users before operands.
absl::StatusOr<bool> RemoveDeadInstructions(HloComputation* c, const std::function<void()>& on_removed) {
  bool changed = false;
  // Reverse post order: users before operands, so one sweep removes chains.
  std::vector<HloInstruction*> order = c->MakeInstructionPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    HloInstruction* inst = *it;
    if (!IsDead(inst)) continue;
    on_removed();
    RETURN_IF_ERROR(c->RemoveInstruction(inst));
    changed = true;
  }
  return changed;
}

// XLA's RemoveDeadParameters with a call graph: the unused parameters of a
// non-entry computation go, highest number first, and so does the matching
// operand of every caller. Callers' operands left unused are removed when
// the callers' computations are swept (they come later in post order).
absl::StatusOr<bool> RemoveDeadCalleeParameters(HloComputation* c, const CallerMap& callers) {
  if (c->IsEntryComputation()) return false;
  auto it = callers.find(c);
  if (it == callers.end() || !CallersCanDropOperands(it->second)) return false;
  std::vector<HloInstruction*> parameters = c->parameter_instructions();
  bool changed = false;
  for (auto p = parameters.rbegin(); p != parameters.rend(); ++p) {
    HloInstruction* parameter = *p;
    if (parameter->user_count() != 0 || parameter->IsRoot() || !parameter->control_successors().empty() ||
        !parameter->control_predecessors().empty()) {
      continue;
    }
    int64_t number = parameter->parameter_number();
    RETURN_IF_ERROR(c->RemoveParameter(number));
    for (HloInstruction* caller : it->second) DropCallerOperand(caller, number);
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> HloDCE::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  CallerMap callers;
  if (options_.use_call_analysis) callers = FindCallers(module);
  // Post order: callees before callers, so the operands a callee's removed
  // parameters leave unused are swept with their caller's computation.
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    ASSIGN_OR_RETURN(bool removed, RemoveDeadInstructions(c, [&] { BumpCounter("removed instructions"); }));
    changed |= removed;
    if (!options_.use_call_analysis) continue;
    ASSIGN_OR_RETURN(bool parameters, RemoveDeadCalleeParameters(c, callers));
    if (parameters) BumpCounter("removed parameters");
    changed |= parameters;
  }
  if (options_.remove_dead_parameters_from_entry_computation) {
    ASSIGN_OR_RETURN(bool removed, RemoveDeadEntryParameters(module));
    if (removed) changed = true;
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
