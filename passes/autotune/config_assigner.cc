#include "passes/autotune/config_assigner.h"

namespace passlab {

absl::StatusOr<bool> ConfigAssigner::RunImpl(HloModule& module, PassRunContext*) {
  return PickLibraryCallAlgorithms(module, options_, LibraryCallFamily::kAll, *this);
}

}  // namespace passlab
