#include "analysis/kernel_estimates.h"

#include <map>
#include <utility>

#include "core/ir/hlo_computation.h"
#include "core/ir/str_util.h"

namespace passlab {

absl::StatusOr<std::optional<DeviceDescription>> CostModelDevice(const std::string& name,
                                                                 const std::string& cuda_device_description) {
  if (name == "none") return std::optional<DeviceDescription>();
  std::string resolved = name;
  if (name == "auto") {
    resolved = "cpu";
    if (!cuda_device_description.empty()) {
      resolved = "H100";
      for (const DeviceDescription& d : KnownDevices()) {
        if (d.name != "cpu" && cuda_device_description.find(d.name) != std::string::npos) resolved = d.name;
      }
    }
  }
  absl::StatusOr<DeviceDescription> device = DeviceByName(resolved);
  if (!device.ok()) return absl::InvalidArgumentError(StrCat("cost model: ", device.status().message()));
  return std::optional<DeviceDescription>(*device);
}

void AddCostModelEstimates(const HloModule& module, const DeviceDescription& device, KernelSummary& summary) {
  std::map<std::pair<std::string, std::string>, const HloInstruction*> by_name;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) by_name[{std::string(c->name()), std::string(i->name())}] = i;
  }
  for (KernelSummaryRow& r : summary.rows) {
    if (r.kind == KernelKind::kControlFlow) continue;
    auto it = by_name.find({r.computation, r.name});
    if (it == by_name.end()) continue;
    r.estimate_ns = static_cast<int64_t>(EstimateKernelTime(*it->second, device) * 1e9);
  }
}

}  // namespace passlab
