// KernelRecord: one timed unit of work (DESIGN.md): an emitted kernel, a
// library call, a copy or a memset, on the CPU or a GPU. CPU timers and CUPTI
// both produce it; the Chrome trace exporter, reports, the ablation runner and
// the GUI consume it.
#ifndef PASSLAB_CORE_RUNTIME_KERNEL_RECORD_H_
#define PASSLAB_CORE_RUNTIME_KERNEL_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace passlab {

enum class KernelKind { kEmitted, kLibraryCall, kCopy, kMemset, kControlFlow, kRuntimeRoutine };
const char* KernelKindName(KernelKind kind);  // "kernel", "library", "copy", ...

// The detail of a routine the CUDA runtime runs on the host for want of a
// device implementation starts with this ("host: sort", "host: __dnn$...").
inline constexpr std::string_view kHostFallbackPrefix = "host: ";

struct LaunchDims {
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  int64_t block_x = 1, block_y = 1, block_z = 1;
};

struct KernelRecord {
  std::string name;         // fusion / instruction name ("fusion.3", "custom-call.1")
  KernelKind kind = KernelKind::kEmitted;
  std::string detail;       // emitter kind ("loop"), library target, algorithm, ...
  std::string device;       // "cpu", "cuda:0"
  std::string hlo_instruction;  // the HLO instruction it came from
  std::string hlo_computation;  // ... and its computation
  int64_t start_ns = 0;     // monotonic clock, relative to the run's start
  int64_t end_ns = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t flops = 0;        // 0 when unknown
  int64_t thread = 0;       // CPU thread / CUDA stream
  LaunchDims launch;        // GPU only
  int64_t registers = 0;    // GPU only
  int64_t shared_memory_bytes = 0;  // GPU only
  int64_t correlation_id = 0;       // GPU only
  // CPU only: the process's CPU time (all threads) spent while it ran, -1
  // where unknown. Time the scheduler gave other processes (preemption,
  // a busy host) is in duration_ns() but not here.
  int64_t cpu_ns = -1;
  int64_t duration_ns() const { return end_ns - start_ns; }
};

// The process's CPU time so far, all its threads (CLOCK_PROCESS_CPUTIME_ID;
// KernelRecord::cpu_ns is a difference of two), -1 where the clock fails.
int64_t ProcessCpuTimeNs();

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_KERNEL_RECORD_H_
