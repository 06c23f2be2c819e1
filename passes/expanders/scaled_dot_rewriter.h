// ScaledDotRewriter ("scaled-dot-rewriter", XLA's
// xla/backends/gpu/transforms/scaled_dot_rewriter.cc): scaled-dot(lhs, rhs,
// lhs_scale, rhs_scale) becomes dot(lhs * broadcast(lhs_scale), rhs *
// broadcast(rhs_scale)). Each scale element covers a block of operand_dim /
// scale_dim consecutive elements per dim (broadcast into [.., scale_dim,
// block, ..] and reshaped to the operand's shape); a scalar scale is no
// scale. Operands and scales are first converted to a common type (bf16 when
// both are narrower than 16 bits, else the wider one, f32 for two 16-bit
// types), the dot runs in that type and converts to the result type. XLA
// keeps scaled dots a backend (cuDNN, Triton) runs natively; passlab's
// backends have none, so every scaled dot is rewritten. First in the
// optimization pipeline, after RaggedDotRewriter, as in XLA:GPU.
#ifndef PASSLAB_PASSES_EXPANDERS_SCALED_DOT_REWRITER_H_
#define PASSLAB_PASSES_EXPANDERS_SCALED_DOT_REWRITER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class ScaledDotRewriter : public OpExpanderPass {
 public:
  std::string_view name() const override { return "scaled-dot-rewriter"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_SCALED_DOT_REWRITER_H_
