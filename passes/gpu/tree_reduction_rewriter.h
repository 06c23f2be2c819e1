// TreeReductionRewriter ("tree_reduction_rewriter", XLA:GPU's
// GpuTreeReductionRewriter as seed 003 section 3.8 describes it): rewrites a
// reduce that one reduction kernel cannot do without atomics into two
// reduces (a tree), each race-free.
//
// Tiling (GetReductionTiling): row {min(d0, 8), 1, 16}, column {1, 128, 1},
// for the reduction's [d0, d1, d2] blocks (see reduction_utils.h).
// Race-free, left alone: row d2 <= 1024 * 16 and d0 <= 8; column
// d1 <= 32 * 128. Otherwise:
//   - row reduction over a batch block larger than tile[0] (d0 > 8):
//     reduce the minor reduced dimension first, then the rest;
//   - else the sqrt(n) rewrite of the last reduced dimension (size n):
//     M = ceil(sqrt(n)), Q = ceil(n / M); pad that dimension with the init
//     value to Q*M, reshape it to [Q, M], reduce M (with the other reduced
//     dims) in the inner reduce and Q in the outer one, e.g.
//       f32[B] reduce(f32[A,B,C], dims={0,2})
//       => f32[B] reduce(f32[B,Q] reduce(f32[A,B,Q,M] reshape(pad(x)), dims={0,3}), dims={1})
//     (Seed 003's formula prints num_fit as ceil(sqrt(n))^2; its own
//     example pads to a multiple of M and splits into [Q, M], which only
//     makes sense with M = ceil(sqrt(n)), XLA's choice.)
// New reduces are rewritten again until all are race-free. Needs default
// layouts and grouped reduced dimensions: run after
// ReductionLayoutNormalizer, ReductionDimensionGrouper and ReductionSplitter.
// Reassociates the reduction (floating-point sums may change in the last
// bits, as on XLA:GPU).
#ifndef PASSLAB_PASSES_GPU_TREE_REDUCTION_REWRITER_H_
#define PASSLAB_PASSES_GPU_TREE_REDUCTION_REWRITER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class TreeReductionRewriter : public HloModulePass {
 public:
  std::string_view name() const override { return "tree_reduction_rewriter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_GPU_TREE_REDUCTION_REWRITER_H_
