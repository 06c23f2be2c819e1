// Runs one HLO instruction on host buffers through the reference evaluator
// (core/eval): the "reference" algorithm of library calls (gemm, conv,
// solver) and the CUDA runtime's host fallback for ops other than the host
// routines. The CPU executable's thunks never use it: sort, fft, cholesky,
// triangular-solve, topk and rng-bit-generator are host_routine.h's, and an
// op without an emitter or a routine is an error. Buffers follow
// core/codegen/compiled_kernel.h; values cross between buffers (layouts) and
// literals (row-major) on every run.
#ifndef PASSLAB_CORE_RUNTIME_INSTRUCTION_EVALUATOR_H_
#define PASSLAB_CORE_RUNTIME_INSTRUCTION_EVALUATOR_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/shape.h"

namespace passlab {

class HloInstruction;

class InstructionEvaluator {
 public:
  // A computation holding parameters and a copy of `inst` (its called
  // computations are shared with the original module, which must outlive
  // this object).
  static absl::StatusOr<std::unique_ptr<InstructionEvaluator>> Create(const HloInstruction& inst);

  absl::Status Run(absl::Span<void* const> buffers) const;

  // Leaves of the operands (one per operand; operands must be arrays) and of
  // the result, in buffer order.
  const std::vector<Shape>& operand_shapes() const { return operand_shapes_; }
  const std::vector<Shape>& result_leaves() const { return result_leaves_; }

 private:
  InstructionEvaluator() = default;
  std::unique_ptr<HloComputation> computation_;
  std::vector<Shape> operand_shapes_;
  std::vector<Shape> result_leaves_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_INSTRUCTION_EVALUATOR_H_
