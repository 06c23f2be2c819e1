// backend::Executable: a compiled module on one device, whatever the device
// (the CPU runtime's Executable, the CUDA runtime's CudaExecutable), and the
// one profile loop every front end times programs with.
//
// Kernel time, defined here once for every report (`passlab run`, the GUI's
// Kernels panel, the ablation worker's kernel_ns): the summed durations of a
// step's records that are the program's operations, that is emitted
// kernels, library calls and runtime routines. Not kernel time: copies and
// memsets (copy time, CopyTimeNs), control flow (its records wrap others),
// the CUDA runtime's host<->device transfers (copies), and ops the CUDA
// runtime runs on the host for want of a device implementation (routines
// whose detail starts with "host: "; their time shows in the wall time).
#ifndef PASSLAB_CORE_BACKEND_EXECUTABLE_H_
#define PASSLAB_CORE_BACKEND_EXECUTABLE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/literal.h"
#include "core/backends/cpu/executable.h"
#include "core/runtime/kernel_record.h"
#include "core/runtime/kernel_summary.h"

namespace passlab::backend {

// Whether `record`'s duration is kernel time (see above).
bool IsKernelTime(const KernelRecord& record);
int64_t KernelTimeNs(absl::Span<const KernelRecord> records);
// Copies and memsets (transfers included).
int64_t CopyTimeNs(absl::Span<const KernelRecord> records);

// One timed step.
struct StepTiming {
  int64_t wall_ns = 0;         // host clock; untraced where tracing costs host time
  int64_t traced_wall_ns = 0;  // host clock of the recorded run (== wall_ns when it is the same run)
  int64_t kernel_ns = 0;
  int64_t copy_ns = 0;
  int64_t envelope_ns = 0;     // first kernel-time record's start to the last one's end
  std::vector<KernelRecord> records;
};

// Test and measurement hooks around each Execute of a step.
struct StepHooks {
  std::function<void()> before;                                 // before the clock starts
  std::function<void(std::vector<KernelRecord>* records)> after;  // inside the timed region
};

struct ProfileOptions {
  int warmup = 1;
  int steps = 5;
  // One more, untimed run that returns the output (ProfileResult::result).
  bool want_result = false;
};

struct ProfileResult {
  std::string device;                   // "cpu", "cuda:0 (NVIDIA H100 ...)"
  double compile_ms = 0;                // CompileAndProfile (compiler.h) fills it
  std::vector<KernelRecord> records;    // every timed step
  std::vector<KernelRecord> last_step;  // the last timed step (traces, timelines)
  std::vector<double> wall_ms;          // per step (untraced where tracing costs host time)
  std::vector<double> traced_wall_ms;   // per step: the recorded run's wall time
  std::vector<double> kernel_ms;        // per step: kernel time
  std::vector<double> copy_ms;          // per step: copy time
  std::vector<double> envelope_ms;      // per step: first kernel start to last kernel end
  KernelSummary summary;                // of `records` over the steps
  // Host memory on the CPU; on a device, arena_bytes is the device arena.
  ExecutableMemory memory;
  std::vector<std::string> host_fallbacks;  // ops a device runs on the host
  std::string command_buffer;               // Executable::CommandBufferStatus after the steps
  int64_t tf32_library_calls = 0;           // Executable::Tf32LibraryCalls
  Literal result;                           // with want_result
};

class Executable {
 public:
  virtual ~Executable() = default;

  // Runs once on `args` (one literal per entry parameter) and returns the
  // output.
  virtual absl::StatusOr<Literal> Run(absl::Span<const Literal> args) = 0;
  // Runs once without assembling the output; appends the run's records
  // when given.
  virtual absl::Status Execute(absl::Span<const Literal> args, std::vector<KernelRecord>* records) = 0;

  virtual ExecutableMemory Memory() const = 0;
  virtual std::string DeviceDescription() const = 0;
  // The ops run on the host for want of a device implementation.
  virtual std::vector<std::string> HostFallbacks() const { return {}; }
  // Whether recording a step costs host time that grows with the number of
  // operations (CUPTI pushes and pops a correlation id around each and
  // flushes its buffers after the step; the CPU's records are two clock
  // reads each): then a step's wall time comes from an untraced run of its
  // own, or a program with more operations would look slower by the
  // tracer's cost.
  virtual bool TracingTakesHostTime() const { return false; }
  // The CUDA runtime's command buffer (CudaExecutable::CommandBufferStatus);
  // empty where there is none.
  virtual std::string CommandBufferStatus() const { return {}; }
  // Library calls that compute f32 on TF32 tensor cores (CUDA, XLA's
  // default for DEFAULT/HIGH precision); 0 elsewhere.
  virtual int64_t Tf32LibraryCalls() const { return 0; }
  // Host memory shared with executables that never run at the same time,
  // and where the entry arena's buffers start (the CPU runtime's; see
  // core/backends/cpu/executable.h). No-ops on a device.
  virtual void ShareHostMemory(std::shared_ptr<SharedHostMemory>) {}
  virtual void SetArenaOffset(int64_t) {}

  // One step: an untraced run for the wall time where tracing costs host
  // time, and a recorded run.
  absl::StatusOr<StepTiming> TimedStep(absl::Span<const Literal> args, const StepHooks& hooks = {});
  // Warm-up runs, then `steps` timed steps, then (want_result) one run that
  // returns the output. Errors say "run: ...".
  absl::StatusOr<ProfileResult> Profile(absl::Span<const Literal> args, const ProfileOptions& options);
};

}  // namespace passlab::backend

#endif  // PASSLAB_CORE_BACKEND_EXECUTABLE_H_
