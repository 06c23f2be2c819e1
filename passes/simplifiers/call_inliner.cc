#include "passes/simplifiers/call_inliner.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/simplifiers/hlo_dce.h"

namespace passlab {
namespace {

std::string_view InlinePolicy(const HloInstruction* call) {
  auto it = call->frontend_attributes().map.find("inlineable");
  if (it == call->frontend_attributes().map.end()) return "auto";
  if (it->second == "false" || it->second == "xla_late") return "late";
  if (it->second == "true" || it->second == "xla_early") return "early";
  return "auto";
}

// prefix + "/" + op_name, unless op_name already starts with the prefix
// (XLA's PropagateCallMetadata::UpdateOpName).
void PrefixOpName(HloInstruction* inst, std::string_view prefix) {
  std::string_view clean_prefix = prefix;
  while (!clean_prefix.empty() && clean_prefix.back() == '/') clean_prefix.remove_suffix(1);
  if (clean_prefix.empty()) return;
  const std::string name = inst->metadata().op_name;
  std::string_view clean_name = name;
  if (!clean_name.empty() && clean_name.front() == '/') clean_name.remove_prefix(1);
  if (!clean_name.empty() && clean_name.back() == '/') clean_name.remove_suffix(1);
  if (clean_name.substr(0, clean_prefix.size()) == clean_prefix) return;
  if (clean_prefix.size() + clean_name.size() >= 1024) return;
  inst->mutable_metadata()->op_name =
      clean_name.empty() ? std::string(clean_prefix) : StrCat(clean_prefix, "/", clean_name);
}

// Also into the computations of loops and conditionals (not calls, which
// are inlined themselves).
void PropagateOpName(HloInstruction* inst, std::string_view prefix) {
  if (inst->opcode() == HloOpcode::kWhile || inst->opcode() == HloOpcode::kConditional) {
    for (HloComputation* c : inst->called_computations()) {
      for (HloInstruction* i : c->instructions()) PropagateOpName(i, prefix);
    }
  }
  PrefixOpName(inst, prefix);
}

}  // namespace

bool CallInlineAllowed(const HloInstruction* call) { return InlinePolicy(call) != "late"; }

absl::StatusOr<HloInstruction*> InlineCall(HloInstruction* call) {
  HloComputation* caller = call->parent();
  const HloComputation* callee = call->to_apply();
  const std::string prefix = call->metadata().op_name;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (int64_t i = 0; i < callee->num_parameters(); ++i) {
    map[callee->parameter_instruction(i)] = call->mutable_operand(i);
  }
  for (HloInstruction* inst : callee->MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) operands.push_back(map.at(op));
    std::unique_ptr<HloInstruction> clone = inst->CloneWithNewOperands(inst->shape(), operands);
    clone->SetName(StrCat(inst->name()));
    HloInstruction* added = caller->AddInstruction(std::move(clone));
    if (!prefix.empty()) PropagateOpName(added, prefix);
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
  RETURN_IF_ERROR(caller->ReplaceInstruction(call, root));
  return root;
}

absl::StatusOr<bool> CallInliner::RunImpl(HloModule& module, PassRunContext* context) {
  // Call sites per computation (any calling instruction).
  absl::flat_hash_map<const HloComputation*, int64_t> call_sites;
  absl::flat_hash_set<const HloComputation*> async_computations;
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* inst : c->instructions()) {
      for (const HloComputation* callee : inst->called_computations()) {
        ++call_sites[callee];
        if (inst->opcode() == HloOpcode::kAsyncStart) async_computations.insert(callee);
      }
    }
  }
  auto should_inline = [&](const HloInstruction* inst) {
    if (inst->opcode() != HloOpcode::kCall || !inst->raw_backend_config().empty()) return false;
    const std::string& callee = inst->to_apply()->name();
    if (options_.use_shardy_partitioner && (callee.find("shmap_body") != std::string::npos ||
                                            callee.find("xla.sdy.manual_computation_body") != std::string::npos)) {
      return false;
    }
    if (!CallInlineAllowed(inst)) return false;
    if (InlinePolicy(inst) == "early") return true;
    return !options_.single_call_site || call_sites[inst->to_apply()] == 1;
  };
  bool changed = false;
  // Callees before callers, so inlined bodies are already call-free.
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (async_computations.contains(c)) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (!should_inline(inst)) continue;
      ASSIGN_OR_RETURN(HloInstruction* r, InlineCall(inst));
      BumpCounter("inlined call");
      changed = true;
    }
  }
  if (changed) {
    // Like XLA, clean up what inlining left dead, computations included.
    ASSIGN_OR_RETURN(bool dce, HloDCE().Run(module));
  }
  return changed;
}

}  // namespace passlab
