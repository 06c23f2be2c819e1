// GatherSimplifier ("gather_simplifier"): rewrites every gather into XLA's
// canonical ("simplified") form, the only form XLA:GPU's gather emitter and
// indexing analysis accept:
//   indices [N, K] with index_vector_dim = 1, start_index_map = {0..K-1},
//   no collapsed_slice_dims, offset_dims = {1..operand rank},
//   output [N, slice sizes...].
// The operand is transposed so the indexed dimensions come first, and the
// result is reshaped and transposed back to the original output. A gather
// with a zero slice size becomes a broadcast zero. Gathers with batching
// dimensions are left alone (XLA normalizes them first, in
// BatchedGatherScatterNormalizer).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_GATHER_SIMPLIFIER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_GATHER_SIMPLIFIER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class GatherSimplifier : public OpExpanderPass {
 public:
  std::string_view name() const override { return "gather_simplifier"; }
  // Whether the gather already has the canonical form.
  static bool IsSimplifiedGather(const HloInstruction& gather);

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_GATHER_SIMPLIFIER_H_
