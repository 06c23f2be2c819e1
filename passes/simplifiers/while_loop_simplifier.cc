#include "passes/simplifiers/while_loop_simplifier.h"

#include "core/ir/hlo_module.h"
#include "passes/simplifiers/call_inliner.h"

namespace passlab {
namespace {

std::optional<int64_t> IntConstant(const HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kConstant || !inst->shape().IsScalar() ||
      !IsIntegralType(inst->shape().element_type())) {
    return std::nullopt;
  }
  return inst->literal().GetInt(0);
}

// gte(parameter 0 of `c`, index) -> index, else -1.
int64_t ParamElement(const HloInstruction* inst, const HloComputation* c) {
  if (inst->opcode() != HloOpcode::kGetTupleElement || inst->operand(0) != c->parameter_instruction(0)) return -1;
  return inst->tuple_index();
}

bool ComputationHasSideEffects(const HloComputation* c) {
  for (const HloInstruction* i : c->instructions()) {
    if (i->HasSideEffect()) return true;
    for (const HloComputation* callee : i->called_computations()) {
      if (ComputationHasSideEffects(callee)) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<int64_t> ComputeWhileTripCount(const HloInstruction& w) {
  const HloComputation* cond = w.while_condition();
  const HloComputation* body = w.while_body();
  const HloInstruction* init = w.operand(0);
  const HloInstruction* cmp = cond->root_instruction();
  if (cmp->opcode() != HloOpcode::kCompare || init->opcode() != HloOpcode::kTuple) return std::nullopt;
  // compare(gte(p, k), N) or compare(N, gte(p, k)).
  int64_t k = ParamElement(cmp->operand(0), cond);
  std::optional<int64_t> bound = IntConstant(cmp->operand(1));
  ComparisonDirection dir = cmp->attrs().comparison_direction;
  if (k < 0 || !bound) {
    k = ParamElement(cmp->operand(1), cond);
    bound = IntConstant(cmp->operand(0));
    // N < i  <=>  i > N, etc.
    switch (dir) {
      case ComparisonDirection::kLt: dir = ComparisonDirection::kGt; break;
      case ComparisonDirection::kLe: dir = ComparisonDirection::kGe; break;
      case ComparisonDirection::kGt: dir = ComparisonDirection::kLt; break;
      case ComparisonDirection::kGe: dir = ComparisonDirection::kLe; break;
      default: break;
    }
  }
  if (k < 0 || !bound || k >= init->operand_count()) return std::nullopt;
  std::optional<int64_t> start = IntConstant(init->operand(k));
  const HloInstruction* root = body->root_instruction();
  if (!start || root->opcode() != HloOpcode::kTuple || k >= root->operand_count()) return std::nullopt;
  const HloInstruction* next = root->operand(k);
  if (next->opcode() != HloOpcode::kAdd) return std::nullopt;
  std::optional<int64_t> step;
  if (ParamElement(next->operand(0), body) == k) step = IntConstant(next->operand(1));
  if (!step && ParamElement(next->operand(1), body) == k) step = IntConstant(next->operand(0));
  if (!step || *step == 0) return std::nullopt;
  // Simulate the (small) counter: exact for every direction and sign, and
  // bounded so a loop that never ends is "unknown".
  int64_t i = *start, n = 0;
  auto holds = [&](int64_t v) {
    switch (dir) {
      case ComparisonDirection::kLt: return v < *bound;
      case ComparisonDirection::kLe: return v <= *bound;
      case ComparisonDirection::kGt: return v > *bound;
      case ComparisonDirection::kGe: return v >= *bound;
      case ComparisonDirection::kNe: return v != *bound;
      case ComparisonDirection::kEq: return v == *bound;
    }
    return false;
  };
  while (holds(i)) {
    if (++n > (1 << 20)) return std::nullopt;
    i += *step;
  }
  return n;
}

absl::StatusOr<bool> WhileLoopSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* w : c->MakeInstructionPostOrder()) {
      if (w->opcode() != HloOpcode::kWhile || !w->control_predecessors().empty() ||
          !w->control_successors().empty()) {
        continue;
      }
      if (ComputationHasSideEffects(w->while_condition()) || ComputationHasSideEffects(w->while_body())) continue;
      std::optional<int64_t> trips = ComputeWhileTripCount(*w);
      if (!trips || *trips > 1) continue;
      if (*trips == 0) {
        // while(init) that never runs => init
        if (absl::Status s = c->ReplaceInstruction(w, w->mutable_operand(0)); !s.ok()) return s;
        BumpCounter("zero-trip loop removed");
      } else {
        // while(init) that runs once => body(init), inlined
        auto call = HloInstruction::CreateCall(w->shape(), {w->mutable_operand(0)}, w->while_body());
        call->set_metadata(w->metadata());
        HloInstruction* added = c->AddInstruction(std::move(call));
        if (absl::Status s = c->ReplaceInstruction(w, added); !s.ok()) return s;
        absl::StatusOr<HloInstruction*> inlined = InlineCall(added);
        if (!inlined.ok()) return inlined.status();
        BumpCounter("one-trip loop inlined");
      }
      changed = true;
    }
  }
  if (changed) module.RemoveUnusedComputations();
  return changed;
}

}  // namespace passlab
