// The CUDA backend: the GPU code generator's kernels (GpuKernelCompiler,
// NVPTX for the device's compute capability) on this folder's
// CudaExecutable (cuBLASLt/cuDNN library calls, host fallback for what has
// no GPU implementation, with the CPU code generator's kernels as its last
// resort), timed through CUPTI. Built only with the CUDA toolkit
// (built into passlab_backend, beside passlab_cuda_runtime).
#include <memory>
#include <utility>

#include "core/backends/backend_internal.h"
#include "core/backends/cpu/host_kernel_factory.h"
#include "core/codegen/gpu_kernel_compiler.h"
#include "core/backends/cuda/cuda_autotuner.h"
#include "core/backends/cuda/cuda_executable.h"

namespace passlab::backend {
namespace {

// The session's GPU compile options with the PTX target of the device's
// compute capability (sm_80 on an A100, sm_90 on an H100). Without a
// device, as they are: creating the executable then reports the device.
GpuCompileOptions CompileOptionsForDevice(GpuCompileOptions options, int ordinal) {
  absl::StatusOr<std::pair<int, int>> cc = CudaComputeCapability(ordinal);
  if (!cc.ok()) return options;
  absl::StatusOr<std::string> target = GpuTargetForComputeCapability(cc->first, cc->second);
  if (target.ok()) options.target = *target;
  return options;
}

class CudaBackendExecutable : public Executable {
 public:
  CudaBackendExecutable(std::unique_ptr<GpuKernelCompiler> compiler, std::unique_ptr<CudaExecutable> exe,
                        const Session& session)
      : session_(session), compiler_(std::move(compiler)), exe_(std::move(exe)) {}

  absl::StatusOr<Literal> Run(absl::Span<const Literal> args) override {
    session_.ApplyLibrarySettings();  // the host fallbacks' library calls
    return exe_->Run(args);
  }
  absl::Status Execute(absl::Span<const Literal> args, std::vector<KernelRecord>* records) override {
    session_.ApplyLibrarySettings();
    return exe_->Execute(args, records);
  }
  ExecutableMemory Memory() const override {
    ExecutableMemory m;
    m.arena_bytes = exe_->device_arena_bytes();
    return m;
  }
  std::string DeviceDescription() const override { return exe_->device_description(); }
  std::vector<std::string> HostFallbacks() const override { return exe_->HostFallbacks(); }
  bool TracingTakesHostTime() const override { return true; }
  std::string CommandBufferStatus() const override { return exe_->CommandBufferStatus(); }
  int64_t Tf32LibraryCalls() const override { return exe_->Tf32LibraryCalls(); }

 private:
  Session session_;
  std::unique_ptr<GpuKernelCompiler> compiler_;  // the kernels' owner
  std::unique_ptr<CudaExecutable> exe_;
};

class CudaCompiler : public Compiler {
 public:
  CudaCompiler(Session session, int ordinal) : Compiler(std::move(session)), ordinal_(ordinal) {}

  absl::StatusOr<std::unique_ptr<Executable>> Compile(const HloModule& module) override {
    session_.ApplyLibrarySettings();
    auto compiler = std::make_unique<GpuKernelCompiler>(CompileOptionsForDevice(session_.gpu_compile, ordinal_));
    GpuKernelCompiler* kernels = compiler.get();
    // An op the code generator cannot compile answers Unimplemented, so the
    // runtime runs it on the host (a "host: ..." routine).
    GpuKernelProvider provider = [kernels](const HloInstruction& inst) -> absl::StatusOr<GpuKernel> {
      if (absl::Status s = GpuKernelCompiler::CheckCompilable(inst); !s.ok()) {
        return absl::UnimplementedError(s.message());
      }
      return kernels->Compile(inst);
    };
    CudaExecutableOptions options = session_.cuda;
    options.device_ordinal = ordinal_;
    // The host fallback's last resort: the op compiled for the host CPU.
    CpuCompileOptions host_options = session_.cpu_compile;
    host_options.num_threads = session_.threads;
    options.host_kernels = MakeHostKernelFactory(std::move(host_options));
    absl::StatusOr<std::unique_ptr<CudaExecutable>> exe = CudaExecutable::Create(module, provider, options);
    if (!exe.ok()) return exe.status();
    return std::unique_ptr<Executable>(new CudaBackendExecutable(std::move(compiler), std::move(*exe), session_));
  }

 private:
  int ordinal_;
};

}  // namespace

std::unique_ptr<Compiler> CreateCudaCompiler(Session session, int ordinal) {
  return std::make_unique<CudaCompiler>(std::move(session), ordinal);
}

absl::StatusOr<AlgorithmTimer> CudaAlgorithmTimer(int ordinal) {
  absl::StatusOr<std::string> device = DescribeCudaDevice(ordinal);
  if (!device.ok()) return device.status();
  AlgorithmTimer timer;
  timer.device = *device;
  timer.time = [ordinal](const HloInstruction& call, const AutotuneOptions& options,
                         const std::vector<int64_t>& denied) {
    CudaAutotuneOptions o;
    o.level = options.level;
    o.repeats = options.repeats;
    o.tolerance = options.tolerance;
    o.denied = denied;
    o.device_ordinal = ordinal;
    return TimeCudaAlgorithms(call, o);
  };
  return timer;
}

}  // namespace passlab::backend
