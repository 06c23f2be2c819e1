// DotNormalizer ("dot_normalizer", XLA's
// xla/backends/gpu/transforms/dot_normalizer.cc): a dot without contracting
// dimensions (an outer product, batched or not) gets a trivial one: each
// operand is bitcast to its shape plus a minor-most dimension of size 1,
// which the dot then contracts. The product is unchanged, and the gemm
// rewriter and Triton gemm fusion, which need a K, take it. Runs after
// layout assignment, in XLA:GPU's hlo normalization before
// DotDimensionNormalizer and GemvRewriter.
#ifndef PASSLAB_PASSES_LIBCALL_DOT_NORMALIZER_H_
#define PASSLAB_PASSES_LIBCALL_DOT_NORMALIZER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class DotNormalizer : public HloModulePass {
 public:
  std::string_view name() const override { return "dot_normalizer"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_DOT_NORMALIZER_H_
