#include "passes/fusion/copy_fusion.h"

#include <algorithm>
#include <deque>

#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "passes/fusion/gpu_fusible.h"
#include "passes/gpu/reduction_utils.h"

namespace passlab {
namespace {

// XLA's kMaxUnnestedReductionOutputsPerFusion.
constexpr int64_t kMaxUnnestedReductionOutputsPerFusion = 38;

// XLA's HloInstruction::IsElementwiseOnOperand for ops inside a fusion.
bool IsElementwiseOnOperand(const HloInstruction* user, int64_t operand_index) {
  if (user->opcode() == HloOpcode::kDynamicUpdateSlice) return operand_index == 0;
  if (user->opcode() == HloOpcode::kBitcastConvert &&
      PrimitiveBitWidth(user->shape().element_type()) !=
          PrimitiveBitWidth(user->operand(0)->shape().element_type())) {
    return false;
  }
  return user->IsElementwise();
}

int64_t OperandIndex(const HloInstruction* user, const HloInstruction* operand) {
  const std::vector<HloInstruction*>& operands = user->operands();
  return std::find(operands.begin(), operands.end(), operand) - operands.begin();
}

// Every instruction reached from the fused parameters is elementwise in
// that operand (copies excluded), a bitcast or a tuple.
bool OnlyElementwiseOpsReachableFromParams(const HloComputation* fused) {
  std::deque<const HloInstruction*> queue;
  absl::flat_hash_set<const HloInstruction*> visited;
  for (const HloInstruction* p : fused->parameter_instructions()) {
    queue.push_back(p);
    visited.insert(p);
  }
  while (!queue.empty()) {
    const HloInstruction* h = queue.front();
    queue.pop_front();
    for (const HloInstruction* user : h->users()) {
      bool passes_through = user->opcode() == HloOpcode::kBitcast || user->opcode() == HloOpcode::kTuple;
      if (!passes_through && (!IsElementwiseOnOperand(user, OperandIndex(user, h)) ||
                              user->opcode() == HloOpcode::kCopy)) {
        return false;
      }
      if (visited.insert(user).second) queue.push_back(user);
    }
  }
  return true;
}

int64_t SubshapeCount(const Shape& shape) {
  int64_t n = 0;
  ForEachSubshape(shape, [&](const Shape&, const ShapeIndex&) { ++n; });
  return n;
}

// Row/column reductions among a fusion's outputs (XLA's
// NumUnnestedReductions).
int64_t NumUnnestedReductions(const HloInstruction& fusion) {
  const HloInstruction* root = fusion.fused_expression_root();
  if (root->opcode() != HloOpcode::kTuple) return IsReductionFromOrToContiguousDimensions(*root) ? 1 : 0;
  int64_t n = 0;
  for (const HloInstruction* leaf : root->operands()) n += IsReductionFromOrToContiguousDimensions(*leaf) ? 1 : 0;
  return n;
}

// XLA's FusionFitsInBudget(fusion, copy) for a fusion that is not
// producer/consumer: few enough row/column reductions, and operands plus
// output buffers within the kernel argument limit (first the cheap bound,
// then the exact count of distinct operands).
bool FusionFitsInBudget(const HloInstruction& fusion, const HloInstruction& copy) {
  if (NumUnnestedReductions(fusion) > kMaxUnnestedReductionOutputsPerFusion) return false;
  int64_t outputs = SubshapeCount(fusion.shape()) + SubshapeCount(copy.shape());
  if (fusion.operand_count() + copy.operand_count() - 1 + outputs <= kMaxOperandsAndOutputsPerFusion) return true;
  absl::flat_hash_set<const HloInstruction*> operands(fusion.operands().begin(), fusion.operands().end());
  operands.insert(copy.operands().begin(), copy.operands().end());
  operands.erase(&fusion);
  operands.erase(&copy);
  return static_cast<int64_t>(operands.size()) + outputs <= kMaxOperandsAndOutputsPerFusion;
}

bool IsPlainCopy(const HloInstruction* h) {
  return h->opcode() == HloOpcode::kCopy && h->shape() == h->operand(0)->shape() && !h->shape().IsTuple() &&
         h->control_predecessors().empty() && h->control_successors().empty();
}

// Outputs the emitter may write in place: dynamic-update-slices, seen
// through bitcasts.
int64_t NumDynamicUpdateSliceOutputs(const HloInstruction* root) {
  std::vector<const HloInstruction*> outputs;
  if (root->opcode() == HloOpcode::kTuple) {
    outputs.assign(root->operands().begin(), root->operands().end());
  } else {
    outputs.push_back(root);
  }
  int64_t n = 0;
  for (const HloInstruction* o : outputs) {
    while (o->opcode() == HloOpcode::kBitcast) o = o->operand(0);
    n += o->opcode() == HloOpcode::kDynamicUpdateSlice ? 1 : 0;
  }
  return n;
}

// Whether `fusion` may take copies of its outputs in at all.
bool IsCandidateFusion(const HloInstruction* fusion) {
  if (fusion->opcode() != HloOpcode::kFusion || fusion->fusion_kind() == FusionKind::kCustom) return false;
  const HloComputation* fused = fusion->fused_instructions_computation();
  if (!OnlyElementwiseOpsReachableFromParams(fused)) return false;
  const HloInstruction* root = fused->root_instruction();
  if (IsReductionFromOrToContiguousDimensions(*root) || root->opcode() == HloOpcode::kScatter) return false;
  if (root->opcode() == HloOpcode::kTuple &&
      std::all_of(root->operands().begin(), root->operands().end(),
                  [](const HloInstruction* o) { return o->opcode() == HloOpcode::kSlice; })) {
    return false;
  }
  return true;
}

// f = fusion(...); c = copy([bitcast]([gte](f)))
//   => root' = tuple(outputs..., copy([bitcast](output))); c => gte(f, n)
absl::StatusOr<bool> FuseCopies(HloComputation* computation, HloInstruction* fusion) {
  HloComputation* fused = fusion->fused_instructions_computation();
  HloInstruction* root = fused->root_instruction();
  const bool multi_output = root->opcode() == HloOpcode::kTuple;

  std::vector<HloInstruction*> copies, other_users;
  const std::vector<HloInstruction*> users = fusion->users();
  for (HloInstruction* user : users) {
    HloInstruction* copy = user;
    if (user->opcode() == HloOpcode::kGetTupleElement && user->user_count() == 1) {
      // A row/column reduction output is left to the reduction emitter.
      if (!multi_output || IsReductionFromOrToContiguousDimensions(*root->operand(user->tuple_index()))) {
        other_users.push_back(user);
        continue;
      }
      copy = user->users()[0];
    }
    if (copy->opcode() == HloOpcode::kBitcast && copy->user_count() == 1) copy = copy->users()[0];
    if (IsPlainCopy(copy) && FusionFitsInBudget(*fusion, *copy)) {
      copies.push_back(copy);
    } else {
      other_users.push_back(user);
    }
  }
  if (copies.empty()) return false;
  // Dynamic-update-slice outputs may be emitted in place; leave those.
  const int64_t dus_outputs = NumDynamicUpdateSliceOutputs(root);
  if (dus_outputs > 0 && (!multi_output || dus_outputs == root->shape().tuple_shapes_size())) return false;
  const int64_t num_outputs = multi_output ? root->operand_count() : 1;
  if (num_outputs + static_cast<int64_t>(copies.size()) > kMaxOperandsAndOutputsPerFusion) return false;

  std::vector<HloInstruction*> elements;
  if (multi_output) {
    elements = root->operands();
  } else {
    elements.push_back(root);
  }
  for (HloInstruction* copy : copies) {
    // The chain copy <- [bitcast] <- [gte] back to the fusion, cloned
    // inside onto the output it reads.
    std::vector<HloInstruction*> chain{copy};
    HloInstruction* h = copy;
    while (h->operand(0) != fusion) {
      h = h->mutable_operand(0);
      chain.push_back(h);
    }
    HloInstruction* value = root;
    if (multi_output) {
      value = root->mutable_operand(h->tuple_index());
      chain.pop_back();
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      value = fused->AddInstruction((*it)->CloneWithNewOperands((*it)->shape(), {value}));
    }
    elements.push_back(value);
  }
  HloInstruction* new_root = fused->AddInstruction(HloInstruction::CreateTuple(elements));
  fused->set_root_instruction(new_root);
  *fusion->mutable_shape() = new_root->shape();
  if (fusion->has_sharding()) fusion->clear_sharding();

  if (multi_output) {
    RETURN_IF_ERROR(fused->RemoveInstruction(root));
  } else if (!other_users.empty() || fusion->IsRoot()) {
    // The old value, for the other users (and the root).
    HloInstruction* gte = computation->AddInstruction(HloInstruction::CreateGetTupleElement(fusion, 0));
    RETURN_IF_ERROR(fusion->ReplaceUsesWith(other_users, gte));
  }
  for (size_t i = 0; i < copies.size(); ++i) {
    HloInstruction* gte = computation->AddInstruction(
        HloInstruction::CreateGetTupleElement(fusion, num_outputs + static_cast<int64_t>(i)));
    RETURN_IF_ERROR(computation->ReplaceInstruction(copies[i], gte));
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> CopyFusion::RunImpl(HloModule& module, PassRunContext*) {
  // Only the entry: elsewhere a copy may be what keeps a loop's state out
  // of a buffer the fusion shares with it.
  HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return false;
  // Collected first: fusing removes copies (and bitcasts, get-tuple-elements)
  // later in the order, but never a fusion.
  std::vector<HloInstruction*> candidates;
  for (HloInstruction* h : entry->MakeInstructionPostOrder()) {
    if (IsCandidateFusion(h)) candidates.push_back(h);
  }
  bool changed = false;
  for (HloInstruction* h : candidates) {
    ASSIGN_OR_RETURN(bool fused, FuseCopies(entry, h));
    if (fused) BumpCounter("fusions that took in copies");
    changed |= fused;
  }
  return changed;
}

}  // namespace passlab
