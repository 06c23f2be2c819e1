// TopkDecomposer ("topk-decomposer"): replaces topk with a sort and slices,
// as XLA does for the topk ops its TopK kernel does not take:
//   topk(x), k, largest => (slice(gte(s, 0)), slice(gte(s, 1)))
//     where s = sort(x, iota), dimensions={last}, is_stable=true,
//     comparator: a > b (largest) or a < b, in total order for floats
// and the first k of the sorted last dimension. The stable sort keeps the
// lower index first among equal values, as topk does. When no user reads
// the indices, only the values are sorted.
//
// Layouts are kept (the sort takes the operand's, the slices the topk
// results'). Runs first in XLA:GPU's optimization pipeline, before the
// comparison expander that rewrites its total-order comparator. Optional:
// the runtime runs topk as a routine.
#ifndef PASSLAB_PASSES_EXPANDERS_TOPK_DECOMPOSER_H_
#define PASSLAB_PASSES_EXPANDERS_TOPK_DECOMPOSER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class TopkDecomposer : public OpExpanderPass {
 public:
  std::string_view name() const override { return "topk-decomposer"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_TOPK_DECOMPOSER_H_
