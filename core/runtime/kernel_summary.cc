#include "core/runtime/kernel_summary.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_format.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

std::string Time(int64_t ns) {
  if (ns >= 1000000000) return absl::StrFormat("%.3f s", ns / 1e9);
  if (ns >= 1000000) return absl::StrFormat("%.3f ms", ns / 1e6);
  if (ns >= 1000) return absl::StrFormat("%.1f us", ns / 1e3);
  return absl::StrFormat("%d ns", ns);
}

}  // namespace

KernelSummary SummarizeRecords(absl::Span<const KernelRecord> records, int64_t steps) {
  KernelSummary summary;
  summary.steps = std::max<int64_t>(steps, 1);
  // Grouped by (computation, name): deterministic order, whatever the input.
  std::map<std::pair<std::string, std::string>, std::vector<const KernelRecord*>> groups;
  for (const KernelRecord& r : records) {
    groups[{r.hlo_computation, r.name}].push_back(&r);
    if (r.kind != KernelKind::kControlFlow) summary.kernel_ns += r.duration_ns();
  }
  for (const auto& [key, group] : groups) {
    KernelSummaryRow row;
    row.computation = key.first;
    row.name = key.second;
    row.kind = group.front()->kind;
    row.detail = group.front()->detail;
    row.calls = static_cast<int64_t>(group.size());
    std::vector<int64_t> durations;
    for (const KernelRecord* r : group) {
      durations.push_back(r->duration_ns());
      row.total_ns += r->duration_ns();
      row.bytes += r->bytes_read + r->bytes_written;
      row.flops += r->flops;
    }
    std::sort(durations.begin(), durations.end());
    size_t n = durations.size();
    row.median_ns = n % 2 == 1 ? durations[n / 2] : (durations[n / 2 - 1] + durations[n / 2]) / 2;
    if (row.kind != KernelKind::kControlFlow && summary.kernel_ns > 0) {
      row.share = static_cast<double>(row.total_ns) / static_cast<double>(summary.kernel_ns);
    }
    summary.rows.push_back(std::move(row));
  }
  std::stable_sort(summary.rows.begin(), summary.rows.end(), [](const KernelSummaryRow& a, const KernelSummaryRow& b) {
    return a.total_ns > b.total_ns;
  });
  return summary;
}

std::string FormatKernelTable(const KernelSummary& summary, int64_t max_rows) {
  const bool estimates = std::any_of(summary.rows.begin(), summary.rows.end(),
                                     [](const KernelSummaryRow& r) { return r.estimate_ns >= 0; });
  std::string out = absl::StrFormat("%-40s %-8s %7s %12s %12s", "name", "kind", "calls", "total", "median");
  if (estimates) StrAppend(&out, absl::StrFormat(" %12s", "estimate"));
  StrAppend(&out, absl::StrFormat(" %7s  %s\n", "share", "detail"));
  int64_t shown = 0;
  for (const KernelSummaryRow& r : summary.rows) {
    if (max_rows > 0 && shown == max_rows) {
      StrAppend(&out, "... ", summary.rows.size() - shown, " more\n");
      break;
    }
    std::string share = r.kind == KernelKind::kControlFlow ? "-" : absl::StrFormat("%.1f%%", 100 * r.share);
    StrAppend(&out, absl::StrFormat("%-40s %-8s %7d %12s %12s", r.name, KernelKindName(r.kind), r.calls,
                                    Time(r.total_ns), Time(r.median_ns)));
    if (estimates) StrAppend(&out, absl::StrFormat(" %12s", r.estimate_ns >= 0 ? Time(r.estimate_ns) : "-"));
    StrAppend(&out, absl::StrFormat(" %7s  %s\n", share, r.detail));
    ++shown;
  }
  StrAppend(&out, absl::StrFormat("kernel time %s in %d step%s (%s per step)\n", Time(summary.kernel_ns),
                                  summary.steps, summary.steps == 1 ? "" : "s", Time(summary.kernel_ns / summary.steps)));
  return out;
}

}  // namespace passlab
