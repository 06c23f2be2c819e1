// GpuConvAlgorithmPicker ("gpu-conv-algorithm-picker"): autotunes every
// `__dnn$conv*` call over the DNN library's algorithms on this machine (see
// library_call_autotuner.h for the levels, cache and deny list) and records
// the fastest in the call's backend_config (algorithm.algo_id), which the
// runtime then uses.
//
// Before: the conv-canonicalization passes (it tunes calls, and the padding
// they end up with). Optional: an untuned call runs on the library's
// default algorithm.
#ifndef PASSLAB_PASSES_AUTOTUNE_GPU_CONV_ALGORITHM_PICKER_H_
#define PASSLAB_PASSES_AUTOTUNE_GPU_CONV_ALGORITHM_PICKER_H_

#include "core/pass/hlo_pass_interface.h"
#include "passes/autotune/library_call_autotuner.h"

namespace passlab {

class GpuConvAlgorithmPicker : public HloModulePass {
 public:
  explicit GpuConvAlgorithmPicker(AutotuneOptions options = {}) : options_(std::move(options)) {}
  std::string_view name() const override { return "gpu-conv-algorithm-picker"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  AutotuneOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_AUTOTUNE_GPU_CONV_ALGORITHM_PICKER_H_
