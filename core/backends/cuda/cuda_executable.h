// CudaExecutable: a compiled module on one CUDA device — the CPU runtime's
// Executable (executable.h) for the GPU. Buffer assignment is the CPU's
// (core/runtime/buffer_assignment), placed in one device arena per program;
// each instruction becomes a GPU thunk:
//   - emitted kernels: a GpuKernel from the provider (the NVPTX code
//     generator), its PTX loaded once (cuModuleLoadData) and launched with
//     its launch dimensions;
//   - `__blas$gemm` on cuBLASLt (alpha/beta, transposes, batches, bias/relu/
//     gelu epilogues), `__dnn$conv*` on cuDNN 9 (forward, backward data,
//     backward filter, fused conv + bias + activation), with the algorithm
//     recorded in the backend_config when the library offers it;
//   - copies (device-to-device when the layouts agree), memsets (a
//     broadcast of zero), while/conditional/call around nested programs (the
//     predicate or branch index read back to the host);
//   - copy-start/done and async-start/done on a second stream, ordered with
//     events (seed 001);
//   - fft on cuFFT, cholesky on cuSOLVER, triangular-solve on cuBLAS and
//     single-key sorts on a sort kernel (cuda_routine_thunk.cc);
//   - host fallback (options.host_fallback): what has no GPU implementation
//     here — an op the provider has no kernel for, a library call the GPU
//     library cannot take as laid out, rng, topk and the routines the
//     device ones cannot take — runs on the host between a device-to-host
//     and a host-to-device copy. Such thunks are kind "routine" with detail
//     "host: ..." in every profile, so the gap stays visible.
// Run(args) copies the arguments in, runs, and copies the results out; every
// thunk and both transfers get a KernelRecord timed with CUDA events, or the
// device's own records through CUPTI (options.timing).
//
// No CUDA header here: the CLI and tests include it freely. Without a driver
// or a device, Create fails with "no CUDA driver (libcuda.so.1 not found)" or
// "no CUDA device".
#ifndef PASSLAB_CORE_BACKENDS_CUDA_CUDA_EXECUTABLE_H_
#define PASSLAB_CORE_BACKENDS_CUDA_CUDA_EXECUTABLE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/codegen/compiled_kernel.h"
#include "core/codegen/gpu_kernel.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/backends/cuda/cupti_tracer.h"
#include "core/runtime/kernel_record.h"

namespace passlab {

// The host fallback's kernels: `inst` compiled for the host CPU (buffers as
// in core/codegen/compiled_kernel.h). The CUDA backend injects the CPU code
// generator (MakeHostKernelFactory, core/backends/cpu/host_kernel_factory.h);
// the runtime itself does not link a code generator.
using HostKernelProvider =
    std::function<absl::StatusOr<std::unique_ptr<CompiledKernel>>(const HloInstruction&)>;

enum class CudaTiming {
  kEvents,  // one record per thunk and transfer, CUDA events around each
  kCupti,   // CUPTI activity records: every device kernel, memcpy and memset
};

struct CudaExecutableOptions {
  int device_ordinal = 0;
  bool host_fallback = true;
  CudaTiming timing = CudaTiming::kEvents;
  // Upload the arguments once and keep them on the device while later runs
  // get the same literals (the same objects, unchanged: the caller's
  // promise), as a training loop keeps its state on the device. Ignored
  // when the program overwrites a parameter's buffer (a donated parameter
  // updated in place or holding an output: BufferAssignment::
  // OverwritesParameters). Without it every run uploads every argument.
  bool keep_arguments = false;
  // Command buffer (XLA:GPU's command buffers, --xla_gpu_enable_command_
  // buffer): a run without records, after one such run ran eagerly, is
  // captured once into a CUDA graph (cuStreamBeginCapture over the thunks'
  // work), and later runs without records launch that graph while the
  // parameter buffers stay where they were (arguments still upload before
  // it when they are not kept). Runs with records stay eager, so every
  // thunk keeps its own events or CUPTI operation. A program with host
  // work in the middle of a step (a host fallback, a while loop's
  // predicate, a conditional's branch index) always runs eagerly;
  // CommandBufferStatus() says why.
  bool command_buffer = true;
  // TF32 for f32 convolutions and gemms whose operand precisions are all
  // DEFAULT or HIGH, as XLA:GPU allows them (cudnn autotuner: allow_tf32
  // when every operand precision <= HIGH; matmul_utils.cc IsTf32Allowed).
  // HIGHEST always computes in full f32; NVIDIA_TF32_OVERRIDE=0 in the
  // environment turns TF32 off in cuBLAS and cuDNN for the whole process.
  bool allow_tf32 = true;
  // The host fallback of an op that is neither a library call nor a host
  // routine runs a kernel from here; without one (or when it cannot compile
  // the op), building the executable fails naming the op.
  HostKernelProvider host_kernels;
};

// "cuda:0 (NVIDIA H100 ..., sm_90, 132 SMs, 79.1 GiB)", or why there is no
// usable device ("no CUDA driver (libcuda.so.1 not found)", "no CUDA device").
absl::StatusOr<std::string> DescribeCudaDevice(int ordinal = 0);
// The device's compute capability {major, minor} (9.0 on an H100), or why
// there is no usable device.
absl::StatusOr<std::pair<int, int>> CudaComputeCapability(int ordinal = 0);

// What one run did besides its thunks (records carry the details).
struct CudaRunStats {
  int64_t host_to_device_bytes = 0, device_to_host_bytes = 0;
  int64_t host_to_device_ns = 0, device_to_host_ns = 0;
  GpuKernelTime kernel_time;  // over the run's device kernels
  int64_t cupti_dropped_zero_timestamp = 0;  // kCupti: records dropped
  bool graph_launched = false;  // the run was one launch of the captured CUDA graph
};

class CudaExecutable {
 public:
  // The module must outlive the executable. `kernels` may be empty (every
  // op that needs a kernel then runs on the host, if host_fallback).
  static absl::StatusOr<std::unique_ptr<CudaExecutable>> Create(const HloModule& module,
                                                                const GpuKernelProvider& kernels,
                                                                const CudaExecutableOptions& options = {});
  ~CudaExecutable();

  // Runs once on `args` (one literal per entry parameter). Appends the
  // run's records (start/end relative to the run's start) when given.
  absl::StatusOr<Literal> Run(absl::Span<const Literal> args, std::vector<KernelRecord>* records = nullptr);
  // Runs once without copying the results back.
  absl::Status Execute(absl::Span<const Literal> args, std::vector<KernelRecord>* records = nullptr);

  const CudaRunStats& last_run() const;
  const std::string& device_description() const;
  // "kernel fusion.1 (loop)", "library custom-call.2 (__blas$gemm/cublasLt#0: m=...)", ...
  std::string ToString() const;
  int64_t device_arena_bytes() const;
  // The ops that run on the host between copies because the GPU has no
  // implementation for them, in schedule order: "custom-call.68:
  // __dnn$convBackwardFilter/auto (cuDNN offers no algorithm for ...)".
  std::vector<std::string> HostFallbacks() const;
  // "CUDA graph of 1,234 nodes", "not captured yet (runs without records
  // capture it)", "off", or why steps run eagerly ("eager: while.3 reads its
  // predicate on the host", "eager: capture failed: ...").
  std::string CommandBufferStatus() const;
  // How many library calls compute f32 on TF32 tensor cores (allow_tf32),
  // nested programs included: their results differ from full f32 by TF32's
  // rounding (10 mantissa bits in the products).
  int64_t Tf32LibraryCalls() const;

  struct Impl;

 private:
  CudaExecutable() = default;
  std::unique_ptr<Impl> impl_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CUDA_CUDA_EXECUTABLE_H_
