// CudnnSimplifyPadding ("cudnn_simplify_padding"), as XLA:GPU's
// xla/backends/gpu/transforms/cudnn_simplify_padding.cc: folds away the
// slice-then-pad that CudnnPadForConvolutions leaves between convolution
// calls when the sliced-off output features are known to be zero.
//
// A forward convolution call (__dnn$convForward or
// __dnn$convBiasActivationForward, XLA's __cudnn$ spellings too) whose
// filter is zero in its last N output features (the filter is a pad with
// zero padding_high N on the output-feature dimension, or a constant whose
// trailing N output features are all zero) produces zeros in its last N
// output features. Then
//   pad(slice(gte(conv, 0)), 0)
// where the slice only cuts k <= N features off the end of the output
// feature dimension (starts 0, strides 1, other dimensions whole) and the
// pad adds no interior padding there becomes
//   pad(gte(conv, 0), 0) with edge_padding_high reduced by k
// (possibly negative, which trims). The result has the old pad's shape and
// values; the algebraic simplifier then removes a pad that became a no-op.
// Runs in conv_canonicalization after CudnnPadForConvolutions, CallInliner,
// TupleSimplifier and the algebraic simplifier, before ReshapeMover.
#ifndef PASSLAB_PASSES_LIBCALL_CUDNN_SIMPLIFY_PADDING_H_
#define PASSLAB_PASSES_LIBCALL_CUDNN_SIMPLIFY_PADDING_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class CudnnSimplifyPadding : public HloModulePass {
 public:
  std::string_view name() const override { return "cudnn_simplify_padding"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_CUDNN_SIMPLIFY_PADDING_H_
