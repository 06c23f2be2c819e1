// ConvPaddingLegalization ("conv-padding-legalization"; GpuConvPaddingLegalization
// in seed 003's XLA): makes every convolution call's padding what cuDNN
// takes — non-negative and the same on both sides of each spatial dimension
// — by moving the difference into explicit HLO around the call:
//   forward, fused forward, backward filter: the input gets an explicit pad
//     (and a slice for negative padding), the call keeps min(low, high) >= 0;
//   backward input: the call computes the gradient of a larger (less padded)
//     input and a slice cuts the requested part out.
// A backward input with negative padding is left alone (ConvRewriter never
// creates one; XLA does not legalize it either).
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
