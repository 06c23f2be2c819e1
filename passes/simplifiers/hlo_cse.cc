#include "passes/simplifiers/hlo_cse.h"

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// A cheap hash over what IdenticalSlowPath compares first; collisions are
// resolved by the full comparison.
size_t InstructionHash(const HloInstruction* inst) {
  size_t h = absl::HashOf(static_cast<int>(inst->opcode()), inst->shape().ToString(),
                          inst->operand_count(), inst->dimensions(), inst->index());
  for (const HloInstruction* op : inst->operands()) h = absl::HashOf(h, op);
  for (const HloComputation* c : inst->called_computations()) h = absl::HashOf(h, c);
  if (inst->has_literal()) h = absl::HashOf(h, inst->literal().ToString());
  return h;
}

bool Mergeable(const HloInstruction* inst, bool ignore_control) {
  if (inst->HasSideEffect() || inst->opcode() == HloOpcode::kParameter) return false;
  // Distinct rng draws and async chains must stay distinct.
  switch (inst->opcode()) {
    case HloOpcode::kRng: case HloOpcode::kRngBitGenerator:
    case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyStart: case HloOpcode::kCopyDone:
    case HloOpcode::kAfterAll: case HloOpcode::kDomain:
      return false;
    default:
      break;
  }
  if (!ignore_control && (!inst->control_predecessors().empty() || !inst->control_successors().empty())) {
    return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> HloCSE::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (options_.only_fusion_computations && !c->IsFusionComputation()) continue;
    absl::flat_hash_map<size_t, std::vector<HloInstruction*>> seen;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (!Mergeable(inst, options_.ignore_control_dependencies)) continue;
      std::vector<HloInstruction*>& bucket = seen[InstructionHash(inst)];
      HloInstruction* equal = nullptr;
      for (HloInstruction* candidate : bucket) {
        if (candidate->operands() == inst->operands() && candidate->IdenticalSlowPath(*inst)) {
          equal = candidate;
          break;
        }
      }
      if (equal == nullptr) {
        bucket.push_back(inst);
        continue;
      }
      BumpCounter(StrCat("merged ", HloOpcodeString(inst->opcode())));
      if (absl::Status s = c->ReplaceInstruction(inst, equal); !s.ok()) return s;
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
