// DotDecomposer ("dot_decomposer"): rewrites every dot into the canonical
// form GemmRewriter and the emitters expect (seed 003): lhs [batch..., M, K],
// rhs [batch..., K, N], batch dimensions first and in order, exactly one
// non-contracting and one contracting dimension per operand. Operands are
// transposed and reshaped into that form and the result reshaped back.
#ifndef PASSLAB_PASSES_EXPANDERS_DOT_DECOMPOSER_H_
#define PASSLAB_PASSES_EXPANDERS_DOT_DECOMPOSER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class DotDecomposer : public OpExpanderPass {
 public:
  std::string_view name() const override { return "dot_decomposer"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

// True when the dot already has the canonical form.
bool IsCanonicalDot(const HloInstruction& dot);

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_DOT_DECOMPOSER_H_
