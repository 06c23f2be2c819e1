// GemmRewriter ("cublas-gemm-rewriter"): turns each floating-point dot into a
// `__blas$gemm` library call (core/libcall) carrying the dot's dimension
// numbers, then folds the elementwise ops around it into the call, as XLA:GPU
// does for cuBLAS(Lt):
//   multiply(gemm, broadcast(c))        => gemm with alpha *= c
//   add(gemm, C)   (C same shape)       => gemm with beta = 1 and operand C
//   add(gemm, broadcast(v, {last dim})) => epilogue BIAS
//   maximum(gemm, broadcast(0))         => epilogue RELU / BIAS_RELU
// A fold needs the gemm to have no other user (it disappears into the fused
// call), and happens in the order of D = act(alpha*A*B + beta*C + bias);
// like XLA, C must also have no other user (the library writes D over it).
// Last, as XLA's GemmWorkspaceRewriteVisitor does, every gemm call gets a
// workspace: its result becomes the tuple (result, s8[workspace bytes]) and
// its users read get-tuple-element 0 (xla/backends/gpu/transforms/
// gemm_rewriter.cc).
//
// Before: TransposeFolding, so transposes already sit in the dimension
// numbers (the library reads either orientation); the dots need not be
// canonical. After: every rewritten dot is a tuple-shaped gemm call the
// runtime and the evaluator execute. Optional: without it the dots run as
// emitted loops.
#ifndef PASSLAB_PASSES_LIBCALL_GEMM_REWRITER_H_
#define PASSLAB_PASSES_LIBCALL_GEMM_REWRITER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct GemmRewriterOptions {
  // Fold bias vectors and relu into the call's epilogue (cuBLASLt's epilogues).
  bool fold_epilogues = true;
  // XLA's GemmRewriterOptions::BiasMode. kNoBias folds no add at all (no
  // beta*C, no bias epilogue), so that gemms whose sum is taken stay
  // independent and can run concurrently.
  enum class BiasMode { kBias, kNoBias };
  BiasMode bias_mode = BiasMode::kBias;
  // The major CUDA compute capability the calls are for; it sizes the
  // workspace (XLA's GemmConfig: 32 MiB from Hopper, 9.x, on; 4 MiB before).
  // passlab's GPUs are Hoppers.
  int compute_capability_major = 9;
};

class GemmRewriter : public HloModulePass {
 public:
  explicit GemmRewriter(GemmRewriterOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "cublas-gemm-rewriter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  GemmRewriterOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_GEMM_REWRITER_H_
