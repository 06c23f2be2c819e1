// Session: everything a compile and a run read that used to be process
// state, passed explicitly to the backend (compiler.h): the device, the
// thread count, where the algorithm pickers time and the cache they fill,
// the pass options, and the kernel compilers' options. Two sessions in one
// process do not see each other's settings (test/core/backend).
//
// Settings the libraries keep per process (OpenBLAS's thread count, the
// calling thread's OpenMP thread count) cannot be per session; they are
// applied from the session in one place, ApplyLibrarySettings, which the
// backend calls at the start of every optimize, compile and run.
#ifndef PASSLAB_CORE_BACKEND_SESSION_H_
#define PASSLAB_CORE_BACKEND_SESSION_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/codegen/gpu_kernel_compiler.h"
#include "core/backends/cuda/cuda_executable.h"
#include "passes/autotune/autotune_cache.h"
#include "passes/autotune/library_call_autotuner.h"
#include "passes/registry.h"

namespace passlab::backend {

// A device name split: "cpu" -> {"cpu", 0}, "cuda" -> {"cuda", 0},
// "cuda:1" -> {"cuda", 1}.
struct DeviceName {
  std::string platform;
  int ordinal = 0;
};
// Anything else is an InvalidArgument naming the device and the accepted
// forms.
absl::StatusOr<DeviceName> ParseDeviceName(std::string_view device);

struct Session {
  std::string device = "cpu";  // "cpu", "cuda", "cuda:N"
  // Threads of the CPU kernels and of the libraries behind library calls
  // (OpenBLAS, oneDNN): 0 is every core, n > 0 caps them at n.
  int threads = 0;
  // --pass-option values (PASS.OPTION=VALUE) for every pipeline built.
  PassOptionOverrides pass_options;
  // The algorithm pickers' cache (shared by copies of the session; give a
  // session its own with std::make_shared<AutotuneCache>()).
  std::shared_ptr<AutotuneCache> autotune_cache = std::make_shared<AutotuneCache>();
  // Where the pickers time library calls: empty on the host CPU (the CPU
  // backend's libraries), or a device's timer (UseDeviceAutotuning).
  std::optional<AlgorithmTimer> autotune_timer;
  // The kernel compilers' options. num_threads is `threads`; the GPU target
  // is the device's (its compute capability), whatever is set here.
  CpuCompileOptions cpu_compile;
  GpuCompileOptions gpu_compile;
  // The CUDA runtime's options (no CUDA header: cuda_executable.h). The
  // ordinal is the device name's; arguments stay on the device between runs
  // (every step gets the same ones); steps are timed through CUPTI unless
  // timing says CUDA events.
  CudaExecutableOptions cuda = {.timing = CudaTiming::kCupti, .keep_arguments = true};

  // Applies `threads` to OpenBLAS and to the calling thread's OpenMP when
  // they hold another value (core/runtime/library_threads.h).
  void ApplyLibrarySettings() const;
};

// Makes the session's algorithm pickers time where its device runs: on a
// CUDA device, cuBLASLt/cuDNN algorithms on that device (keyed in the cache
// by the device's description); on the CPU, the host's libraries. Without a
// device, a driver or a CUDA build: the reason, and the session unchanged.
absl::Status UseDeviceAutotuning(Session& session);

}  // namespace passlab::backend

#endif  // PASSLAB_CORE_BACKEND_SESSION_H_
