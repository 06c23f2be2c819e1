// The cost model beside the measurement: each kernel of a profile gets the
// estimate of priority fusion's performance model (passes/fusion/
// gpu_performance_model.h) for the device the user names, so `passlab run`
// and the GUI's Kernels panel show where the model is wrong.
#ifndef PASSLAB_ANALYSIS_KERNEL_ESTIMATES_H_
#define PASSLAB_ANALYSIS_KERNEL_ESTIMATES_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"
#include "core/runtime/kernel_summary.h"
#include "passes/fusion/gpu_performance_model.h"

namespace passlab {

// The model's device for a name: "none" (nullopt), "auto" (the CPU entry
// for the CPU backend; for CUDA the GPU the device description names, H100
// when it names none the model knows), or a known device name.
absl::StatusOr<std::optional<DeviceDescription>> CostModelDevice(const std::string& name,
                                                                 const std::string& cuda_device_description = "");

// Sets estimate_ns of each row that is an instruction of `module` (found by
// computation and instruction name); control flow and unknown rows keep -1.
void AddCostModelEstimates(const HloModule& module, const DeviceDescription& device, KernelSummary& summary);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_KERNEL_ESTIMATES_H_
