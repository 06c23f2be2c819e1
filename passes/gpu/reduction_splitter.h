// ReductionSplitter ("reduction-splitter"), as XLA:GPU's
// xla/backends/gpu/transforms/reduction_splitter.cc: a single-output reduce
// over two or more dimensions that the reduction emitter cannot do as one
// row or column reduction (!IsReductionFromOrToContiguousDimensions, e.g.
// reduce(f32[a,b,c,d], dims={0,2})) is split in two: first over its
// largest reduced dimension (the first of equals), which shrinks the data
// most, then over the rest. With ignore_small_dims, not when that dimension
// has 8 elements or fewer. Runs after ReductionDimensionGrouper (which
// merges adjacent reduced dimensions) and ReductionLayoutNormalizer
// (default layouts).
#ifndef PASSLAB_PASSES_GPU_REDUCTION_SPLITTER_H_
#define PASSLAB_PASSES_GPU_REDUCTION_SPLITTER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct ReductionSplitterOptions {
  bool ignore_small_dims = true;  // XLA:GPU's pipeline setting
};

class ReductionSplitter : public HloModulePass {
 public:
  explicit ReductionSplitter(ReductionSplitterOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "reduction-splitter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  ReductionSplitterOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_GPU_REDUCTION_SPLITTER_H_
