// CudnnFusedConvRewriter ("cudnn-fused-convolution-rewriter"): folds the
// elementwise ops that follow a forward convolution call into one
// `__dnn$convBiasActivationForward` call computing
//   act(conv_result_scale * conv(x, w) + side_input_scale * side + bias)
// as cuDNN's fused convolution (and oneDNN's post-ops) does:
//   multiply(conv, broadcast(c))              => conv_result_scale *= c
//   add(conv, broadcast(b, {feature dim}))    => bias b
//   add(conv', side) / add(conv', c * side)   => side input (scale 1 or c)
//   maximum(conv', broadcast(0))              => activation kRelu
// in that order (conv' = a call already holding what comes before; a
// missing bias is a zero vector). The fused call keeps the forward call's
// window, dim_labels, groups and operand_precision. Each fold needs the call's result to have
// no other user. f32 only: folding in a narrower type would round once
// where the plain ops round after each step.
//
// Before: ConvRewriter (it matches forward convolution calls). After: fewer
// kernels and buffers per convolution. Optional: without it the bias, side
// input and activation run as ordinary kernels.
#ifndef PASSLAB_PASSES_LIBCALL_CUDNN_FUSED_CONV_REWRITER_H_
#define PASSLAB_PASSES_LIBCALL_CUDNN_FUSED_CONV_REWRITER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class CudnnFusedConvRewriter : public HloModulePass {
 public:
  std::string_view name() const override { return "cudnn-fused-convolution-rewriter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_CUDNN_FUSED_CONV_REWRITER_H_
