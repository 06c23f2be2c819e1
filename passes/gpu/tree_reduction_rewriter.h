// TreeReductionRewriter ("tree-reduction-rewriter"), as XLA:GPU's
// xla/backends/gpu/transforms/tree_reduction_rewriter.cc: a reduce that the
// reduction emitter handles (IsReductionFromOrToContiguousDimensions) but
// not race-free in one kernel (row: minor reduced block over 1024 x 16
// elements or batch block over 8; column: reduced block over 32 x 128)
// becomes two reduces:
//   - a row reduction whose batch block is over 8: reduce the minor-most
//     reduced dimension first, then dimension 0;
//   - else the minor-most reduced dimension (size n) is padded with the
//     init value to k1 * k2 and bitcast into [k1, k2]: the inner reduce
//     reduces k2 (with the other reduced dimensions), the outer one k1.
//     k2 starts at floor(sqrt(n)) (at most the race-free bound) and moves
//     down to sqrt(n)/2 for less padding (a power of two on a tie); then the
//     pair is swapped when that suits vectorization (XLA's
//     ShouldSwapInnerAndOuterReducedMinorDimension), e.g.
//       f32[] reduce(f32[50048] x) => f32[] reduce(f32[128] reduce(f32[128,391] bitcast(x), dims={1}), dims={0})
// Each reduce is visited once (the new ones are not split again). Needs the
// reduced dimensions grouped (at most two: run after
// ReductionDimensionGrouper and ReductionSplitter). Reassociates the
// reduction (floating-point sums may change in the last bits, as on
// XLA:GPU).
#ifndef PASSLAB_PASSES_GPU_TREE_REDUCTION_REWRITER_H_
#define PASSLAB_PASSES_GPU_TREE_REDUCTION_REWRITER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class TreeReductionRewriter : public HloModulePass {
 public:
  std::string_view name() const override { return "tree-reduction-rewriter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_GPU_TREE_REDUCTION_REWRITER_H_
