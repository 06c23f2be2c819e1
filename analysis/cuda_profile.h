// Profile a module on the CUDA runtime (core/runtime/cuda_executable.h):
// compile, warm up, and time `repeats` steps through CUPTI
// (each paired with an untraced step for the wall time) — the GPU
// counterpart of CompileAndProfile (profile_run.h), shared by `passlab run
// --device cuda` and the GUI's Kernels panel. The GPU code generator comes
// in as a provider (GpuCodegenKernels; null: ops that need an emitted kernel
// run on the host and show as "host: ..." routines). Builds without the CUDA
// toolkit too: ProfileOnCuda then says the backend was not built.
#ifndef PASSLAB_ANALYSIS_CUDA_PROFILE_H_
#define PASSLAB_ANALYSIS_CUDA_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "analysis/profile_run.h"
#include "core/codegen/gpu_kernel.h"
#include "core/codegen/gpu_kernel_compiler.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/runtime/kernel_record.h"

namespace passlab {

struct CudaProfileOptions {
  int warmup = 1;
  int repeats = 5;
  bool want_result = false;
  bool cupti = true;  // false: CUDA events around each thunk
};

// What a CPU profile holds (kernel_ms: the sum of device kernel durations;
// memory.arena_bytes: the device arena), plus what tracing costs. CUPTI's
// tracing is host work per operation (an external correlation id pushed
// and popped around each, its buffers flushed and converted after the
// step), so a traced step's wall time is not the program's. Each traced
// step is therefore paired with an untraced one: wall_ms (host clock,
// transfers included) times the untraced steps, traced_wall_ms the traced.
struct CudaProfile : ProfileResult {
  std::string device;                  // "cuda:0 (NVIDIA H100 ...)"
  std::vector<double> envelope_ms;     // per traced step: first kernel start to last kernel end
  std::vector<double> traced_wall_ms;  // per traced step: host clock, CUPTI's work included
  std::vector<std::string> host_fallbacks;  // CudaExecutable::HostFallbacks
};

// "no CUDA driver (libcuda.so.1 not found)", "no CUDA device", "the cuda
// backend was not built ..." when it cannot run; otherwise errors say which
// phase failed ("compile: ...", "run: ...").
absl::StatusOr<CudaProfile> ProfileOnCuda(const HloModule& module, absl::Span<const Literal> args,
                                          const GpuKernelProvider& kernels, const CudaProfileOptions& options);

// The GPU code generator (core/codegen's NVPTX target) as the CUDA runtime's
// kernel provider. An op it cannot compile answers Unimplemented, so the
// runtime runs it on the host (a "host: ..." routine). `compiler` must
// outlive the provider.
GpuKernelProvider GpuCodegenKernels(GpuKernelCompiler& compiler);

// Compile options for the device `ordinal`: `base` with the PTX target of
// the device's compute capability (GpuTargetForComputeCapability), so that
// an A100 gets sm_80 and an H100 sm_90. Without a device (or a CUDA build),
// `base` as it is: the run that follows reports the missing device.
GpuCompileOptions GpuCompileOptionsForDevice(GpuCompileOptions base = {}, int ordinal = 0);

// Makes the algorithm pickers (gemm-algorithm-picker,
// gpu-conv-algorithm-picker) time library calls on device `ordinal` with
// cuBLASLt and cuDNN (TimeCudaAlgorithms: red zones, reference checks at
// level 4), keyed in the autotune cache by the device's description, for
// the rest of the process. Without a device, a driver or a CUDA build: the
// reason, and the pickers keep timing on the CPU.
absl::Status UseCudaAutotuning(int ordinal = 0);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_CUDA_PROFILE_H_
