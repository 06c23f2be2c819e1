// BatchNormExpander ("batchnorm_expander"): rewrites batch-norm-training,
// -inference and -grad into reductions and elementwise arithmetic (XLA's
// formulas: var = E[x^2] - E[x]^2; dx = scale * rsqrt(var+eps) *
// (dy - mean(dy) - (x-mean) * mean(dy*(x-mean)) / (var+eps))). Seed 003 saw
// ResNet-50 get 20% slower without it on GPU. With a sharding on the op, the
// expansion is sharded as XLA's batchnorm_expander.cc does it: instructions
// shaped like the activation get its sharding, the others the op's one
// device (or replication). It can create zero-sized ops, so
// ZeroSizedHloElimination runs after it.
#ifndef PASSLAB_PASSES_EXPANDERS_BATCHNORM_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_BATCHNORM_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

struct BatchNormExpanderOptions {
  bool rewrite_training_op = true;
  bool rewrite_inference_op = true;
  bool rewrite_grad_op = true;
};

class BatchNormExpander : public OpExpanderPass {
 public:
  explicit BatchNormExpander(BatchNormExpanderOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "batchnorm_expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;

 private:
  // The expansion itself; ExpandInstruction then shards what it added.
  absl::StatusOr<HloInstruction*> Expand(HloInstruction* inst);

  BatchNormExpanderOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_BATCHNORM_EXPANDER_H_
