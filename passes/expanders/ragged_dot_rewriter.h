// RaggedDotRewriter ("ragged_dot_rewriter", XLA's
// xla/hlo/transforms/expanders/ragged_dot_rewriter.cc): a ragged-dot becomes
// a dense dot. The ragged operand gains a group dimension and is masked so
// that group g keeps only its rows (a cumulative sum of group_sizes, as a
// reduce-window, bounds each group): ragged non-contracting dims then
// contract the new dim against the rhs group dim; ragged contracting dims
// mask both operands and batch over the groups; ragged batch dims are a
// plain dot. XLA keeps ragged dots that cuDNN or hipBLASLt grouped GEMMs
// take; passlab has neither, so every ragged dot is rewritten. First in the
// optimization pipeline, as in XLA:GPU.
#ifndef PASSLAB_PASSES_EXPANDERS_RAGGED_DOT_REWRITER_H_
#define PASSLAB_PASSES_EXPANDERS_RAGGED_DOT_REWRITER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class RaggedDotRewriter : public OpExpanderPass {
 public:
  std::string_view name() const override { return "ragged_dot_rewriter"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_RAGGED_DOT_REWRITER_H_
