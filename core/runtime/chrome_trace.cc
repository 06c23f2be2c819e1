#include "core/runtime/chrome_trace.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace passlab {

std::string ChromeTraceJson(absl::Span<const KernelRecord> records) {
  std::vector<const KernelRecord*> sorted;
  for (const KernelRecord& r : records) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(), [](const KernelRecord* a, const KernelRecord* b) {
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
    return a->name < b->name;
  });
  // One pid per device, numbered in order of first appearance.
  std::map<std::string, int> pids;
  nlohmann::json events = nlohmann::json::array();
  for (const KernelRecord* r : sorted) {
    std::string device = r->device.empty() ? "cpu" : r->device;
    auto [it, inserted] = pids.emplace(device, static_cast<int>(pids.size()));
    if (inserted) {
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", it->second}, {"args", {{"name", device}}}});
    }
    nlohmann::json args = {
        {"detail", r->detail},         {"hlo_instruction", r->hlo_instruction}, {"hlo_computation", r->hlo_computation},
        {"bytes_read", r->bytes_read}, {"bytes_written", r->bytes_written},     {"flops", r->flops}};
    events.push_back({{"ph", "X"},
                      {"name", r->name},
                      {"cat", KernelKindName(r->kind)},
                      {"pid", it->second},
                      {"tid", r->thread},
                      {"ts", static_cast<double>(r->start_ns) / 1000.0},
                      {"dur", static_cast<double>(r->duration_ns()) / 1000.0},
                      {"args", std::move(args)}});
  }
  nlohmann::json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  return trace.dump();
}

}  // namespace passlab
