// CudnnPadForConvolutions ("cudnn_pad_for_convolutions"): pads the feature
// dimensions of forward convolution calls in a narrow float type (f16,
// bf16) to multiples of 8, the channel counts the DNN library's tensor-core
// kernels want (XLA:GPU does this for cuDNN). Input features are padded with
// zeros on input and filter, output features on filter (and bias and side
// input of fused calls), and the result is sliced back:
//   conv(x, w) => slice(conv(pad(x), pad(w)))
// Zero channels add nothing to the sums, so the result is unchanged. A call
// whose padding would touch more than 35% more bytes is left alone, as are
// grouped convolutions. Runs after conv-canonicalization (calls exist and
// their paddings are legal), before the algorithm picker; constant folding
// after it folds pads of constant filters.
#ifndef PASSLAB_PASSES_LIBCALL_CUDNN_PAD_FOR_CONVOLUTIONS_H_
#define PASSLAB_PASSES_LIBCALL_CUDNN_PAD_FOR_CONVOLUTIONS_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct CudnnPadForConvolutionsOptions {
  int64_t pad_to_multiple_of = 8;
  // Padding may grow the bytes a call touches (operands and result) by at
  // most this factor.
  double max_bytes_growth = 1.35;
};

class CudnnPadForConvolutions : public HloModulePass {
 public:
  explicit CudnnPadForConvolutions(CudnnPadForConvolutionsOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "cudnn_pad_for_convolutions"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  CudnnPadForConvolutionsOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_CUDNN_PAD_FOR_CONVOLUTIONS_H_
