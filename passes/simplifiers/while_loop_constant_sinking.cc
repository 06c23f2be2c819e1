#include "passes/simplifiers/while_loop_constant_sinking.h"

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"

namespace passlab {
namespace {

// Replaces reads gte(param, k) in `c` by copies of `constant`.
absl::StatusOr<bool> Sink(HloComputation* c, int64_t k, const HloInstruction* constant) {
  bool changed = false;
  HloInstruction* param = c->parameter_instruction(0);
  for (HloInstruction* user : std::vector<HloInstruction*>(param->users())) {
    if (user->opcode() != HloOpcode::kGetTupleElement || user->tuple_index() != k || user->user_count() == 0) continue;
    // The body's root passes the element through; keep that read.
    std::vector<HloInstruction*> users;
    for (HloInstruction* u : user->users()) {
      if (!(u == c->root_instruction() && u->opcode() == HloOpcode::kTuple)) users.push_back(u);
    }
    if (users.empty()) continue;
    HloInstruction* copy = c->AddInstruction(HloInstruction::CreateConstant(constant->literal()));
    if (absl::Status s = user->ReplaceUsesWith(users, copy); !s.ok()) return s;
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> WhileLoopConstantSinking::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* w : c->instructions()) {
      if (w->opcode() != HloOpcode::kWhile || w->operand(0)->opcode() != HloOpcode::kTuple) continue;
      HloComputation* body = w->while_body();
      HloComputation* cond = w->while_condition();
      const HloInstruction* root = body->root_instruction();
      const HloInstruction* init = w->operand(0);
      if (root->opcode() != HloOpcode::kTuple) continue;
      for (int64_t k = 0; k < init->operand_count(); ++k) {
        const HloInstruction* value = init->operand(k);
        const HloInstruction* out = root->operand(k);
        bool passed_through = out->opcode() == HloOpcode::kGetTupleElement && out->tuple_index() == k &&
                              out->operand(0) == body->parameter_instruction(0);
        if (value->opcode() != HloOpcode::kConstant || !passed_through || value->literal().elided()) continue;
        for (HloComputation* target : {body, cond}) {
          absl::StatusOr<bool> sunk = Sink(target, k, value);
          if (!sunk.ok()) return sunk.status();
          if (*sunk) {
            BumpCounter("sank a loop-invariant constant");
            changed = true;
          }
        }
      }
    }
  }
  return changed;
}

}  // namespace passlab
