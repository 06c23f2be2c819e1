#include "passes/prepare/schedule_util.h"

#include "core/ir/str_util.h"

namespace passlab {

absl::StatusOr<bool> ApplySequence(HloComputation& computation, const std::vector<HloInstruction*>& sequence,
                                   HloPassInterface& pass) {
  if (sequence == computation.instructions()) return false;
  if (absl::Status s = computation.SetInstructionSequence(sequence); !s.ok()) {
    return absl::InternalError(StrCat(pass.name(), ": ", s.message()));
  }
  pass.BumpCounter("computations reordered");
  return true;
}

bool MarkModuleScheduled(HloModule& module) {
  if (module.is_scheduled()) return false;
  module.set_is_scheduled(true);
  // A scheduled module's post order is its sequence (HloComputation).
  for (HloComputation* c : module.computations()) c->InvalidatePostOrder();
  return true;
}

}  // namespace passlab
