#include "analysis/ablation/compile_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/ablation/report_internal.h"
#include "analysis/ablation/stats.h"
#include "core/ir/str_util.h"
#include "core/pass/pass_recorder.h"

namespace passlab {
namespace {

using json = nlohmann::json;
using namespace ablation_internal;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A pass is expensive from this share of the baseline's pipeline time on.
constexpr double kExpensiveShare = 0.01;

// The passes that time candidates on the machine (passes/autotune/).
constexpr const char* kAutotuningPasses[] = {"config-assigner", "gemm-algorithm-picker",
                                             "gpu-conv-algorithm-picker"};

// A figure as the report holds it: NaN (unknown) as null.
std::optional<double> Known(double x) { return std::isfinite(x) ? std::optional<double>(x) : std::nullopt; }

double JsonNumber(const json& object, const char* key) {
  if (!object.is_object()) return kNaN;
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : kNaN;
}

// Median of the finite values; NaN when there are none.
double MedianOf(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double x) { return !std::isfinite(x); }),
               values.end());
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  return QuantileOfSorted(values, 0.5);
}

// A record's compile time: the pipeline plus the backend.
double TotalCompileMs(const AblationRecord& record) { return Value(record.optimize_ms) + Value(record.compile_ms); }

double CacheCount(const AblationRecord& record, const char* key) {
  return record.kernel_cache ? JsonNumber(*record.kernel_cache, key) : kNaN;
}

// The compile-time fields of a group of records, as medians.
struct CompileTimes {
  double total_ms = kNaN, optimize_ms = kNaN, backend_ms = kNaN, autotune_ms = kNaN;
  double cache_hits = kNaN, cache_misses = kNaN;
  // Of the misses, kernels loaded from the persistent cache (not compiled).
  double persistent_hits = kNaN;
};

CompileTimes MedianTimes(const std::vector<const AblationRecord*>& records) {
  std::vector<double> total, optimize, backend, autotune, hits, misses, persistent;
  for (const AblationRecord* r : records) {
    total.push_back(TotalCompileMs(*r));
    optimize.push_back(Value(r->optimize_ms));
    backend.push_back(Value(r->compile_ms));
    autotune.push_back(Value(r->autotune_ms));
    hits.push_back(CacheCount(*r, "hits"));
    misses.push_back(CacheCount(*r, "misses"));
    persistent.push_back(CacheCount(*r, "persistent_hits"));
  }
  return {MedianOf(total),  MedianOf(optimize), MedianOf(backend),   MedianOf(autotune),
          MedianOf(hits),   MedianOf(misses),   MedianOf(persistent)};
}

AblationCompileTimes ReportTimes(const CompileTimes& t) {
  AblationCompileTimes out;
  out.compile_ms = Known(t.total_ms);
  out.optimize_ms = Known(t.optimize_ms);
  out.backend_ms = Known(t.backend_ms);
  out.autotune_ms = Known(t.autotune_ms);
  out.kernel_cache_hits = Known(t.cache_hits);
  out.kernel_cache_misses = Known(t.cache_misses);
  // Present only for sweeps with a persistent kernel cache.
  out.kernel_cache_persistent_hits = Known(t.persistent_hits);
  return out;
}

std::string Ms(double ms) {
  if (!std::isfinite(ms)) return "–";
  if (ms > 0 && ms < 0.1) return fmt::format("{:.1f} µs", ms * 1e3);
  return ms < 10 ? fmt::format("{:.2f} ms", ms) : fmt::format("{:.0f} ms", ms);
}

std::string SignedMs(double ms) {
  if (!std::isfinite(ms)) return "–";
  return std::fabs(ms) < 10 ? fmt::format("{:+.2f} ms", ms) : fmt::format("{:+.0f} ms", ms);
}

std::string Cache(const AblationCompileTimes& t) {
  if (!t.kernel_cache_hits || !t.kernel_cache_misses) return "–";
  if (t.kernel_cache_persistent_hits) {
    return fmt::format("{:.0f} / {:.0f} ({:.0f} loaded)", *t.kernel_cache_hits, *t.kernel_cache_misses,
                       *t.kernel_cache_persistent_hits);
  }
  return fmt::format("{:.0f} / {:.0f}", *t.kernel_cache_hits, *t.kernel_cache_misses);
}

std::string MdEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

bool IsAutotuningPass(std::string_view pass_name) {
  for (const char* p : kAutotuningPasses) {
    if (pass_name == p) return true;
  }
  return false;
}

nlohmann::json CompileCostFields(const PassRecorder& recorder) {
  json times = json::object();  // sorted by name
  double autotune_ms = 0;
  for (const PassRecorder::PassTotals& t : recorder.TotalsByPass()) {
    times[t.pass_name] = {{"ms", t.total_ms}, {"runs", t.runs}};
    if (IsAutotuningPass(t.pass_name)) autotune_ms += t.total_ms;
  }
  return {{"pass_times", std::move(times)}, {"autotune_ms", autotune_ms}};
}

std::string CompileCostQuadrant(double pass_ms, double ratio, bool clear_effect, double cost_split_ms) {
  if (!std::isfinite(pass_ms) || !std::isfinite(ratio)) return "";
  if (clear_effect && ratio < 1) return "harmful";
  const bool cheap = !std::isfinite(cost_split_ms) || pass_ms < cost_split_ms;
  const bool essential = clear_effect && ratio > 1;
  return fmt::format("{} and {}", cheap ? "cheap" : "expensive", essential ? "essential" : "useless");
}

AblationCompileCost BuildCompileCost(const std::vector<AblationRecord>& records,
                                     const std::vector<AblationReportVariant>& variants, double threshold) {
  std::vector<const AblationRecord*> baseline;
  std::map<std::string, std::vector<const AblationRecord*>> by_variant;
  for (const AblationRecord& r : records) {
    if (r.kind == "baseline") {
      baseline.push_back(&r);
    } else {
      by_variant[r.variant].push_back(&r);
    }
  }

  AblationCompileCost out;
  // The baseline's per-pass times: total ms over the pass's runs, median
  // over the baseline's records that carry them.
  std::map<std::string, std::vector<double>> pass_ms, pass_runs;
  int64_t timed_records = 0;
  for (const AblationRecord* r : baseline) {
    const std::optional<json>& times = r->pass_times;
    if (!times || !times->is_object()) continue;
    ++timed_records;
    for (const auto& [pass, t] : times->items()) {
      pass_ms[pass].push_back(JsonNumber(t, "ms"));
      pass_runs[pass].push_back(JsonNumber(t, "runs"));
    }
  }
  std::map<std::string, double> pass_median;
  for (const auto& [pass, values] : pass_ms) {
    pass_median[pass] = MedianOf(values);
    out.pass_times.push_back({pass, Known(pass_median[pass]), Known(MedianOf(pass_runs[pass]))});
  }
  std::stable_sort(out.pass_times.begin(), out.pass_times.end(),
                   [](const AblationPassTime& a, const AblationPassTime& b) { return Value(a.ms) > Value(b.ms); });

  const CompileTimes base_times = MedianTimes(baseline);
  out.baseline.times = ReportTimes(base_times);
  out.baseline.records_with_pass_times = timed_records;

  std::vector<double> costs;
  for (const AblationReportVariant& v : variants) {
    if ((v.kind != "disable-one" && v.kind != "pair") || v.passes.empty()) continue;
    // A pass absent from timed baseline records never ran there: no cost.
    double own = timed_records > 0 ? 0 : kNaN;
    double runs = timed_records > 0 ? 0 : kNaN;
    for (const std::string& p : v.passes) {
      auto it = pass_median.find(p);
      if (it == pass_median.end()) continue;
      own += it->second;
      runs += MedianOf(pass_runs[it->first]);
    }
    AblationCompileCostRow row;
    row.variant = v.name;
    row.kind = v.kind;
    row.passes = v.passes;
    row.pass_ms = Known(own);
    row.pass_runs = Known(runs);
    auto group = by_variant.find(v.name);
    const CompileTimes times = group == by_variant.end() ? CompileTimes{} : MedianTimes(group->second);
    row.times = ReportTimes(times);
    row.compile_delta_ms = Known(times.total_ms - base_times.total_ms);
    row.ratio = Known(v.ratio.value_or(kNaN));
    row.ci_low = Known(v.ci_low.value_or(kNaN));
    row.ci_high = Known(v.ci_high.value_or(kNaN));
    row.significant = v.significant;
    row.outcome = v.outcome;
    if (std::isfinite(own) && own > 0) costs.push_back(own);
    out.rows.push_back(std::move(row));
  }
  // Cheap against expensive: a share of the baseline's pipeline time (the
  // median pass time of the rows when that is unknown).
  const double split =
      std::isfinite(base_times.optimize_ms) ? kExpensiveShare * base_times.optimize_ms : MedianOf(costs);
  for (AblationCompileCostRow& row : out.rows) {
    // A short sweep cannot reach significance after Holm's correction; a
    // CI wholly beyond the threshold still says which side the pass is on.
    const double lo = Value(row.ci_low), hi = Value(row.ci_high);
    row.clear_effect = row.significant || (std::isfinite(lo) && lo > 1 + threshold) ||
                       (std::isfinite(hi) && hi < 1 - threshold);
    row.quadrant = CompileCostQuadrant(Value(row.pass_ms), Value(row.ratio), row.clear_effect, split);
  }
  out.cost_split_ms = Known(split);
  return out;
}

std::string RenderCompileCostMarkdown(const AblationReport& report) {
  if (!report.compile_cost.has_value()) return "";
  const AblationCompileCost& cost = *report.compile_cost;
  const AblationCompileTimes& base = cost.baseline.times;
  std::string md = "\n## Compile cost against run-time benefit\n\n";
  md += fmt::format(
      "Baseline compile: {} in all — pipeline {} (autotuning {}), backend emitters and JIT {}; kernel cache "
      "hits / misses {}. A pass's own time is its total over its runs in the baseline's pipeline (median over "
      "the baseline's records); Δ compile is the variant's total compile time minus the baseline's. Cheap: "
      "below {} (1% of the baseline's pipeline time).\n\n",
      Ms(Value(base.compile_ms)), Ms(Value(base.optimize_ms)), Ms(Value(base.autotune_ms)),
      Ms(Value(base.backend_ms)), Cache(base), Ms(Value(cost.cost_split_ms)));
  if (base.kernel_cache_persistent_hits.has_value()) {
    md += "Compile times are as measured: misses \"loaded\" came from the persistent kernel cache (compiled by "
          "another worker or an earlier sweep) and cost a load, not a compile, so Δ compile understates a cold "
          "compile where they differ.\n\n";
  }
  if (cost.rows.empty()) return md + "No disable-one or pair variants.\n";
  md += "| Passes | Own compile | Runs | Δ compile | Kernel cache hits / misses | Run-time change | 95% CI | "
        "Significant | Quadrant |\n|---|---:|---:|---:|---:|---:|---|---|---|\n";
  for (const AblationCompileCostRow& row : cost.rows) {
    std::string passes = Join(row.passes, " + ");
    std::string ci = FormatCi(Value(row.ci_low), Value(row.ci_high));
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", MdEscape(passes), Ms(Value(row.pass_ms)),
                      row.pass_runs ? fmt::format("{:.0f}", *row.pass_runs) : "–",
                      SignedMs(Value(row.compile_delta_ms)), Cache(row.times), FormatChange(Value(row.ratio)),
                      ci.empty() ? std::string("–") : ci, row.significant ? "yes" : "no",
                      row.quadrant.empty() ? "–" : row.quadrant);
  }
  return md;
}

}  // namespace passlab
