// ScatterSimplifier ("scatter_simplifier"): rewrites every scatter into XLA's
// canonical ("simplified") form, the scatter counterpart of GatherSimplifier:
//   indices [N, K] with index_vector_dim = 1,
//   scatter_dims_to_operand_dims = {0..K-1}, no inserted_window_dims,
//   update_window_dims = {1..operand rank}, updates [N, window sizes...].
// The operands are transposed so the scattered dimensions come first (in
// scatter_dims_to_operand_dims order), the updates get their scatter
// dimensions flattened into N and a size-1 window dimension for every
// inserted one, and the results are transposed back. Variadic scatters are
// handled; scatters with batching dimensions or dynamic shapes are left
// alone.
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
