#include "passes/autotune/gpu_conv_algorithm_picker.h"

namespace passlab {

absl::StatusOr<bool> GpuConvAlgorithmPicker::RunImpl(HloModule& module, PassRunContext*) {
  return PickLibraryCallAlgorithms(module, options_, LibraryCallFamily::kConvolutions, *this);
}

}  // namespace passlab
