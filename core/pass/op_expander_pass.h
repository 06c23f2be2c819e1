// OpExpanderPass: the base of passes that replace one kind of instruction by
// an equivalent expansion (BatchNormExpander, ComparisonExpander, ...). A
// subclass says which instructions match and builds the replacement.
#ifndef PASSLAB_CORE_PASS_OP_EXPANDER_PASS_H_
#define PASSLAB_CORE_PASS_OP_EXPANDER_PASS_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class OpExpanderPass : public HloModulePass {
 protected:
  virtual bool InstructionMatchesPattern(HloInstruction* instruction) = 0;
  // Builds the expansion inside instruction->parent() and returns its root;
  // the caller replaces the instruction with it.
  virtual absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* instruction) = 0;

  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_OP_EXPANDER_PASS_H_
