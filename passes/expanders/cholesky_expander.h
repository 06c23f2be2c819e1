// CholeskyExpander ("cholesky_expander"): replaces cholesky with plain HLO,
// XLA's blocked left-looking algorithm. The matrices (leading dimensions
// flattened into one batch) are factored a column panel of `block_size`
// columns at a time: the panel is updated with the columns already
// factored (one batched dot), its diagonal block is factored by an
// unblocked while loop (column j: l[:, j] = (a[:, j] - l l[j, :]^T) /
// sqrt(...)), and the rows below it by a triangular-solve against that
// block. An upper factorization factors the transposed matrix and
// transposes back. Reads only the referenced triangle; the other one is
// zero; a matrix that is not positive definite becomes NaN (as the
// evaluator's and the potrf call's cholesky define).
//
// Matches real floating-point cholesky (complex stays for the runtime's
// reference routine). Runs after gpusolver-rewriter, which takes f32/f64:
// this pass expands what the rewriter leaves (f16/bf16), or everything when
// the rewriter is disabled. Optional: the runtime runs cholesky as it is.
#ifndef PASSLAB_PASSES_EXPANDERS_CHOLESKY_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_CHOLESKY_EXPANDER_H_

#include <cstdint>

#include "core/pass/op_expander_pass.h"

namespace passlab {

struct CholeskyExpanderOptions {
  // Columns per panel; matrices of at most this order take the unblocked
  // loop alone (XLA's default is 128).
  int64_t block_size = 128;
};

class CholeskyExpander : public OpExpanderPass {
 public:
  explicit CholeskyExpander(CholeskyExpanderOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "cholesky_expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;

 private:
  CholeskyExpanderOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_CHOLESKY_EXPANDER_H_
