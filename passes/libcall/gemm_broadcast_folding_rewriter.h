// GemmBroadcastFoldingRewriter ("cublas-gemm-broadcast-folding-rewriter"):
// folds a broadcast that only adds the batch dimensions of a gemm operand
// into the `__blas$gemm` call, as XLA:GPU does:
//   gemm(broadcast(x), y), broadcast adding exactly lhs_batch_dims
//     => gemm(x, y) with no lhs batch dimensions (batch stride 0)
// and the same for the rhs. The library then reads one matrix for every
// batch instead of the materialised copies. At most one side is folded
// (the other keeps the batch dimensions the result needs).
//
// After GemmRewriter (the calls exist), in post-layout-assignment. Optional:
// without it the broadcast runs as a kernel and the gemm reads its result.
#ifndef PASSLAB_PASSES_LIBCALL_GEMM_BROADCAST_FOLDING_REWRITER_H_
#define PASSLAB_PASSES_LIBCALL_GEMM_BROADCAST_FOLDING_REWRITER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class GemmBroadcastFoldingRewriter : public HloModulePass {
 public:
  std::string_view name() const override { return "cublas-gemm-broadcast-folding-rewriter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_GEMM_BROADCAST_FOLDING_REWRITER_H_
