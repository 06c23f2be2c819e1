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
using ordered_json = nlohmann::ordered_json;
using namespace ablation_internal;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A pass is expensive from this share of the baseline's pipeline time on.
constexpr double kExpensiveShare = 0.01;

// The passes that time candidates on the machine (passes/autotune/).
constexpr const char* kAutotuningPasses[] = {"config-assigner", "gemm-algorithm-picker",
                                             "gpu-conv-algorithm-picker"};

ordered_json Number(double x) { return std::isfinite(x) ? ordered_json(x) : ordered_json(nullptr); }

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
double MsOrNaN(const std::optional<double>& ms) { return ms.value_or(kNaN); }

double TotalCompileMs(const AblationRecord& record) { return MsOrNaN(record.optimize_ms) + MsOrNaN(record.compile_ms); }

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
    optimize.push_back(MsOrNaN(r->optimize_ms));
    backend.push_back(MsOrNaN(r->compile_ms));
    autotune.push_back(MsOrNaN(r->autotune_ms));
    hits.push_back(CacheCount(*r, "hits"));
    misses.push_back(CacheCount(*r, "misses"));
    persistent.push_back(CacheCount(*r, "persistent_hits"));
  }
  return {MedianOf(total),  MedianOf(optimize), MedianOf(backend),   MedianOf(autotune),
          MedianOf(hits),   MedianOf(misses),   MedianOf(persistent)};
}

void PutTimes(ordered_json& out, const CompileTimes& t) {
  out["compile_ms"] = Number(t.total_ms);
  out["optimize_ms"] = Number(t.optimize_ms);
  out["backend_ms"] = Number(t.backend_ms);
  out["autotune_ms"] = Number(t.autotune_ms);
  out["kernel_cache_hits"] = Number(t.cache_hits);
  out["kernel_cache_misses"] = Number(t.cache_misses);
  // Present only for sweeps with a persistent kernel cache.
  if (std::isfinite(t.persistent_hits)) out["kernel_cache_persistent_hits"] = t.persistent_hits;
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

std::string Cache(const ordered_json& row) {
  double hits = NumberField(row, "kernel_cache_hits"), misses = NumberField(row, "kernel_cache_misses");
  if (std::isnan(hits) || std::isnan(misses)) return "–";
  const double loaded = NumberField(row, "kernel_cache_persistent_hits");
  if (std::isfinite(loaded)) return fmt::format("{:.0f} / {:.0f} ({:.0f} loaded)", hits, misses, loaded);
  return fmt::format("{:.0f} / {:.0f}", hits, misses);
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

nlohmann::ordered_json BuildCompileCost(const std::vector<AblationRecord>& records,
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
  ordered_json pass_times = ordered_json::array();
  for (const auto& [pass, values] : pass_ms) {
    pass_median[pass] = MedianOf(values);
    pass_times.push_back({{"pass", pass}, {"ms", Number(pass_median[pass])},
                          {"runs", Number(MedianOf(pass_runs[pass]))}});
  }
  std::stable_sort(pass_times.begin(), pass_times.end(), [](const ordered_json& a, const ordered_json& b) {
    return NumberField(a, "ms") > NumberField(b, "ms");
  });

  ordered_json out;
  ordered_json base;
  const CompileTimes base_times = MedianTimes(baseline);
  PutTimes(base, base_times);
  base["records_with_pass_times"] = timed_records;
  out["baseline"] = std::move(base);
  out["pass_times"] = std::move(pass_times);

  ordered_json rows = ordered_json::array();
  std::vector<double> costs;
  for (const AblationReportVariant& v : variants) {
    const std::string& kind = v.kind;
    const std::vector<std::string>& passes = v.passes;
    if ((kind != "disable-one" && kind != "pair") || passes.empty()) continue;
    // A pass absent from timed baseline records never ran there: no cost.
    double own = timed_records > 0 ? 0 : kNaN;
    double runs = timed_records > 0 ? 0 : kNaN;
    for (const std::string& p : passes) {
      auto it = pass_median.find(p);
      if (it == pass_median.end()) continue;
      own += it->second;
      runs += MedianOf(pass_runs[it->first]);
    }
    ordered_json row;
    row["variant"] = v.name;
    row["kind"] = kind;
    row["passes"] = passes;
    row["pass_ms"] = Number(own);
    row["pass_runs"] = Number(runs);
    auto group = by_variant.find(v.name);
    const CompileTimes times =
        group == by_variant.end() ? CompileTimes{} : MedianTimes(group->second);
    PutTimes(row, times);
    row["compile_delta_ms"] = Number(times.total_ms - base_times.total_ms);
    row["ratio"] = Number(v.ratio.value_or(kNaN));
    row["ci_low"] = Number(v.ci_low.value_or(kNaN));
    row["ci_high"] = Number(v.ci_high.value_or(kNaN));
    row["significant"] = v.significant;
    row["outcome"] = v.outcome ? ordered_json(*v.outcome) : ordered_json(nullptr);
    if (std::isfinite(own) && own > 0) costs.push_back(own);
    rows.push_back(std::move(row));
  }
  // Cheap against expensive: a share of the baseline's pipeline time (the
  // median pass time of the rows when that is unknown).
  const double split =
      std::isfinite(base_times.optimize_ms) ? kExpensiveShare * base_times.optimize_ms : MedianOf(costs);
  for (ordered_json& row : rows) {
    // A short sweep cannot reach significance after Holm's correction; a
    // CI wholly beyond the threshold still says which side the pass is on.
    const double lo = NumberField(row, "ci_low"), hi = NumberField(row, "ci_high");
    const bool clear = row["significant"].get<bool>() || (std::isfinite(lo) && lo > 1 + threshold) ||
                       (std::isfinite(hi) && hi < 1 - threshold);
    row["clear_effect"] = clear;
    row["quadrant"] = CompileCostQuadrant(NumberField(row, "pass_ms"), NumberField(row, "ratio"), clear, split);
  }
  out["cost_split_ms"] = Number(split);
  out["rows"] = std::move(rows);
  return out;
}

std::string RenderCompileCostMarkdown(const AblationReport& report) {
  if (!report.compile_cost.has_value() || !report.compile_cost->is_object()) return "";
  const ordered_json& cost = *report.compile_cost;
  const ordered_json& base = cost["baseline"];
  std::string md = "\n## Compile cost against run-time benefit\n\n";
  md += fmt::format(
      "Baseline compile: {} in all — pipeline {} (autotuning {}), backend emitters and JIT {}; kernel cache "
      "hits / misses {}. A pass's own time is its total over its runs in the baseline's pipeline (median over "
      "the baseline's records); Δ compile is the variant's total compile time minus the baseline's. Cheap: "
      "below {} (1% of the baseline's pipeline time).\n\n",
      Ms(NumberField(base, "compile_ms")), Ms(NumberField(base, "optimize_ms")), Ms(NumberField(base, "autotune_ms")),
      Ms(NumberField(base, "backend_ms")), Cache(base), Ms(NumberField(cost, "cost_split_ms")));
  if (base.contains("kernel_cache_persistent_hits")) {
    md += "Compile times are as measured: misses \"loaded\" came from the persistent kernel cache (compiled by "
          "another worker or an earlier sweep) and cost a load, not a compile, so Δ compile understates a cold "
          "compile where they differ.\n\n";
  }
  const ordered_json& rows = cost["rows"];
  if (!rows.is_array() || rows.empty()) return md + "No disable-one or pair variants.\n";
  md += "| Passes | Own compile | Runs | Δ compile | Kernel cache hits / misses | Run-time change | 95% CI | "
        "Significant | Quadrant |\n|---|---:|---:|---:|---:|---:|---|---|---|\n";
  for (const ordered_json& row : rows) {
    std::string passes;
    for (const ordered_json& p : row["passes"]) {
      if (p.is_string()) passes += (passes.empty() ? "" : " + ") + p.get<std::string>();
    }
    double runs = NumberField(row, "pass_runs");
    std::string quadrant = TextField(row, "quadrant");
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", MdEscape(passes),
                      Ms(NumberField(row, "pass_ms")), std::isnan(runs) ? "–" : fmt::format("{:.0f}", runs),
                      SignedMs(NumberField(row, "compile_delta_ms")), Cache(row),
                      FormatChange(NumberField(row, "ratio")),
                      [&] {
                        std::string ci = FormatCi(NumberField(row, "ci_low"), NumberField(row, "ci_high"));
                        return ci.empty() ? std::string("–") : ci;
                      }(),
                      row.value("significant", false) ? "yes" : "no", quadrant.empty() ? "–" : quadrant);
  }
  return md;
}

}  // namespace passlab
