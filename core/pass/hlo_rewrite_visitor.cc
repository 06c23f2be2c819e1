#include "core/pass/hlo_rewrite_visitor.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {

absl::Status HloRewriteVisitor::Dispatch(HloInstruction* inst) {
  switch (inst->opcode()) {
#define PASSLAB_DISPATCH(e, camel, name, arity) \
  case HloOpcode::e:                            \
    return Handle##camel(inst);
    PASSLAB_HLO_OPCODES(PASSLAB_DISPATCH)
#undef PASSLAB_DISPATCH
  }
  return absl::InternalError("unknown opcode");
}

absl::StatusOr<bool> HloRewriteVisitor::RunOnComputation(HloComputation& computation) {
  bool changed_before = changed_;
  changed_ = false;
  computation.set_removal_listener([this](const HloInstruction* i) { removed_.insert(i); });
  for (HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    if (removed_.contains(inst)) continue;
    if (absl::Status s = Dispatch(inst); !s.ok()) {
      computation.set_removal_listener(nullptr);
      removed_.clear();
      return absl::Status(s.code(), StrCat("while rewriting '", inst->name(), "' in '",
                                           computation.name(), "': ", s.message()));
    }
  }
  computation.set_removal_listener(nullptr);
  bool changed = changed_;
  changed_ = changed_before || changed;
  removed_.clear();
  return changed;
}

absl::StatusOr<bool> HloRewriteVisitor::RunOnModule(HloModule& module, bool include_fusions) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation() && !include_fusions) continue;
    ASSIGN_OR_RETURN(bool r, RunOnComputation(*c));
    changed |= r;
  }
  return changed;
}

absl::Status HloRewriteVisitor::ReplaceInstruction(HloInstruction* old, HloInstruction* replacement) {
  if (!old->shape().Compatible(replacement->shape())) {
    return absl::InternalError(StrCat("replacing '", old->name(), "' (", old->shape().ToString(),
                                      ") by '", replacement->name(), "' (",
                                      replacement->shape().ToString(), "): incompatible shapes"));
  }
  // Removed instructions reach removed_ through the removal listener.
  RETURN_IF_ERROR(old->parent()->ReplaceInstruction(old, replacement));
  changed_ = true;
  return absl::OkStatus();
}

absl::Status HloRewriteVisitor::ReplaceWithNewInstruction(HloInstruction* old,
                                                          std::unique_ptr<HloInstruction> replacement) {
  if (replacement->metadata().empty()) replacement->set_metadata(old->metadata());
  HloInstruction* added = old->parent()->AddInstruction(std::move(replacement));
  return ReplaceInstruction(old, added);
}

HloInstruction* HloRewriteVisitor::AddInstruction(HloInstruction* anchor,
                                                  std::unique_ptr<HloInstruction> inst) {
  if (inst->metadata().empty()) inst->set_metadata(anchor->metadata());
  changed_ = true;
  return anchor->parent()->AddInstruction(std::move(inst));
}

absl::StatusOr<bool> HloRewriteVisitor::RemoveIfDead(HloInstruction* inst) {
  if (inst->user_count() != 0 || inst->IsRoot() || inst->HasSideEffect() ||
      inst->opcode() == HloOpcode::kParameter || !inst->control_successors().empty()) {
    return false;
  }
  RETURN_IF_ERROR(inst->parent()->RemoveInstruction(inst));
  changed_ = true;
  return true;
}

}  // namespace passlab
