// GemmAlgorithmPicker ("gemm-algorithm-picker"): autotunes every
// `__blas$gemm` call over the BLAS library's algorithms on this machine (see
// library_call_autotuner.h for the levels, cache and deny list) and records
// the fastest in the call's backend_config (selected_algorithm), which the
// runtime then uses.
//
// Before: GemmRewriter and everything that changes a gemm's operands (XLA
// runs it last, in nvptx post-layout-assignment part 2). Optional: an
// untuned call runs on the library's default.
#ifndef PASSLAB_PASSES_AUTOTUNE_GEMM_ALGORITHM_PICKER_H_
#define PASSLAB_PASSES_AUTOTUNE_GEMM_ALGORITHM_PICKER_H_

#include "core/pass/hlo_pass_interface.h"
#include "passes/autotune/library_call_autotuner.h"

namespace passlab {

class GemmAlgorithmPicker : public HloModulePass {
 public:
  explicit GemmAlgorithmPicker(AutotuneOptions options = {}) : options_(std::move(options)) {}
  std::string_view name() const override { return "gemm-algorithm-picker"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  AutotuneOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_AUTOTUNE_GEMM_ALGORITHM_PICKER_H_
