#include "core/runtime/kernel_record.h"

#include <ctime>

namespace passlab {

int64_t ProcessCpuTimeNs() {
  timespec t{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return -1;
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

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
