// GPU thunks: the units a CudaExecutable runs in order — the CPU runtime's
// thunk.h for one CUDA device. A DeviceProgram is one computation's thunk
// sequence with its buffer assignment (one device arena) and constants; a
// DeviceFrame holds one execution's arena and parameter buffers. Every thunk
// enqueues its work on GpuRunContext::stream and, while a run records,
// leaves a PendingRecord (CUDA events around it) or runs under its CUPTI
// operation id.
//
// Where the thunks live:
//   cuda_thunk.cc              the base, kernel launches, library calls,
//                              device copies and memsets;
//   cuda_control_flow_thunk.cc while, conditional/call, async start/done;
//   cuda_routine_thunk.cc      fft (cuFFT), cholesky (cuSOLVER),
//                              triangular-solve (cuBLAS) and sort (a
//                              bitonic sort kernel) on the device;
//   cuda_host_thunk.cc         host fallback (device-to-host, a host
//                              routine or library call, host-to-device);
//   cuda_program.cc            DeviceProgram: one thunk per instruction.
//
// Internal to core/runtime's CUDA parts (it includes <cuda.h> through
// cuda_driver.h); the public interface is cuda_executable.h.
#ifndef PASSLAB_CORE_BACKENDS_CUDA_CUDA_THUNK_H_
#define PASSLAB_CORE_BACKENDS_CUDA_CUDA_THUNK_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/codegen/gpu_kernel.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/runtime/buffer_assignment.h"
#include "core/backends/cuda/cuda_driver.h"
#include "core/backends/cuda/cuda_executable.h"
#include "core/backends/cuda/cuda_library_call.h"
#include "core/backends/cuda/cupti_tracer.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/kernel_record.h"

namespace passlab {

class CudaRoutineLibraries;
class DeviceProgram;
class GpuThunk;

// One execution's storage for a DeviceProgram.
struct DeviceFrame {
  CUdeviceptr arena = 0;
  std::vector<std::vector<CUdeviceptr>> parameters;  // per parameter, per leaf
};

// A thunk's record while its events are pending.
struct PendingRecord {
  const GpuThunk* thunk = nullptr;
  std::string name, detail;  // transfers (no thunk)
  KernelKind kind = KernelKind::kCopy;
  int64_t bytes = 0;
  CUevent start = nullptr, end = nullptr;
  int64_t stream = 0;
};

// What every thunk of one run shares.
struct GpuRunContext {
  const CudaDevice* device = nullptr;
  CudaLibraries* libraries = nullptr;
  CUstream compute = nullptr, async = nullptr;
  CUstream stream = nullptr;  // where the current thunk enqueues its work
  CudaTiming timing = CudaTiming::kEvents;
  bool recording = false;
  std::vector<PendingRecord>* pending = nullptr;
  std::function<absl::StatusOr<CUevent>()> new_event;  // from the executable's pool
  CuptiTracer* tracer = nullptr;
  // Async starts (and copy-starts) in flight: the event their work records.
  absl::flat_hash_map<const HloInstruction*, CUevent> in_flight;
  int64_t stream_index() const { return stream == async ? 1 : 0; }
  absl::Status Check(CUresult r, std::string_view call) const { return device->Check(r, call); }
  const CudaDriverApi& api() const { return device->api(); }
};

class GpuThunk {
 public:
  explicit GpuThunk(const HloInstruction& inst) : instruction_(inst) {}
  virtual ~GpuThunk() = default;
  virtual KernelKind kind() const = 0;
  virtual std::string detail() const = 0;
  virtual absl::Status Run(const DeviceProgram& program, DeviceFrame& frame, GpuRunContext& ctx) = 0;
  virtual std::vector<const DeviceProgram*> nested() const { return {}; }
  // Why this thunk needs the host in the middle of a step (it reads a
  // device value back, or runs on the host), or "" when all its work is
  // enqueued on streams: then it can be captured into a CUDA graph.
  virtual std::string HostDependency() const { return ""; }
  // A library call that computes f32 on TF32 tensor cores.
  virtual bool UsesTf32() const { return false; }
  virtual int64_t flops() const { return 0; }
  virtual LaunchDims launch() const { return {}; }
  virtual int64_t registers() const { return 0; }
  virtual int64_t shared_memory_bytes() const { return 0; }
  int64_t bytes_read() const;
  int64_t bytes_written() const { return LeafBufferBytes(instruction_.shape()); }
  const HloInstruction& instruction() const { return instruction_; }
  int64_t operation_id = 0;  // CUPTI's external id for this thunk (kOperation)

  // Run with timing: events around the work (kEvents) or the thunk's
  // operation id pushed for CUPTI (kCupti).
  absl::Status Execute(const DeviceProgram& program, DeviceFrame& frame, GpuRunContext& ctx);
  // The record's fields this thunk knows (all but the times and stream).
  void FillRecord(const CudaDevice& device, KernelRecord& r) const;

 protected:
  // Operand leaf-0 pointers, then the result leaves (compiled_kernel.h).
  std::vector<CUdeviceptr> Buffers(const DeviceProgram& program, const DeviceFrame& frame) const;
  const HloInstruction& instruction_;
};

// What building DevicePrograms needs from their executable, and what it
// records there: the CUPTI operation of every thunk (by operation id).
struct DeviceProgramContext {
  const CudaDevice* device = nullptr;
  CudaLibraries* libraries = nullptr;
  GpuKernelProvider kernels;  // may be empty: every kernel op runs on the host
  bool host_fallback = true;
  HostKernelProvider host_kernels;  // may be empty (CudaExecutableOptions::host_kernels)
  std::shared_ptr<CudaRoutineLibraries> routines;  // made on first use (cuda_routine_thunk.cc)
  int64_t next_operation_id = 1;
  std::map<uint64_t, CuptiOperation> operations;
};

class DeviceProgram {
 public:
  // Assigns buffers (one device arena) and chooses a thunk per instruction
  // of `computation` (and, recursively, of the computations it calls).
  static absl::StatusOr<std::unique_ptr<DeviceProgram>> Build(const HloComputation& computation,
                                                              BufferAssignmentOptions options,
                                                              DeviceProgramContext& ctx);
  // Runs the thunks in order on `frame`.
  absl::Status Execute(DeviceFrame& frame, GpuRunContext& ctx) const;
  // Runs on this program's own arena (nested programs).
  absl::Status ExecuteWithParameters(std::vector<std::vector<CUdeviceptr>> parameters, GpuRunContext& ctx,
                                     DeviceFrame** frame_out) const;
  // The frame ExecuteWithParameters would run on, without running (a step
  // replayed as a CUDA graph writes the same buffers).
  DeviceFrame* OwnFrame(std::vector<std::vector<CUdeviceptr>> parameters) const;
  // The first thunk (nested programs included) that needs the host in the
  // middle of a step, as GpuThunk::HostDependency says, or "".
  std::string HostDependency() const;
  // Every thunk in order, each one's nested programs right after it.
  void ForEachThunk(const std::function<void(const GpuThunk&)>& visit) const;
  CUdeviceptr Resolve(const BufferSlice& slice, const DeviceFrame& frame) const;
  std::vector<CUdeviceptr> LeafPointers(const HloInstruction* inst, const DeviceFrame& frame) const;
  const HloComputation& computation() const { return computation_; }
  const BufferAssignment& assignment() const { return *assignment_; }
  const std::vector<std::unique_ptr<GpuThunk>>& thunks() const { return thunks_; }
  // "kernel fusion.1 (loop)", "library custom-call.2 (...)", nested programs indented.
  std::string ToString(int indent = 0) const;

 private:
  explicit DeviceProgram(const HloComputation& c) : computation_(c) {}
  absl::Status AddThunkFor(const HloInstruction& inst, DeviceProgramContext& ctx);
  absl::Status AddHostThunk(const HloInstruction& inst, const DeviceProgramContext& ctx, std::string_view why);
  absl::Status AddConstant(const HloInstruction& inst, const CudaDevice& device);

  const HloComputation& computation_;
  std::unique_ptr<BufferAssignment> assignment_;
  std::vector<std::unique_ptr<GpuThunk>> thunks_;
  absl::flat_hash_map<const HloInstruction*, std::vector<DeviceBuffer>> constants_;
  DeviceBuffer own_arena_;
  mutable DeviceFrame own_frame_;
};

// Copies leaf i of `from` to leaf i of `to` (same shapes) on ctx.stream,
// staging through `staging` when some leaves move between each other's
// buffers.
absl::Status CopyLeavesOnDevice(const std::vector<Shape>& shapes, const std::vector<CUdeviceptr>& from,
                                const std::vector<CUdeviceptr>& to, const DeviceBuffer& staging, GpuRunContext& ctx,
                                std::string_view what);
// The staging CopyLeavesOnDevice needs for the leaves of `shape`.
int64_t StagingBytes(const Shape& shape);

// Thunks of cuda_thunk.cc. A kernel's PTX is loaded on `device` here.
absl::StatusOr<std::unique_ptr<GpuThunk>> CreateKernelLaunchThunk(const HloInstruction& inst, GpuKernel kernel,
                                                                  const CudaDevice& device);
std::unique_ptr<GpuThunk> CreateLibraryThunk(const HloInstruction& inst, std::unique_ptr<CudaLibraryCall> call);
// A copy between buffers of the same layout (leaf by leaf).
std::unique_ptr<GpuThunk> CreateDeviceCopyThunk(const HloInstruction& inst);
// A broadcast of a zero scalar (cuMemsetD8).
std::unique_ptr<GpuThunk> CreateMemsetThunk(const HloInstruction& inst);

// Thunks of cuda_control_flow_thunk.cc; `staging` holds StagingBytes of
// the instruction's shape.
std::unique_ptr<GpuThunk> CreateWhileThunk(const HloInstruction& inst, std::unique_ptr<DeviceProgram> condition,
                                           std::unique_ptr<DeviceProgram> body, DeviceBuffer staging);
// conditional (branch index read back to the host) and call.
std::unique_ptr<GpuThunk> CreateBranchThunk(const HloInstruction& inst,
                                            std::vector<std::unique_ptr<DeviceProgram>> branches,
                                            DeviceBuffer staging);
// async-start (`wrapped` on the second stream) and copy-start (`wrapped`
// null: a device copy there).
std::unique_ptr<GpuThunk> CreateAsyncStartThunk(const HloInstruction& inst, std::unique_ptr<DeviceProgram> wrapped,
                                                DeviceBuffer staging);
// async-update, async-done and copy-done.
std::unique_ptr<GpuThunk> CreateAsyncWaitThunk(const HloInstruction& inst);

// cuda_routine_thunk.cc: fft, cholesky, triangular-solve or sort on the
// device; UnimplementedError saying why for other ops and forms (the
// caller then falls back to the host).
absl::StatusOr<std::unique_ptr<GpuThunk>> CreateRoutineThunk(const HloInstruction& inst, DeviceProgramContext& ctx);

// cuda_host_thunk.cc: `inst` on the host between copies, because the GPU
// has no implementation for it (`why`): a library call on the CPU runtime's
// runner, a runtime routine, or else a kernel from `host_kernels` (the CPU
// code generator); an error naming `inst` when none of them can run it.
absl::StatusOr<std::unique_ptr<GpuThunk>> CreateHostFallbackThunk(const HloInstruction& inst, std::string_view why,
                                                                  const HostKernelProvider& host_kernels);

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CUDA_CUDA_THUNK_H_
