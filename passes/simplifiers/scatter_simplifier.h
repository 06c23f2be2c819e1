// ScatterSimplifier ("scatter_simplifier", as XLA's
// xla/service/scatter_simplifier.cc): rewrites every scatter into XLA's
// canonical ("simplified") form, the scatter counterpart of GatherSimplifier:
//   indices [N, K] with index_vector_dim = 1, no inserted_window_dims,
//   update_window_dims = {1..operand rank}, updates [N, window sizes...]
// (scatter_dims_to_operand_dims stays as it is). A scatter is simplified
// when its index vector dimension is the last, its updates have at most one
// scatter dimension, before sorted window dimensions, and nothing is
// inserted. The indices are reshaped (and transposed when the index vector
// dimension is not last); the updates get their scatter dimensions moved
// first and flattened into N and a size-1 window dimension for every
// inserted one. A scatter into a scalar becomes its computation applied to
// the operands and updates. Variadic scatters are handled; scatters with
// batching dimensions or dynamic shapes are left alone.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_SCATTER_SIMPLIFIER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_SCATTER_SIMPLIFIER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class ScatterSimplifier : public OpExpanderPass {
 public:
  std::string_view name() const override { return "scatter_simplifier"; }
  // Whether the scatter already has the canonical form.
  static bool IsSimplifiedScatter(const HloInstruction& scatter);

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_SCATTER_SIMPLIFIER_H_
