#include "core/runtime/kernel_record.h"

namespace passlab {

const char* KernelKindName(KernelKind kind) {
  switch (kind) {
    case KernelKind::kEmitted: return "kernel";
    case KernelKind::kLibraryCall: return "library";
    case KernelKind::kCopy: return "copy";
    case KernelKind::kMemset: return "memset";
    case KernelKind::kControlFlow: return "control";
    case KernelKind::kRuntimeRoutine: return "routine";
  }
  return "?";
}

}  // namespace passlab
