// Convolution4DExpander ("convolution_4d_expander", as XLA's
// xla/hlo/transforms/expanders/convolution_4d_expander.cc): a convolution
// with four spatial dimensions, some of them trivial (input size 1 and no
// padding: one output element), becomes a convolution over the others:
// input and kernel are reshaped without the trivial dimensions, and the
// result is reshaped back. Libraries (cuDNN; oneDNN here) take at most three
// spatial dimensions, so this lets such convolutions become library calls.
// Runs before conv-canonicalization.
#ifndef PASSLAB_PASSES_EXPANDERS_CONVOLUTION_4D_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_CONVOLUTION_4D_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class Convolution4DExpander : public OpExpanderPass {
 public:
  std::string_view name() const override { return "convolution_4d_expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_CONVOLUTION_4D_EXPANDER_H_
