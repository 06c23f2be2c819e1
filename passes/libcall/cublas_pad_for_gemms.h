// CublasPadForGemms ("cublas-pad-for-gemms"): pads the matrix dimensions
// (M, K, N) of canonical dots in one narrow type up to a multiple of a given
// size with zeros and slices the product back, as XLA:GPU does for bf16/f16
// (multiples of 8 are what tensor cores take; zero rows and columns do not
// change the product):
//   dot([b.., M, K], [b.., K, N]) => slice(dot(pad(lhs), pad(rhs)))
//
// Before: DotDecomposer (canonical dots only) and GemmRewriter (the padded dot
// becomes the gemm); constant folding after it folds pads of constants.
// Optional.
#ifndef PASSLAB_PASSES_LIBCALL_CUBLAS_PAD_FOR_GEMMS_H_
#define PASSLAB_PASSES_LIBCALL_CUBLAS_PAD_FOR_GEMMS_H_

#include "core/ir/primitive_type.h"
#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct CublasPadForGemmsOptions {
  PrimitiveType datatype = PrimitiveType::kBF16;
  int64_t pad_to_multiple_of = 8;
};

class CublasPadForGemms : public HloModulePass {
 public:
  explicit CublasPadForGemms(CublasPadForGemmsOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "cublas-pad-for-gemms"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  CublasPadForGemmsOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_CUBLAS_PAD_FOR_GEMMS_H_
