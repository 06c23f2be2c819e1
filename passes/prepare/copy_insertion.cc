#include "passes/prepare/copy_insertion.h"

#include <algorithm>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/fusion/gpu_fusible.h"

namespace passlab {
namespace {

bool IsConstantOrParameter(const HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kConstant || inst->opcode() == HloOpcode::kParameter;
}

// Element -1 stands for an array root (output index {}).
bool IsEntryParameterAliasedToOutput(const HloInstruction* inst, int64_t output_element) {
  const HloComputation* c = inst->parent();
  if (inst->opcode() != HloOpcode::kParameter || !c->IsEntryComputation()) return false;
  for (const InputOutputAlias& a : c->parent()->config().input_output_alias) {
    if (a.parameter_number == inst->parameter_number() && a.parameter_index.empty() &&
        a.output_index == (output_element < 0 ? ShapeIndex{} : ShapeIndex{output_element})) {
      return true;
    }
  }
  return false;
}

HloInstruction* AddCopy(HloInstruction* value) {
  return value->parent()->AddInstruction(HloInstruction::CreateUnary(value->shape(), HloOpcode::kCopy, value));
}

// `value` (a tuple-shaped operand or root) as a kTuple instruction of its
// elements: itself when it already is one, else tuple(gte(value, i)...).
HloInstruction* AsTupleInstruction(HloInstruction* value) {
  if (value->opcode() == HloOpcode::kTuple) return value;
  HloComputation* c = value->parent();
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < value->shape().tuple_shapes_size(); ++i) {
    elements.push_back(c->AddInstruction(HloInstruction::CreateGetTupleElement(value, i)));
  }
  return c->AddInstruction(HloInstruction::CreateTuple(elements));
}

// A new tuple with element i of `tuple` (a kTuple) copied where
// `needs_copy(element, i, earlier elements)` says so; `tuple` itself when
// nothing needs a copy.
template <typename Pred>
HloInstruction* CopyElements(HloInstruction* tuple, Pred needs_copy, bool* changed) {
  std::vector<HloInstruction*> elements(tuple->operands().begin(), tuple->operands().end());
  bool any = false;
  for (size_t i = 0; i < elements.size(); ++i) {
    if (!elements[i]->shape().IsArray()) continue;
    std::vector<HloInstruction*> earlier(elements.begin(), elements.begin() + i);
    if (!needs_copy(elements[i], static_cast<int64_t>(i), earlier)) continue;
    elements[i] = AddCopy(elements[i]);
    any = true;
  }
  if (!any) return tuple;
  *changed = true;
  return tuple->parent()->AddInstruction(HloInstruction::CreateTuple(elements));
}

bool Repeats(const HloInstruction* element, const std::vector<HloInstruction*>& earlier) {
  return std::find(earlier.begin(), earlier.end(), element) != earlier.end();
}

// The index k when `element` is get-tuple-element(parameter 0, k).
int64_t ParameterElementIndex(const HloInstruction* element) {
  if (element->opcode() != HloOpcode::kGetTupleElement) return -1;
  const HloInstruction* t = element->operand(0);
  return t->opcode() == HloOpcode::kParameter ? element->tuple_index() : -1;
}

absl::StatusOr<bool> CopyWhileInit(HloInstruction* loop) {
  HloInstruction* init = loop->mutable_operand(0);
  if (!init->shape().IsTuple()) return false;
  bool changed = false;
  HloInstruction* tuple = AsTupleInstruction(init);
  // Elements of a non-tuple init alias buffers of whatever produced it
  // (a parameter, another loop): all are copied.
  bool rebuilt = tuple != init;
  HloInstruction* copied = CopyElements(
      tuple,
      [&](HloInstruction* e, int64_t, const std::vector<HloInstruction*>& earlier) {
        int64_t other_users = 0;
        for (const HloInstruction* u : e->users()) other_users += u != tuple ? 1 : 0;
        return rebuilt || IsConstantOrParameter(e) || other_users > 0 || Repeats(e, earlier);
      },
      &changed);
  if (!changed) {
    if (tuple != init && tuple->user_count() == 0) {
      // Nothing to copy: drop the tuple(gte...) rebuilt for inspection.
      std::vector<HloInstruction*> gtes(tuple->operands().begin(), tuple->operands().end());
      RETURN_IF_ERROR(tuple->parent()->RemoveInstruction(tuple));
      for (HloInstruction* g : gtes) {
        RETURN_IF_ERROR(g->parent()->RemoveInstruction(g));
      }
    }
    return false;
  }
  loop->ReplaceOperandWith(0, copied);
  for (HloInstruction* dead : {tuple, init}) {
    if (dead->user_count() > 0 || dead->opcode() != HloOpcode::kTuple || dead->IsRoot()) continue;
    RETURN_IF_ERROR(dead->parent()->RemoveInstruction(dead));
    if (dead == init) break;
  }
  return true;
}

// Copies root elements of `c` where `needs_copy` says so and makes the new
// tuple the root.
template <typename Pred>
absl::StatusOr<bool> CopyRootElements(HloComputation* c, Pred needs_copy) {
  HloInstruction* root = c->root_instruction();
  if (!root->shape().IsTuple()) {
    if (!root->shape().IsArray() || !needs_copy(root, -1, {})) return false;
    c->set_root_instruction(AddCopy(root));
    return true;
  }
  if (root->opcode() != HloOpcode::kTuple) return false;  // left to the runtime's copy-out
  bool changed = false;
  HloInstruction* copied = CopyElements(root, needs_copy, &changed);
  if (!changed) return false;
  c->set_root_instruction(copied);
  if (root->user_count() == 0) {
    RETURN_IF_ERROR(c->RemoveInstruction(root));
  }
  return true;
}

// XLA's copies for in-place operations (copy_insertion.cc,
// AddCopiesForInPlaceOperation, then RemoveUnnecessaryCopies): a scatter or
// dynamic-update-slice writes its result into its operand's buffer, so that
// operand gets a copy unless the in-place op is its last reader. Kept here:
// the copies whose operand is a constant, an entry parameter that is not
// donated, the computation's root, another operand of the same op, or read
// by another instruction that does not come before the op (the op is not
// among that reader's users, transitively). The ResNet steps meet it at the
// max-pool gradient: the scatter's zero operand is also ReLU's zero, made an
// output of the stem's batch-norm fusion by multi-output fusion (as XLA's
// producer-consumer multi-output fusion would) and read again after the
// scatter. With the copy the CUDA runtime runs the scatter in place over a
// whole grid; without it one block copied the operand and then added every
// update (0.26 ms of the H200 step).
absl::StatusOr<bool> CopyInPlaceOperand(HloInstruction* inst) {
  int64_t k = -1;
  if (inst->opcode() == HloOpcode::kDynamicUpdateSlice) k = 0;
  if (inst->opcode() == HloOpcode::kScatter && inst->operand_count() == 3) k = 0;
  if (k < 0) return false;
  HloInstruction* operand = inst->mutable_operand(k);
  if (!operand->shape().IsArray()) return false;
  HloComputation* c = inst->parent();
  bool needs_copy = operand->opcode() == HloOpcode::kConstant || operand == c->root_instruction();
  // An entry parameter is the caller's unless input_output_alias donates it.
  if (operand->opcode() == HloOpcode::kParameter && c->IsEntryComputation()) {
    bool donated = false;
    for (const InputOutputAlias& a : c->parent()->config().input_output_alias) {
      donated |= a.parameter_number == operand->parameter_number();
    }
    needs_copy |= !donated;
  }
  // The op reads the same value through another operand (XLA's
  // ScatterSharedOperand).
  for (int64_t i = 0; i < inst->operand_count(); ++i) needs_copy |= i != k && inst->operand(i) == operand;
  // Another reader runs before `inst` only when `inst` depends on it.
  for (const HloInstruction* user : operand->users()) {
    if (needs_copy) break;
    needs_copy = user != inst && !IsReachable(user, inst);
  }
  if (!needs_copy) return false;
  inst->ReplaceOperandWith(k, AddCopy(operand));
  return true;
}

}  // namespace

absl::StatusOr<bool> CopyInsertion::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      ASSIGN_OR_RETURN(bool in_place, CopyInPlaceOperand(inst));
      if (in_place) BumpCounter(StrCat(HloOpcodeString(inst->opcode()), " operand copied (in place)"));
      changed |= in_place;
      if (inst->opcode() == HloOpcode::kWhile) {
        ASSIGN_OR_RETURN(bool init, CopyWhileInit(inst));
        // Each state element written into its own state buffer.
        ASSIGN_OR_RETURN(bool body, CopyRootElements(
            inst->while_body(), [](HloInstruction* e, int64_t i, const std::vector<HloInstruction*>& earlier) {
              int64_t k = ParameterElementIndex(e);
              return e->opcode() == HloOpcode::kConstant || (k >= 0 && k != i) || Repeats(e, earlier);
            }));
        changed |= init || body;
      }
      if (inst->opcode() == HloOpcode::kConditional) {
        for (HloComputation* branch : inst->called_computations()) {
          ASSIGN_OR_RETURN(bool b, CopyRootElements(
              branch, [](HloInstruction* e, int64_t, const std::vector<HloInstruction*>& earlier) {
                return IsConstantOrParameter(e) || Repeats(e, earlier);
              }));
          changed |= b;
        }
      }
    }
  }
  ASSIGN_OR_RETURN(bool entry, CopyRootElements(
      module.entry_computation(), [](HloInstruction* e, int64_t i, const std::vector<HloInstruction*>& earlier) {
        return (IsConstantOrParameter(e) && !IsEntryParameterAliasedToOutput(e, i)) || Repeats(e, earlier);
      }));
  return changed || entry;
}

}  // namespace passlab
