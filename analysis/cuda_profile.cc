#include "analysis/cuda_profile.h"

#include <algorithm>
#include <chrono>

#include "core/ir/str_util.h"
#include "passes/autotune/library_call_autotuner.h"
#ifdef PASSLAB_HAVE_CUDA
#include "core/runtime/cuda_autotuner.h"
#include "core/runtime/cuda_executable.h"
#endif

namespace passlab {

GpuKernelProvider GpuCodegenKernels(GpuKernelCompiler& compiler) {
  return [&compiler](const HloInstruction& inst) -> absl::StatusOr<GpuKernel> {
    if (absl::Status s = GpuKernelCompiler::CheckCompilable(inst); !s.ok()) {
      return absl::UnimplementedError(s.message());
    }
    return compiler.Compile(inst);
  };
}

GpuCompileOptions GpuCompileOptionsForDevice(GpuCompileOptions base, int ordinal) {
#ifdef PASSLAB_HAVE_CUDA
  absl::StatusOr<std::pair<int, int>> cc = CudaComputeCapability(ordinal);
  if (!cc.ok()) return base;
  absl::StatusOr<std::string> target = GpuTargetForComputeCapability(cc->first, cc->second);
  if (target.ok()) base.target = *target;
#else
  (void)ordinal;
#endif
  return base;
}

absl::Status UseCudaAutotuning(int ordinal) {
#ifdef PASSLAB_HAVE_CUDA
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
  SetAlgorithmTimer(std::move(timer));
  return absl::OkStatus();
#else
  (void)ordinal;
  return absl::UnavailableError("the cuda backend was not built (no CUDA toolkit at configure time)");
#endif
}

#ifdef PASSLAB_HAVE_CUDA

absl::StatusOr<CudaProfile> ProfileOnCuda(const HloModule& module, absl::Span<const Literal> args,
                                          const GpuKernelProvider& kernels, const CudaProfileOptions& options) {
  CudaProfile profile;
  CudaExecutableOptions eopts;
  eopts.timing = options.cupti ? CudaTiming::kCupti : CudaTiming::kEvents;
  // Every step gets the same arguments: they stay on the device after the
  // first (a warm-up run, when there is one), so steps time the program and
  // not 430 uploads of the same parameters.
  eopts.keep_arguments = true;
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<CudaExecutable>> exe = CudaExecutable::Create(module, kernels, eopts);
  if (!exe.ok()) return absl::Status(exe.status().code(), StrCat("compile: ", exe.status().message()));
  profile.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  profile.device = (*exe)->device_description();
  profile.memory.arena_bytes = (*exe)->device_arena_bytes();
  profile.host_fallbacks = (*exe)->HostFallbacks();
  for (int i = 0; i < options.warmup; ++i) {
    if (absl::Status s = (*exe)->Execute(args); !s.ok()) return absl::Status(s.code(), StrCat("run: ", s.message()));
  }
  auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  for (int i = 0; i < options.repeats; ++i) {
    // The untraced step first: the program's wall time, without CUPTI.
    auto start = std::chrono::steady_clock::now();
    if (absl::Status s = (*exe)->Execute(args); !s.ok()) return absl::Status(s.code(), StrCat("run: ", s.message()));
    profile.wall_ms.push_back(ms_since(start));
    std::vector<KernelRecord> step;
    start = std::chrono::steady_clock::now();
    if (absl::Status s = (*exe)->Execute(args, &step); !s.ok()) {
      return absl::Status(s.code(), StrCat("run: ", s.message()));
    }
    profile.traced_wall_ms.push_back(ms_since(start));
    const GpuKernelTime& t = (*exe)->last_run().kernel_time;
    profile.kernel_ms.push_back(t.sum_ns / 1e6);
    profile.envelope_ms.push_back(t.envelope_ns / 1e6);
    profile.records.insert(profile.records.end(), step.begin(), step.end());
    profile.last_step = std::move(step);
  }
  if (options.want_result) {
    absl::StatusOr<Literal> r = (*exe)->Run(args);
    if (!r.ok()) return absl::Status(r.status().code(), StrCat("run: ", r.status().message()));
    profile.result = std::move(*r);
  }
  profile.summary = SummarizeRecords(profile.records, std::max(options.repeats, 1));
  return profile;
}

#else

absl::StatusOr<CudaProfile> ProfileOnCuda(const HloModule&, absl::Span<const Literal>, const GpuKernelProvider&,
                                          const CudaProfileOptions&) {
  return absl::UnavailableError("the cuda backend was not built (no CUDA toolkit at configure time)");
}

#endif

}  // namespace passlab
