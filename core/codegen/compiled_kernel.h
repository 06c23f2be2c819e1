// The contract between the code generator (core/codegen) and the runtime
// (core/runtime): one HLO instruction — a fusion or a single unfused op —
// compiled into a host function. No MLIR/LLVM types appear here, so the
// runtime and tests include it without paying for MLIR headers.
//
// Buffer convention (the same for every kernel): `buffers` holds one pointer
// per operand of the instruction, in operand order, then one pointer per leaf
// array of the instruction's result shape (a tuple result — multi-output
// fusion — has one buffer per element, in tuple order; nested tuples are
// flattened depth-first). Each buffer is a dense array laid out as its
// shape's layout says (minor_to_major; no tiling); pred is one byte per
// element, bf16/f16 are 16-bit, small floats one byte. Operands are read-only;
// a result buffer may alias an operand buffer only when the instruction is an
// in-place op (dynamic-update-slice, scatter) and buffer assignment chose so.
#ifndef PASSLAB_CORE_CODEGEN_COMPILED_KERNEL_H_
#define PASSLAB_CORE_CODEGEN_COMPILED_KERNEL_H_

#include <cstdint>
#include <string>

#include "absl/types/span.h"

namespace passlab {

class HloInstruction;

// The emitter seed 000 would choose for a kernel.
enum class EmitterKind {
  kLoop,
  kTranspose,
  kReduction,
  kInputSlices,
  kScatter,
  kSelectAndScatter,
  kConcatenate,
  kInPlaceDynamicUpdateSlice,
};
// "loop", "transpose", ... (inline: the runtime names kernels without
// linking the code generator).
inline const char* EmitterKindName(EmitterKind kind) {
  switch (kind) {
    case EmitterKind::kLoop: return "loop";
    case EmitterKind::kTranspose: return "transpose";
    case EmitterKind::kReduction: return "reduction";
    case EmitterKind::kInputSlices: return "input_slices";
    case EmitterKind::kScatter: return "scatter";
    case EmitterKind::kSelectAndScatter: return "select_and_scatter";
    case EmitterKind::kConcatenate: return "concatenate";
    case EmitterKind::kInPlaceDynamicUpdateSlice: return "in_place_dynamic_update_slice";
  }
  return "unknown";
}

class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  // The HLO instruction's name (the fusion's name for fused kernels).
  virtual const std::string& name() const = 0;
  virtual EmitterKind emitter_kind() const = 0;
  // Runs the kernel once over `buffers` (see the convention above). Must be
  // safe to call from several threads on distinct buffers.
  virtual void Run(absl::Span<void* const> buffers) const = 0;
  // Work estimates for KernelRecords (0 when unknown).
  virtual int64_t bytes_read() const { return 0; }
  virtual int64_t bytes_written() const { return 0; }
  virtual int64_t flops() const { return 0; }
};

}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_COMPILED_KERNEL_H_
