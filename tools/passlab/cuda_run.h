// `passlab run --device cuda`: compile the optimized module with the CUDA
// runtime (core/runtime/cuda_executable.h) and time `repeats` steps through
// CUPTI. The GPU code generator comes in as a provider (null: ops that need an
// emitted kernel run on the host and show as "host: ..." routines). Builds
// without the CUDA toolkit too: it then says the backend was not built.
#ifndef PASSLAB_TOOLS_PASSLAB_CUDA_RUN_H_
#define PASSLAB_TOOLS_PASSLAB_CUDA_RUN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/codegen/gpu_kernel.h"
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

struct CudaProfile {
  std::string device;  // "cuda:0 (NVIDIA H100 ...)"
  double compile_ms = 0;
  std::vector<KernelRecord> records;    // every timed step
  std::vector<KernelRecord> last_step;
  std::vector<double> wall_ms;          // per step (host clock, transfers included)
  std::vector<double> kernel_ms;        // per step: sum of device kernel durations
  std::vector<double> envelope_ms;      // per step: first kernel start to last kernel end
  Literal result;
};

// "no CUDA driver (libcuda.so.1 not found)", "no CUDA device", "the cuda
// backend was not built ..." when it cannot run.
absl::StatusOr<CudaProfile> ProfileOnCuda(const HloModule& module, absl::Span<const Literal> args,
                                          const GpuKernelProvider& kernels, const CudaProfileOptions& options);

}  // namespace passlab

#endif  // PASSLAB_TOOLS_PASSLAB_CUDA_RUN_H_
