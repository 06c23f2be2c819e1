// TriangularSolveRewriter ("triangular-solve-rewriter"): rewrites f32/f64
// triangular-solve into the BLAS trsm call XLA:GPU makes (cuBLAS there;
// here `__blas$trsm`, which the CPU runtime runs with OpenBLAS's
// cblas_?trsm), carrying the solve's options in the backend_config.
// Optional: the runtime runs a triangular-solve left alone as a reference
// routine.
#ifndef PASSLAB_PASSES_LIBCALL_TRIANGULAR_SOLVE_REWRITER_H_
#define PASSLAB_PASSES_LIBCALL_TRIANGULAR_SOLVE_REWRITER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class TriangularSolveRewriter : public OpExpanderPass {
 public:
  std::string_view name() const override { return "triangular-solve-rewriter"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_TRIANGULAR_SOLVE_REWRITER_H_
