// DotStrengthReduction ("dot-strength-reduction", XLA's
// xla/backends/gpu/transforms/dot_strength_reduction.cc): rewrites a dot as
// broadcast + elementwise multiply + reduce when it is a vector-vector
// product (both operands only batch and contracting dimensions), or a
// matrix-vector product (or an s32 x s32 -> s32 dot whose rhs contracts
// dimension 1) that is small ((M + N) * K < 10^7) or that Triton's gemm
// fusion could not take on this GPU (its output/operand types, the dot's
// algorithm and the compute capability decide; XLA's legacy
// CanTritonHandleGEMM). Operands are converted to the dot's type,
// transposed to [batch, non-contracting, contracting], broadcast to
// [batch, lhs non-contracting, rhs non-contracting, contracting], multiplied
// as the dot's precision algorithm prescribes (the bf16/tf32 splits of
// DotAlgorithmRewriter) and reduced over the contracting dimensions in the
// gemm accumulator type (f32 for floats up to 32 bits), then converted back.
// Runs in XLA:GPU's optimization pipeline after ScatterSliceSimplifier and
// before the algebraic simplifier.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_DOT_STRENGTH_REDUCTION_H_
#define PASSLAB_PASSES_SIMPLIFIERS_DOT_STRENGTH_REDUCTION_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

struct DotStrengthReductionOptions {
  // The CUDA compute capability the Triton support rules are checked for.
  int compute_capability_major = 9;
  int compute_capability_minor = 0;
};

class DotStrengthReduction : public OpExpanderPass {
 public:
  explicit DotStrengthReduction(DotStrengthReductionOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "dot-strength-reduction"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* instruction) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* instruction) override;

 private:
  DotStrengthReductionOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_DOT_STRENGTH_REDUCTION_H_
