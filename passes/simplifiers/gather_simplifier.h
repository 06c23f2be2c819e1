// GatherSimplifier ("gather_simplifier", as XLA's
// xla/hlo/transforms/simplifiers/gather_simplifier.cc): rewrites every
// gather into XLA's canonical ("simplified") form, the form XLA:GPU's
// gather emitter and indexing analysis take:
//   indices [N, K] with index_vector_dim = 1, no collapsed_slice_dims,
//   offset_dims = {1..operand rank}, output [N, slice sizes...]
// (start_index_map stays as it is). The indices are reshaped (and
// transposed when the index vector dimension is not last), and the result
// is reshaped without the collapsed dimensions, into the indices' batch
// dimensions, and transposed into the original output. A gather with a zero
// slice size becomes a broadcast zero, a gather from a scalar a broadcast of
// it. Gathers with batching dimensions are left alone (XLA normalizes them
// first, in BatchedGatherScatterNormalizer).
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
