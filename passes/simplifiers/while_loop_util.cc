#include "passes/simplifiers/while_loop_util.h"

namespace passlab {

int64_t CountCallers(const HloModule& module, const HloComputation* computation) {
  int64_t n = 0;
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](const HloInstruction* inst) {
      for (const HloComputation* callee : inst->called_computations()) n += callee == computation;
    });
  }
  return n;
}

bool ComputationHasSideEffects(const HloComputation* c) {
  bool found = false;
  c->ForEachInstruction([&](const HloInstruction* i) {
    if (found) return;
    if (i->HasSideEffect()) {
      found = true;
      return;
    }
    for (const HloComputation* callee : i->called_computations()) {
      if (ComputationHasSideEffects(callee)) found = true;
    }
  });
  return found;
}

HloInstruction* TupleElement(HloComputation* c, HloInstruction* value, int64_t k) {
  if (value->opcode() == HloOpcode::kTuple) return value->mutable_operand(k);
  return c->AddInstruction(HloInstruction::CreateGetTupleElement(value, k));
}

int64_t LoopStateIndex(const HloInstruction* inst, const HloComputation* c) {
  if (inst->opcode() != HloOpcode::kGetTupleElement || c->num_parameters() != 1 ||
      inst->operand(0) != c->parameter_instruction(0)) {
    return -1;
  }
  return inst->tuple_index();
}

namespace {

bool ParameterUsedOnlyByGtes(const HloComputation* c) {
  if (c->num_parameters() != 1) return false;
  for (const HloInstruction* user : c->parameter_instruction(0)->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
  }
  return true;
}

}  // namespace

bool IsRewritableWhile(const HloInstruction* w) {
  if (w->opcode() != HloOpcode::kWhile || !w->shape().IsTuple()) return false;
  if (!w->control_predecessors().empty() || !w->control_successors().empty()) return false;
  const HloComputation* body = w->while_body();
  const HloComputation* cond = w->while_condition();
  if (body == cond) return false;
  const HloModule* module = w->GetModule();
  if (module == nullptr || CountCallers(*module, body) != 1 || CountCallers(*module, cond) != 1) {
    return false;
  }
  if (body->root_instruction()->opcode() != HloOpcode::kTuple) return false;
  if (!ParameterUsedOnlyByGtes(body) || !ParameterUsedOnlyByGtes(cond)) return false;
  return !ComputationHasSideEffects(body) && !ComputationHasSideEffects(cond);
}

}  // namespace passlab
