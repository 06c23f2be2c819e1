// The rewrite API passes edit IR through (after XLA's DfsHloRewriteVisitor):
// one Handle<Opcode> per opcode, generated from the opcode X-macro, visited in
// post order; edits go through ReplaceInstruction / ReplaceWithNewInstruction
// / RemoveIfDead / MarkChanged, which also record that the module changed.
#ifndef PASSLAB_CORE_PASS_HLO_REWRITE_VISITOR_H_
#define PASSLAB_CORE_PASS_HLO_REWRITE_VISITOR_H_

#include <memory>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab {

class HloRewriteVisitor {
 public:
  virtual ~HloRewriteVisitor() = default;

#define PASSLAB_DECLARE_HANDLER(e, camel, name, arity) \
  virtual absl::Status Handle##camel(HloInstruction* inst) { return DefaultAction(inst); }
  PASSLAB_HLO_OPCODES(PASSLAB_DECLARE_HANDLER)
#undef PASSLAB_DECLARE_HANDLER

  virtual absl::Status DefaultAction(HloInstruction* inst) { return absl::OkStatus(); }

  // Visits every instruction of the computation in post order; true if any
  // handler edited it.
  absl::StatusOr<bool> RunOnComputation(HloComputation& computation);
  // Every non-fusion computation (fusion bodies too when `include_fusions`).
  absl::StatusOr<bool> RunOnModule(HloModule& module, bool include_fusions = false);

  bool changed() const { return changed_; }

 protected:
  // Replaces all uses of `old` by `replacement` and removes `old` (and
  // operands left dead). Shapes must be compatible.
  absl::Status ReplaceInstruction(HloInstruction* old, HloInstruction* replacement);
  // Adds `replacement` to old's computation first; keeps old's metadata.
  absl::Status ReplaceWithNewInstruction(HloInstruction* old,
                                         std::unique_ptr<HloInstruction> replacement);
  // Adds an instruction next to `anchor` (same computation).
  HloInstruction* AddInstruction(HloInstruction* anchor, std::unique_ptr<HloInstruction> inst);
  // Removes `inst` if nothing uses it and it has no side effect.
  absl::StatusOr<bool> RemoveIfDead(HloInstruction* inst);
  // Records an in-place edit (attributes, operands) made directly.
  void MarkChanged() { changed_ = true; }

 private:
  absl::Status Dispatch(HloInstruction* inst);
  bool changed_ = false;
  absl::flat_hash_set<const HloInstruction*> removed_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_HLO_REWRITE_VISITOR_H_
