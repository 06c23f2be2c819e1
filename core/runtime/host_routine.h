// The runtime's own implementations of the HLO ops XLA:CPU runs as calls
// into its runtime library rather than as emitted kernels: sort (with its
// comparator), topk, fft (KissFFT), cholesky and triangular-solve (LAPACK /
// BLAS from OpenBLAS), rng-bit-generator (philox, three-fry) and
// rng-get-and-update-state (the executable's generator state). None of
// them goes through the reference evaluator, so `passlab run --check`
// compares two implementations and the timings are the backend's.
//
// Buffers follow core/codegen/compiled_kernel.h: one per operand (arrays
// only), then the result's leaves, each laid out by its shape (plain
// layouts). An op or form without an implementation is an
// UnimplementedError from CreateHostRoutine, naming the instruction and its
// opcode: there is no silent fallback.
#ifndef PASSLAB_CORE_RUNTIME_HOST_ROUTINE_H_
#define PASSLAB_CORE_RUNTIME_HOST_ROUTINE_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/hlo_opcode.h"

namespace passlab {

class HloInstruction;

class HostRoutine {
 public:
  virtual ~HostRoutine() = default;
  virtual absl::Status Run(absl::Span<void* const> buffers) const = 0;
  // Arithmetic of one run (0 when not meaningful, e.g. sort).
  virtual int64_t flops() const { return 0; }
};

// Whether the runtime runs `op` as a host routine (the opcodes above).
bool IsHostRoutineOpcode(HloOpcode op);

// The routine of `inst`; UnimplementedError for another opcode or a form of
// these ops not implemented (the message names `inst` and its opcode).
absl::StatusOr<std::unique_ptr<HostRoutine>> CreateHostRoutine(const HloInstruction& inst);

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_HOST_ROUTINE_H_
