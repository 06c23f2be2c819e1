#include "core/pass/op_expander_pass.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {

absl::StatusOr<bool> OpExpanderPass::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    std::vector<HloInstruction*> matches;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (InstructionMatchesPattern(inst)) matches.push_back(inst);
    }
    for (HloInstruction* inst : matches) {
      absl::StatusOr<HloInstruction*> expansion = ExpandInstruction(inst);
      if (!expansion.ok()) {
        return absl::Status(expansion.status().code(),
                            StrCat("expanding '", inst->name(), "': ", expansion.status().message()));
      }
      if (*expansion == nullptr || *expansion == inst) continue;
      std::string counter = StrCat("expanded ", HloOpcodeString(inst->opcode()));
      RETURN_IF_ERROR(c->ReplaceInstruction(inst, *expansion));
      BumpCounter(counter);
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
