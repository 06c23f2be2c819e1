// ConvRewriter ("conv-rewriter"; GpuConvRewriter in seed 003's XLA): turns
// convolutions into the DNN library's calls (core/libcall), recognising the
// two gradient forms a framework hands XLA, tried in XLA's order
// (conv_rewriter.cc CreateCustomCallHelper):
//   backward input   conv(dy, reverse(w)) (the reverse on exactly the kernel's
//                    spatial dims; reshape(reverse(w)) for a 1-D convolution
//                    written as 2-D), or an lhs-dilated conv(dy, w) with a
//                    1x1 or constant kernel (a constant is reversed)
//                                                        => __dnn$convBackwardInput(dy, w)
//   backward filter  conv(x, dy), stride 1, that does not look like a forward
//                    convolution (result batch = x's batch and result
//                    features = dy's output features, kernel no larger than
//                    the result) and either has window dilation (the
//                    forward stride) or a kernel larger than the result in
//                    every spatial dimension  => __dnn$convBackwardFilter(x, dy)
//   forward          everything else with at most 3 spatial dims, no empty
//                    operand, and a window reversed in all or none of its
//                    dims (2-D) or none (other ranks); base dilation is
//                    kept for ConvPaddingLegalization => __dnn$convForward(x, w)
// No gradient form matches a window with window_reversal (XLA: "Window
// reversal field not supported"); such a convolution runs forward.
// Each call carries the window and dim_labels of the *forward* convolution
// relating input, filter and output, the convolution's operand_precision,
// and returns (result, u8[0] scratch), read back through get-tuple-element
// 0. The forward padding is chosen as XLA does: symmetric when the gradient
// allows it, else the nearest valid amount, which ConvPaddingLegalization
// later makes explicit.
//
// Groups (grouped and depthwise convolutions), as XLA's conv_rewriter.cc:
//   forward          feature_group_count G               => the call's G
//   backward filter  batch_group_count G (how JAX and PyTorch/XLA write a
//                    grouped filter gradient)            => the call's G
//   backward input   feature_group_count G, the kernel regrouped by a
//                    reshape/transpose into the forward filter (enabled
//                    here; XLA keeps it off for cuDNN)  => the call's G;
//                    here the kernel's reversal may also be spelled as a
//                    window reversed in every spatial dimension
//   other batch-grouped convolutions: x's batch groups move into its
//                    features (reshape/transpose)        => forward call, G
// XLA:GPU runs no ConvolutionGroupConverter before this pass any more (only
// XLA:CPU does, cpu_compiler.cc); batch groups reach it and are handled here.
//
// Not rewritten (the backend runs them as loop nests): types the DNN library
// does not compute in (f64, integers; XLA rewrites those too).
// Optional: without it every convolution runs as a loop nest.
#ifndef PASSLAB_PASSES_LIBCALL_CONV_REWRITER_H_
#define PASSLAB_PASSES_LIBCALL_CONV_REWRITER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ConvRewriter : public HloModulePass {
 public:
  std::string_view name() const override { return "conv-rewriter"; }

  // XLA's ConvRewriter::ConvIsLowerable: `conv` (a convolution) has one of
  // the three forms above (forward, filter gradient, input gradient),
  // whatever its element type. XLA:GPU's algebraic simplifier asks it before
  // swapping a convolution's operands (conv_is_lowerable_callback).
  static bool ConvIsLowerable(HloInstruction* conv);

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_CONV_REWRITER_H_
