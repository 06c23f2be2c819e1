// ConvRewriter ("conv-rewriter"; GpuConvRewriter in seed 003's XLA): turns
// convolutions into the DNN library's calls (core/libcall), recognising the
// two gradient forms a framework hands XLA:
//   forward          conv(x, w)                          => __dnn$convForward(x, w)
//   backward input   conv(dy, w) with lhs_dilation = the forward stride and
//                    the kernel reversed (window_reversal, or a reverse op
//                    on the kernel's spatial dims)       => __dnn$convBackwardInput(dy, w)
//   backward filter  conv(x, dy) with the forward stride as rhs_dilation,
//                    batch and feature of x swapped      => __dnn$convBackwardFilter(x, dy)
// Each call carries the window and dim_labels of the *forward* convolution
// relating input, filter and output, and returns (result, u8[0] scratch),
// read back through get-tuple-element 0. A stride-1 convolution is taken for
// a filter gradient when its window is larger than its output (the gradient
// convolves the whole image with the whole output gradient); a stride-1
// reversed convolution is a backward input. The forward padding is chosen
// as XLA does: symmetric when the gradient allows it, else the nearest valid
// amount, which ConvPaddingLegalization later makes explicit.
//
// The stride-1 rule is XLA's (a convolution whose kernel is no larger than
// its output is a forward one).
//
// Groups (grouped and depthwise convolutions), as XLA's conv_rewriter.cc:
//   forward          feature_group_count G               => the call's G
//   backward filter  batch_group_count G (how JAX and PyTorch/XLA write a
//                    grouped filter gradient)            => the call's G
//   backward input   feature_group_count G, the kernel regrouped by a
//                    reshape/transpose into the forward filter (enabled
//                    here; XLA keeps it off for cuDNN)  => the call's G
//   other batch-grouped convolutions: x's batch groups move into its
//                    features (reshape/transpose)        => forward call, G
// XLA:GPU runs no ConvolutionGroupConverter before this pass any more (only
// XLA:CPU does, cpu_compiler.cc); batch groups reach it and are handled here.
//
// Not rewritten (the backend runs them as loop nests): types the DNN library
// does not compute in (f64, integers), lhs-dilated convolutions that are not
// a backward input. Optional: without it every convolution runs as a loop
// nest.
#ifndef PASSLAB_PASSES_LIBCALL_CONV_REWRITER_H_
#define PASSLAB_PASSES_LIBCALL_CONV_REWRITER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ConvRewriter : public HloModulePass {
 public:
  std::string_view name() const override { return "conv-rewriter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_CONV_REWRITER_H_
