// GpusolverRewriter ("gpusolver-rewriter"): rewrites f32/f64 cholesky into
// the solver library call XLA:GPU makes (cuSOLVER potrf there; here
// `__lapack$potrf`, which the CPU runtime runs on OpenBLAS's LAPACK):
//   cholesky(a) => select(info == 0, factor, NaN)
//     where (factor, info) = __lapack$potrf(a)
// so that a matrix that is not positive definite gives NaN, as cholesky
// defines. Runs first in conv-canonicalization, as in XLA. Optional: the
// runtime runs a cholesky left alone as a reference routine.
#ifndef PASSLAB_PASSES_LIBCALL_GPUSOLVER_REWRITER_H_
#define PASSLAB_PASSES_LIBCALL_GPUSOLVER_REWRITER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class GpusolverRewriter : public OpExpanderPass {
 public:
  std::string_view name() const override { return "gpusolver-rewriter"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_GPUSOLVER_REWRITER_H_
