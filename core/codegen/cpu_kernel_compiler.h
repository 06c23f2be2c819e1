// The CPU code generator's public face: one HLO instruction (a fusion or an
// unfused op) in, one CompiledKernel out. No MLIR/LLVM types appear here.
//
// Pipeline (seed 000's structure on the host): fusion analysis picks the
// emitter kind from the hero; the computation partitioner splits the fused
// computation into subgraph functions; the emitter builds MLIR (func, arith,
// math, scf, memref) with one `(buffers..., begin, end)` entry function per
// output loop nest; the emitter pipeline (named MLIR passes, observable and
// disableable) lowers it to the LLVM dialect; LLVM compiles it to object code
// for the host CPU, which LLVM's ORC JIT links into the process (a
// persistent cache, CpuCompileOptions::persistent_cache_dir, can supply the
// object code instead). The runtime splits the
// outer loop of each nest across a small thread pool when it is large.
#ifndef PASSLAB_CORE_CODEGEN_CPU_KERNEL_COMPILER_H_
#define PASSLAB_CORE_CODEGEN_CPU_KERNEL_COMPILER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/codegen/compiled_kernel.h"

namespace passlab {

class HloInstruction;

// One emitter pass ran: its name, the MLIR module before and after, its time.
struct EmitterPassSnapshot {
  std::string kernel_name;
  std::string pass_name;
  std::string before;  // empty unless the observer asked for text
  std::string after;
  double seconds = 0;
};

// The emitter pipeline's passes, in order; `optional` ones may be disabled.
struct EmitterPassInfo {
  std::string name;
  bool optional = true;
  std::string description;
};
const std::vector<EmitterPassInfo>& EmitterPipelinePasses();

struct CpuCompileOptions {
  // LLVM's loop and SLP vectorizers (the "vectorize" emitter pass).
  bool vectorize = true;
  // Unroll factor of the innermost emitted loop (the "unroll" pass); 1 = off.
  int unroll = 1;
  // Loop nests with fewer output elements run on the calling thread only.
  int64_t parallel_threshold_elements = int64_t{1} << 16;
  // 1 = run on the calling thread only; otherwise the process-wide pool of
  // hardware-concurrency threads (shared by all kernels) is used.
  int num_threads = 0;
  int llvm_opt_level = 3;
  // Emitter passes to skip, by name (see EmitterPipelinePasses()).
  std::vector<std::string> disabled_passes;
  // Called after every emitter pass; with `observer_wants_text`, before/after
  // hold the module text.
  std::function<void(const EmitterPassSnapshot&)> observer;
  bool observer_wants_text = true;
  // Reuse compiled code for identical kernels within the process.
  bool use_cache = true;
  // A directory of compiled kernels shared by processes and runs
  // (persistent_kernel_cache.h): a kernel found there is loaded, not
  // compiled; a kernel compiled is stored there. Empty: none. Not consulted
  // while an observer is set (it must see every pass run).
  std::string persistent_cache_dir;
};

// The part of a kernel's compile-cache key that comes from the HLO: the
// instruction (and a fusion's body, a callee's text) with operands and
// fused values numbered rather than named, so identical kernels of
// different modules or variants share an entry. Both backends' caches key
// on it (plus their options).
std::string KernelCacheKey(const HloInstruction& instruction);

class CpuKernelCompiler {
 public:
  explicit CpuKernelCompiler(CpuCompileOptions options = {});

  // Whether the instruction (a fusion, or an unfused op) can be compiled as a
  // kernel; CheckCompilable says why not.
  static bool CanCompile(const HloInstruction& instruction);
  static absl::Status CheckCompilable(const HloInstruction& instruction);

  absl::StatusOr<std::unique_ptr<CompiledKernel>> Compile(const HloInstruction& instruction);

  // The emitted MLIR (before the emitter pipeline), for dumps and tests.
  absl::StatusOr<std::string> EmitMlir(const HloInstruction& instruction);

  // Kernels compiled and cache hits so far in this process.
  static int64_t CacheHits();
  static int64_t CacheMisses();
  // Of the in-process misses, those looked up in a persistent cache: found
  // there (loaded, not compiled) or not (compiled and stored).
  static int64_t PersistentCacheHits();
  static int64_t PersistentCacheMisses();

 private:
  CpuCompileOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_CPU_KERNEL_COMPILER_H_
