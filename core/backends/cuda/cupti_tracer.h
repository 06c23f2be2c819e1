// GPU timing through the CUPTI Activity API: concurrent-kernel, memcpy,
// memset, driver/runtime API, external-correlation and overhead records,
// collected in CUPTI's buffers (buffer callbacks) and turned into
// KernelRecords.
//
// Two halves: CuptiTracer talks to CUPTI (needs a driver and a device);
// ConvertCuptiActivities is a pure function over plain structs (no CUPTI
// types), so the conversion rules are tested on synthetic records anywhere:
//  - records with a zero (or inverted) timestamp are dropped and counted;
//  - kernels, memcpys and memsets become KernelRecords (grid/block,
//    registers, static + dynamic shared memory, stream, correlation id),
//    named after the HLO instruction their launch was tagged with;
//  - external correlation records tie a launch (CUPTI's correlation id) to
//    passlab's ids: kRun (one per run/variant) and kOperation (one per thunk);
//  - a run's kernel time is the sum of its kernel durations, and its
//    envelope max(end) - min(start) over its kernels.
#ifndef PASSLAB_CORE_BACKENDS_CUDA_CUPTI_TRACER_H_
#define PASSLAB_CORE_BACKENDS_CUDA_CUPTI_TRACER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/runtime/kernel_record.h"

namespace passlab {

enum class CuptiActivityKind { kKernel, kMemcpy, kMemset, kDriverApi, kRuntimeApi, kExternalCorrelation, kOverhead };

// Which passlab id an external correlation record carries (CUPTI's
// CUSTOM0 / CUSTOM1 external kinds).
enum class CuptiExternalKind { kRun, kOperation };

enum class CuptiMemcpyKind { kUnknown, kHostToDevice, kDeviceToHost, kDeviceToDevice, kOther };
const char* CuptiMemcpyKindName(CuptiMemcpyKind kind);  // "HtoD", "DtoH", "DtoD", ...

// One CUPTI activity record, the fields passlab reads (CUPTI-independent).
struct CuptiActivity {
  CuptiActivityKind kind = CuptiActivityKind::kKernel;
  std::string name;  // kernel symbol, API function, overhead kind
  uint64_t start_ns = 0, end_ns = 0;  // CUPTI timestamps (cuptiGetTimestamp's clock)
  uint32_t device = 0, stream = 0;
  uint32_t correlation_id = 0;
  // kKernel
  int32_t grid_x = 0, grid_y = 0, grid_z = 0, block_x = 0, block_y = 0, block_z = 0;
  int32_t registers_per_thread = 0, static_shared_bytes = 0, dynamic_shared_bytes = 0;
  // kMemcpy / kMemset
  uint64_t bytes = 0;
  CuptiMemcpyKind memcpy_kind = CuptiMemcpyKind::kUnknown;
  // kExternalCorrelation
  CuptiExternalKind external_kind = CuptiExternalKind::kRun;
  uint64_t external_id = 0;
};

// What the executor knows about an operation id (kOperation).
struct CuptiOperation {
  std::string hlo_instruction;
  std::string hlo_computation;
  KernelKind kind = KernelKind::kEmitted;  // kLibraryCall for cuBLAS/cuDNN kernels
  std::string detail;                      // library target / emitter kind
};

struct CuptiConversionOptions {
  uint64_t origin_ns = 0;  // subtracted from timestamps (the run's start)
  std::map<uint64_t, CuptiOperation> operations;  // by operation id
};

// Kernel time of one run (or of every record when untagged).
struct GpuKernelTime {
  int64_t kernels = 0;
  int64_t sum_ns = 0;       // sum of kernel durations
  int64_t envelope_ns = 0;  // max(end) - min(start) over the kernels
  int64_t memcpy_ns = 0;    // sum of memcpy + memset durations
  int64_t memcpy_bytes = 0;
};

struct CuptiConversion {
  std::vector<KernelRecord> records;  // kernels, memcpys, memsets, by start time
  std::vector<uint64_t> record_runs;  // the run id of each record (0: untagged)
  std::map<uint64_t, GpuKernelTime> runs;  // by run id (0: untagged records)
  GpuKernelTime total;
  int64_t dropped_zero_timestamp = 0;
  int64_t api_records = 0;       // driver + runtime API calls
  int64_t overhead_records = 0;
  int64_t overhead_ns = 0;
};

CuptiConversion ConvertCuptiActivities(absl::Span<const CuptiActivity> activities,
                                       const CuptiConversionOptions& options = {});

// Sum and envelope over the records of kinds that are device kernels
// (emitted kernels and library calls).
GpuKernelTime KernelTimeOf(absl::Span<const KernelRecord> records);

// The process's CUPTI session (CUPTI's activity buffers are per process).
// Not thread-safe: one tracing run at a time.
class CuptiTracer {
 public:
  // Errors when CUPTI cannot start (no driver or device: the message says so).
  static absl::StatusOr<CuptiTracer*> Get();

  // Enables the activity kinds and starts collecting.
  absl::Status Start();
  // Tags the launches of the calling thread until the matching Pop.
  absl::Status PushExternalId(CuptiExternalKind kind, uint64_t id);
  absl::Status PopExternalId(CuptiExternalKind kind);
  // Flushes CUPTI's buffers, disables the kinds and returns what was
  // collected since Start.
  absl::StatusOr<std::vector<CuptiActivity>> Stop();
  // CUPTI's clock now (the origin for ConvertCuptiActivities).
  uint64_t Timestamp() const;
  // Records CUPTI reported as dropped (full buffers) since Start.
  int64_t dropped_records() const;

 private:
  CuptiTracer() = default;
  bool started_ = false;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CUDA_CUPTI_TRACER_H_
