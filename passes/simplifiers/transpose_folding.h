// TransposeFolding ("transpose-folding"): folds a transpose feeding a dot or
// a convolution into the consumer's dimension numbers, so GemmRewriter (and
// the library calls) see the untransposed operand. For dots, the operand's
// free dimensions must keep their order (otherwise the result would be
// permuted); convolution dimension numbers name every dimension, so any
// transpose folds.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_TRANSPOSE_FOLDING_H_
#define PASSLAB_PASSES_SIMPLIFIERS_TRANSPOSE_FOLDING_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class TransposeFolding : public HloModulePass {
 public:
  std::string_view name() const override { return "transpose-folding"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_TRANSPOSE_FOLDING_H_
