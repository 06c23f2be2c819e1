// ConfigAssigner ("config-assigner"): today's XLA:GPU single autotuner
// (xla/service/gpu/autotuning/config_assigner_pass.{h,cc}), which replaced
// the per-library pickers (GpuConvAlgorithmPicker, GemmAlgorithmPicker) of
// the seed era. It runs once, after fusion (XLA's "autotuner" pipeline,
// right after a FusionWrapper), and assigns every library call its
// algorithm: each call's candidates are timed where the session's timer
// says (the CPU backend, or the CUDA runtime's timer with the device in
// every cache key), consulting and filling one autotune cache for both
// families, so a call tuned once on a device is a cache hit afterwards.
// Same levels, deny list and red-zone checks as the pickers
// (library_call_autotuner.h). Optional: an untuned call runs on its
// library's default algorithm.
#ifndef PASSLAB_PASSES_AUTOTUNE_CONFIG_ASSIGNER_H_
#define PASSLAB_PASSES_AUTOTUNE_CONFIG_ASSIGNER_H_

#include "core/pass/hlo_pass_interface.h"
#include "passes/autotune/library_call_autotuner.h"

namespace passlab {

class ConfigAssigner : public HloModulePass {
 public:
  explicit ConfigAssigner(AutotuneOptions options = {}) : options_(std::move(options)) {}
  std::string_view name() const override { return "config-assigner"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  AutotuneOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_AUTOTUNE_CONFIG_ASSIGNER_H_
