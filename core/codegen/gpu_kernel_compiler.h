// The GPU code generator's public face: one HLO instruction (a fusion or an
// unfused op) in, one GpuKernel (gpu_kernel.h: PTX, entry, launch dims) out.
// No MLIR/LLVM types appear here.
//
// Pipeline: the CPU backend's elemental emitter (kernel_emitter.h: fusion
// analysis, computation partitioner, subgraph functions) with GPU entry
// functions after seed 000 — the loop emitter (linear thread index ->
// `vector_width` consecutive output elements, bounds-checked), the transpose
// emitter (32x33 shared-memory tile, barrier between the read and the write
// loop), the row and column reduction emitters (per-thread partial results,
// warp shuffles, shared memory across warps); a single-block kernel for the
// ops whose loop nests depend on each other (unfused scatter, batch norm
// training/grad). The emitter pipeline lowers gpu/scf/memref/math to the LLVM
// and NVVM dialects (math through libdevice), MLIR translates to LLVM IR and
// LLVM's NVPTX backend prints PTX.
#ifndef PASSLAB_CORE_CODEGEN_GPU_KERNEL_COMPILER_H_
#define PASSLAB_CORE_CODEGEN_GPU_KERNEL_COMPILER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/codegen/gpu_kernel.h"

namespace passlab {

class HloInstruction;
class Shape;

struct GpuCompileOptions {
  // PTX target and ISA version ("sm_90", "+ptx86"); see
  // GpuTargetForComputeCapability.
  std::string target = "sm_90";
  std::string ptx_features = "+ptx86";
  // libdevice (math functions); an empty path or a missing file makes
  // kernels that need it fail to compile with a message.
  std::string libdevice_path = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  // Loop emitter's elements per thread; 0 = chosen as seed 000 does
  // (LoopLaunch).
  int vector_width = 0;
  int llvm_opt_level = 3;
  // Emitter passes to skip, by name (see GpuEmitterPipelinePasses()).
  std::vector<std::string> disabled_passes;
  // Called after every emitter pass (as CpuCompileOptions::observer).
  std::function<void(const EmitterPassSnapshot&)> observer;
  bool observer_wants_text = true;
  // Reuse the PTX of identical kernels (KernelCacheKey and these options)
  // within the process: ablation variants share most kernels with their
  // control. Off while an observer is set (it must see every pass).
  bool use_cache = true;
  // A directory of compiled kernels (PTX and launch dimensions) shared by
  // processes and runs, as CpuCompileOptions::persistent_cache_dir.
  std::string persistent_cache_dir;
};

// The PTX target for a device's compute capability: "sm_<major><minor>"
// (8.0 -> "sm_80") when LLVM's NVPTX backend knows it; a newer device than
// LLVM knows gets the newest target LLVM has of the same or an older major
// (PTX for an older target runs on newer devices), and a device older than
// any target LLVM has (or a capability of 0.0) is an error.
absl::StatusOr<std::string> GpuTargetForComputeCapability(int major, int minor);

// The GPU emitter pipeline's passes, in order.
const std::vector<EmitterPassInfo>& GpuEmitterPipelinePasses();

// The loop emitter's thread mapping: thread t of block b handles the
// physical output elements [(b * block + t) * vector_width, ... +
// vector_width), skipping those >= elements. vector_width divides elements.
struct GpuLoopLaunch {
  int64_t elements = 0;
  int64_t vector_width = 1;
  int64_t block = 1;
  int64_t grid = 1;
  // The first physical element of a thread (may be >= elements: idle).
  int64_t FirstElement(int64_t block_id, int64_t thread_id) const {
    return (block_id * block + thread_id) * vector_width;
  }
};
// Seed 000's choice: 128 threads per block (fewer for tiny outputs), up to
// 128 bits per thread in 4 elements when every output has a multiple of 4
// elements and there are enough of them to fill the device with 4 per
// thread; otherwise 2, otherwise 1. `requested_width` > 0 forces a width
// (reduced until it divides every output's element count).
GpuLoopLaunch LoopLaunch(const std::vector<int64_t>& output_elements, int64_t max_element_bits,
                         int requested_width = 0);

class GpuKernelCompiler {
 public:
  explicit GpuKernelCompiler(GpuCompileOptions options = {});

  // Whether the instruction can be compiled as a GPU kernel (what the CPU
  // backend compiles); CheckCompilable says why not.
  static bool CanCompile(const HloInstruction& instruction);
  static absl::Status CheckCompilable(const HloInstruction& instruction);

  absl::StatusOr<GpuKernel> Compile(const HloInstruction& instruction);

  // The emitted MLIR (before the emitter pipeline), for dumps and tests.
  absl::StatusOr<std::string> EmitMlir(const HloInstruction& instruction);

  // Kernels compiled and served from the cache so far in this process.
  static int64_t CacheHits();
  static int64_t CacheMisses();
  // Of the misses, those found in / missing from a persistent cache.
  static int64_t PersistentCacheHits();
  static int64_t PersistentCacheMisses();

 private:
  absl::StatusOr<GpuKernel> CompileUncached(const HloInstruction& instruction);
  GpuCompileOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_GPU_KERNEL_COMPILER_H_
