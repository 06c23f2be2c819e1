#include "passes/simplifiers/while_loop_constant_sinking.h"

#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// A copy of `c` named "<name>.sunk", with the map from its instructions to
// the copies.
HloComputation* CloneSunk(const HloComputation& c,
                          absl::flat_hash_map<const HloInstruction*, HloInstruction*>& map) {
  auto clone = std::make_unique<HloComputation>(StrCat(c.name(), ".sunk"));
  clone->set_execution_thread(c.execution_thread());
  for (HloInstruction* p : c.parameter_instructions()) {
    map[p] = clone->AddParameter(p->CloneWithNewOperands(p->shape(), {}));
  }
  for (HloInstruction* inst : c.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : inst->operands()) ops.push_back(map.at(op));
    map[inst] = clone->AddInstruction(inst->CloneWithNewOperands(inst->shape(), ops), inst->name());
  }
  for (HloInstruction* inst : c.instructions()) {
    for (HloInstruction* s : inst->control_successors()) map.at(inst)->AddControlDependencyTo(map.at(s));
  }
  clone->set_root_instruction(map.at(c.root_instruction()));
  return c.parent()->AddEmbeddedComputation(std::move(clone));
}

// A copy of the constant (or broadcast of a constant) `value` in `c`.
HloInstruction* CloneValue(const HloInstruction* value, HloComputation* c) {
  if (value->opcode() == HloOpcode::kConstant) {
    return c->AddInstruction(value->CloneWithNewOperands(value->shape(), {}), StrCat(value->name(), ".sunk"));
  }
  return c->AddInstruction(value->CloneWithNewOperands(value->shape(), {CloneValue(value->operand(0), c)}));
}

}  // namespace

absl::StatusOr<bool> WhileLoopConstantSinking::RunImpl(HloModule& module, PassRunContext*) {
  auto try_sink = [&](HloInstruction* w) -> absl::StatusOr<bool> {
    const HloInstruction* init = w->operand(0);
    HloComputation* body = w->while_body();
    HloComputation* cond = w->while_condition();
    if (init->opcode() != HloOpcode::kTuple) return false;
    // Body reads passed through unchanged at their own position.
    std::vector<HloInstruction*> invariant_gtes;
    const HloInstruction* root = body->root_instruction();
    if (root->opcode() == HloOpcode::kTuple) {
      for (int64_t i = 0; i < root->operand_count(); ++i) {
        HloInstruction* op = root->mutable_operand(i);
        if (op->opcode() == HloOpcode::kGetTupleElement && op->tuple_index() == i &&
            op->operand(0) == body->parameter_instruction(0)) {
          invariant_gtes.push_back(op);
        }
      }
    }
    std::map<int64_t, std::vector<HloInstruction*>> cond_gtes;
    for (HloInstruction* user : cond->parameter_instruction(0)->users()) {
      if (user->opcode() == HloOpcode::kGetTupleElement) cond_gtes[user->tuple_index()].push_back(user);
    }
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> body_map, cond_map;
    HloComputation* body_clone = nullptr;
    HloComputation* cond_clone = nullptr;
    for (HloInstruction* gte : invariant_gtes) {
      const int64_t index = gte->tuple_index();
      const HloInstruction* value = init->operand(index);
      const bool sinkable = value->opcode() == HloOpcode::kConstant ||
                            (options_.sink_broadcast_of_constants && value->opcode() == HloOpcode::kBroadcast &&
                             value->operand(0)->opcode() == HloOpcode::kConstant);
      if (!sinkable || (options_.sink_only_scalar_constants && !value->shape().IsScalar())) continue;
      // Body: every read but the pass-through.
      if (gte->user_count() > 1) {
        if (body_clone == nullptr) {
          body_clone = CloneSunk(*body, body_map);
          w->set_called_computation(1, body_clone);
        }
        HloInstruction* copy = CloneValue(value, body_clone);
        HloInstruction* cloned_gte = body_map.at(gte);
        HloInstruction* cloned_root = body_map.at(root);
        for (HloInstruction* user : std::vector<HloInstruction*>(cloned_gte->users())) {
          for (int64_t i = 0; i < user->operand_count(); ++i) {
            if (user->operand(i) == cloned_gte && !(user == cloned_root && i == index)) {
              user->ReplaceOperandWith(i, copy);
            }
          }
        }
      }
      // Condition: every read.
      auto it = cond_gtes.find(index);
      if (it == cond_gtes.end()) continue;
      for (HloInstruction* cond_gte : it->second) {
        if (cond_gte->user_count() == 0) continue;
        if (cond_clone == nullptr) {
          cond_clone = CloneSunk(*cond, cond_map);
          w->set_called_computation(0, cond_clone);
        }
        HloInstruction* copy = CloneValue(value, cond_clone);
        HloInstruction* cloned = cond_map.at(cond_gte);
        RETURN_IF_ERROR(cloned->ReplaceAllUsesWith(copy));
        RETURN_IF_ERROR(cond_clone->RemoveInstruction(cloned));
      }
    }
    return body_clone != nullptr || cond_clone != nullptr;
  };

  // Outermost loops first (a stack walk from the entry), so that constants
  // sunk into an outer body reach the loops inside it.
  bool changed = false;
  std::vector<HloComputation*> agenda = {module.entry_computation()};
  absl::flat_hash_set<HloComputation*> visited;
  while (!agenda.empty()) {
    HloComputation* c = agenda.back();
    agenda.pop_back();
    if (!visited.insert(c).second) continue;
    for (HloInstruction* inst : c->instructions()) {
      if (inst->opcode() == HloOpcode::kWhile) {
        ASSIGN_OR_RETURN(bool sunk, try_sink(inst));
        if (sunk) {
          BumpCounter("sank loop-invariant constants");
          changed = true;
        }
      }
      for (HloComputation* child : inst->called_computations()) agenda.push_back(child);
    }
  }
  if (changed) module.RemoveUnusedComputations();
  return changed;
}

}  // namespace passlab
