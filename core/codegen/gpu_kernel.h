// The contract between the GPU code generator (core/codegen, NVPTX target)
// and the CUDA runtime (core/runtime): one HLO instruction — a fusion or a
// single unfused op — compiled into one PTX kernel. No MLIR/LLVM/CUDA types
// appear here, so the runtime, the CLI and tests include it cheaply.
//
// Kernel ABI: the PTX entry `entry` takes exactly one `.param .u64` device
// pointer per buffer, in CompiledKernel's buffer order (compiled_kernel.h):
// one per operand of the instruction, in operand order, then one per leaf
// array of the result shape (tuples flattened depth-first). Buffers are dense
// arrays in their shape's layout (minor_to_major, no tiling), with the CPU
// backend's element encodings (pred one byte, bf16/f16 16-bit), each at least
// 16-byte aligned (the code generator emits vector loads on that promise).
// The runtime launches it once with `launch` (grid, block, dynamic shared
// memory).
#ifndef PASSLAB_CORE_CODEGEN_GPU_KERNEL_H_
#define PASSLAB_CORE_CODEGEN_GPU_KERNEL_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "core/codegen/compiled_kernel.h"

namespace passlab {

class HloInstruction;

struct GpuLaunchDimensions {
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  int64_t block_x = 1, block_y = 1, block_z = 1;
  int64_t dynamic_shared_memory_bytes = 0;
  int64_t num_blocks() const { return grid_x * grid_y * grid_z; }
  int64_t threads_per_block() const { return block_x * block_y * block_z; }
};

struct GpuKernel {
  std::string name;   // the HLO instruction's name (the fusion's, if fused)
  EmitterKind emitter_kind = EmitterKind::kLoop;
  std::string entry;  // the PTX entry function's name
  std::string ptx;    // PTX text (".version ... .target sm_XX ...")
  std::string target; // "sm_90"
  GpuLaunchDimensions launch;
  int64_t num_buffers = 0;  // operands + result leaves (the entry's params)
  // Work estimates for KernelRecords (0 when unknown).
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t flops = 0;
};

// Produces the GPU kernel of an instruction that needs one (a fusion or an
// unfused op that is not a library call, copy or control flow).
using GpuKernelProvider = std::function<absl::StatusOr<GpuKernel>(const HloInstruction&)>;

}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_GPU_KERNEL_H_
