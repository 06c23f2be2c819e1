#include "passes/simplifiers/slice_sinker.h"

#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// `inst` is elementwise and every operand is the same slice of a source of
// the first source's dimensions; returns those sources (empty otherwise).
std::vector<HloInstruction*> SlicedSources(const HloInstruction& inst) {
  if (!inst.IsElementwise() || inst.operand_count() == 0 || inst.HasSideEffect() || !inst.shape().IsArray()) {
    return {};
  }
  std::vector<HloInstruction*> sources;
  const HloInstruction* first = inst.operand(0);
  for (const HloInstruction* op : inst.operands()) {
    if (op->opcode() != HloOpcode::kSlice || op->attrs().slice != first->attrs().slice) return {};
    if (op->operand(0)->shape().dimensions() != first->operand(0)->shape().dimensions()) return {};
    sources.push_back(op->mutable_operand(0));
  }
  return sources;
}

// Same operation on each element: opcode, result type and attributes.
bool SameOperation(const HloInstruction& a, const HloInstruction& b) {
  return a.opcode() == b.opcode() && a.shape().element_type() == b.shape().element_type() && a.attrs() == b.attrs();
}

// The elementwise ops like `inst` that read one slice of `sources` (inst
// included), each once.
std::vector<HloInstruction*> SimilarOps(HloInstruction* inst, const std::vector<HloInstruction*>& sources) {
  std::vector<HloInstruction*> out;
  absl::flat_hash_set<const HloInstruction*> seen;
  for (HloInstruction* slice : sources[0]->users()) {
    if (slice->opcode() != HloOpcode::kSlice) continue;
    for (HloInstruction* user : slice->users()) {
      if (!SameOperation(*user, *inst) || !seen.insert(user).second) continue;
      if (SlicedSources(*user) == sources) out.push_back(user);
    }
  }
  return out;
}

// Sinks the slices below the first group of ops that qualifies; false when
// none does. (The scan restarts after each change: the change removes ops
// later in the post order.)
absl::StatusOr<bool> SinkOneGroup(HloComputation* c, HloPassInterface& pass) {
  for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
    std::vector<HloInstruction*> sources = SlicedSources(*inst);
    if (sources.empty()) continue;
    std::vector<HloInstruction*> similar = SimilarOps(inst, sources);
    int64_t covered = 0;
    for (HloInstruction* op : similar) covered += op->shape().element_count();
    // Only when the op on the whole sources does no more work than the ops
    // on the slices did.
    if (covered < sources[0]->shape().element_count()) continue;
    Shape whole = sources[0]->shape();
    whole.set_element_type(inst->shape().element_type());
    auto sunk_op = inst->CloneWithNewOperands(whole, sources);
    sunk_op->set_metadata(inst->metadata());
    HloInstruction* sunk = c->AddInstruction(std::move(sunk_op));
    for (HloInstruction* op : similar) {
      auto slice = HloInstruction::CreateSlice(op->shape(), sunk, op->operand(0)->attrs().slice);
      if (absl::Status s = c->ReplaceWithNewInstruction(op, std::move(slice)); !s.ok()) {
        return absl::Status(s.code(), StrCat("slice-sinker: ", op->name(), ": ", s.message()));
      }
    }
    pass.BumpCounter("sank slices below elementwise ops", static_cast<int64_t>(similar.size()));
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> SliceSinker::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    while (true) {
      ASSIGN_OR_RETURN(bool sunk, SinkOneGroup(c, *this));
      if (!sunk) break;
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
