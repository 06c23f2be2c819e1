// DotDimensionNormalizer ("dot_dimension_normalizer", XLA's
// xla/hlo/transforms/dot_dimension_normalizer.cc): gives every dot at most
// one contracting dimension per operand, and, with
// normalize_noncontracting_dimensions, at most one non-contracting one. Each
// operand's dimensions of a category are transposed to be consecutive (last,
// in the listed order, when they are not) and reshaped into one; a chain of
// transposes, reshapes and bitcasts already feeding the operand is folded
// with those into the fewest reshape/transpose steps from its head. A dot
// whose shape changes is reshaped back to the original. Runs in the
// optimization pipeline after DotMerger, and again before GemvRewriter; after
// it the gemm rewriter sees a single K (and M/N) per side.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_DOT_DIMENSION_NORMALIZER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_DOT_DIMENSION_NORMALIZER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct DotDimensionNormalizerOptions {
  bool normalize_noncontracting_dimensions = false;
};

class DotDimensionNormalizer : public HloModulePass {
 public:
  explicit DotDimensionNormalizer(DotDimensionNormalizerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "dot_dimension_normalizer"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  DotDimensionNormalizerOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_DOT_DIMENSION_NORMALIZER_H_
