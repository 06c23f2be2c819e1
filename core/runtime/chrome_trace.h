// Chrome trace JSON ({"traceEvents": [...]}, complete "X" events, times in
// microseconds) from KernelRecords; loads in Perfetto and chrome://tracing.
#ifndef PASSLAB_CORE_RUNTIME_CHROME_TRACE_H_
#define PASSLAB_CORE_RUNTIME_CHROME_TRACE_H_

#include <string>

#include "absl/types/span.h"
#include "core/runtime/kernel_record.h"

namespace passlab {

// One event per record: name, cat = kind, pid = device, tid = thread, args
// with detail, HLO instruction/computation, bytes and flops. Events are
// sorted by start time (then name), so equal records give equal bytes.
std::string ChromeTraceJson(absl::Span<const KernelRecord> records);

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_CHROME_TRACE_H_
