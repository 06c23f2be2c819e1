// TransposeFolding ("transpose-folding"): folds a transpose feeding a dot or
// a convolution into the consumer's dimension numbers, so GemmRewriter (and
// the library calls) read the untransposed operand, as XLA's TransposeFolding
// (xla/service/transpose_folding.cc):
//  - dot: both operands of rank >= 2; an operand that is a non-identity
//    transpose folds when the operand rule allows it. XLA's default rule
//    (IsRowColumnTransposeDotOperand) takes a transpose that keeps the
//    batch dimensions in place, with one contracting and one free
//    dimension (a row/column swap a gemm reads either way).
//  - convolution: every transpose operand folds (dimension numbers name
//    every dimension), unless the convolution rule says never.
// Opportunities are collected over all non-fusion computations first, then
// folded. The transposes stay (dead ones go with DCE's successor rules:
// replacing an instruction removes operands it leaves unused).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_TRANSPOSE_FOLDING_H_
#define PASSLAB_PASSES_SIMPLIFIERS_TRANSPOSE_FOLDING_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct TransposeFoldingOptions {
  // Which dot operands fold (XLA's dot_can_fold_transpose_operand).
  enum class DotRule {
    kRowColumn,  // XLA's default, IsRowColumnTransposeDotOperand
    kAlways,     // every non-identity transpose operand
    kNever,      // none (XLA:GPU's simplification loop: convolutions only)
  };
  // Which convolution operands fold (XLA's transposable_conv_operands).
  enum class ConvRule {
    kAlways,  // XLA's default, AlwaysFoldTranspose
    kNever,   // NeverFoldTranspose
  };
  DotRule dot_rule = DotRule::kRowColumn;
  ConvRule conv_rule = ConvRule::kAlways;
};

class TransposeFolding : public HloModulePass {
 public:
  explicit TransposeFolding(TransposeFoldingOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "transpose-folding"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  TransposeFoldingOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_TRANSPOSE_FOLDING_H_
