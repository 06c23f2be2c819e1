// GemvRewriter ("gemv-rewriter", XLA's
// xla/hlo/transforms/simplifiers/gemv_rewriter.cc): a matrix-vector or
// vector-matrix dot (one operand with exactly one non-contracting dimension,
// the other with none) gets a trivial minor-most dimension on the vector
// operand and on the product, so the gemm rewriter sees a matrix-matrix
// product: [m,n] @ [n] becomes bitcast([m,n] @ [n,1]). Layout-sensitive
// (the default, after layout normalization) it adds bitcasts and requires
// descending layouts ("Layout is not normalized." otherwise); before layout
// assignment it adds reshapes and leaves dots with other layouts alone.
// Expects DotDimensionNormalizer to have left at most one non-contracting
// dimension per operand; runs just before the gemm rewriter.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_GEMV_REWRITER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_GEMV_REWRITER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct GemvRewriterOptions {
  bool is_layout_sensitive = true;
};

class GemvRewriter : public HloModulePass {
 public:
  explicit GemvRewriter(GemvRewriterOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "gemv-rewriter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  GemvRewriterOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_GEMV_REWRITER_H_
