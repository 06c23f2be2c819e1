// ConvPaddingLegalization ("conv-padding-legalization"; GpuConvPaddingLegalization
// in seed 003's XLA): makes every convolution call's window what cuDNN
// takes — padding non-negative and the same on both sides of each spatial
// dimension, no base dilation — by moving the rest into explicit HLO around
// the call, as XLA's gpu conv_padding_legalization.cc does:
//   forward, fused forward: when the padding is uneven or the input
//     base-dilated, all positive padding and the base dilation go into one
//     pad of the input (the call keeps no padding); negative padding becomes
//     a slice; a window dilation then becomes an interior pad of the kernel;
//   backward filter: the difference of uneven non-negative padding goes into
//     a pad of the input, the call keeps min(low, high);
//   backward input: the call computes the gradient of a larger (less padded)
//     input and a slice cuts the requested part out.
// Backward calls with negative padding are left alone (ConvRewriter never
// creates them; XLA does not legalize them either).
//
// Before: ConvRewriter / CudnnFusedConvRewriter, which choose paddings. After:
// every call has symmetric non-negative padding. Optional on the CPU
// backend: oneDNN takes asymmetric padding, and a call it does not take runs
// on the reference algorithm (seed 003 saw XLA:GPU crash without it).
#ifndef PASSLAB_PASSES_LIBCALL_CONV_PADDING_LEGALIZATION_H_
#define PASSLAB_PASSES_LIBCALL_CONV_PADDING_LEGALIZATION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ConvPaddingLegalization : public HloModulePass {
 public:
  std::string_view name() const override { return "conv-padding-legalization"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_CONV_PADDING_LEGALIZATION_H_
