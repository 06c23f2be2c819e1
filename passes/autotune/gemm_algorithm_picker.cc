#include "passes/autotune/gemm_algorithm_picker.h"

namespace passlab {

absl::StatusOr<bool> GemmAlgorithmPicker::RunImpl(HloModule& module, PassRunContext*) {
  return PickLibraryCallAlgorithms(module, options_, LibraryCallFamily::kGemms, *this);
}

}  // namespace passlab
