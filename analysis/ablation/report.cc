#include "analysis/ablation/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "analysis/ablation/compile_cost.h"
#include "analysis/ablation/plan.h"
#include "analysis/ablation/report_internal.h"
#include "core/ir/status_macros.h"
#include "core/runtime/kernel_record.h"
#include "analysis/ablation/stats.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// A p-value in a sentence, two significant digits: 0.0625, 0.00064 (the
// tables' FormatP gives four decimals, and "<0.0001" below them).
std::string PInProse(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", p);
  return buf;
}

using json = nlohmann::json;

// The largest number among an object's values (null values: infinity).
double MaxNumber(const json& values) {
  double m = 0;
  for (const auto& [key, v] : values.items()) m = std::max(m, v.is_number() ? v.get<double>() : INFINITY);
  return m;
}

// Whether a variant's failed check (its record) only repeats the baseline's
// mismatch with the evaluator, and in how many outputs the baseline matches.
// Deep f32 training steps miss the evaluator by a few percent through
// rounding alone, and every variant with them; a variant that sums in
// another order (no tree reduction, native batch norm) pushes a few more
// outputs just past the norm-wise tolerance. So each output the variant
// misses must be
//   - one the baseline misses too, by a norm-wise error at least half the
//     variant's (or within one percentage point of it), or
//   - a new one, missed by no more than the baseline's worst output: within
//     the rounding this program shows anyway.
// Returns the new outputs' count, or nullopt when the mismatch is the
// variant's own.
std::optional<int> BaselineMismatchShared(const AblationRecord& record, const json& baseline_errors) {
  const std::optional<json>& check = record.check;
  if (!check || !check->is_object() || !check->contains("wrong_norm_errors")) return std::nullopt;
  const json& errors = (*check)["wrong_norm_errors"];
  if (!errors.is_object() || errors.empty()) return std::nullopt;
  const double baseline_worst = MaxNumber(baseline_errors);
  int new_outputs = 0;
  for (const auto& [leaf, error] : errors.items()) {
    if (!error.is_number()) return std::nullopt;
    const double v = error.get<double>();
    auto base = baseline_errors.find(leaf);
    if (base == baseline_errors.end()) {
      if (!(v <= baseline_worst)) return std::nullopt;
      ++new_outputs;
      continue;
    }
    if (!base->is_number()) return std::nullopt;
    const double b = base->get<double>();
    if (v > std::max(2 * b, b + 0.01)) return std::nullopt;
  }
  return new_outputs;
}

std::string FormatPercent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", 100 * fraction);
  return buf;
}

using ordered_json = nlohmann::ordered_json;
using ablation_internal::kMinPairsForCi;
using ablation_internal::kIdenticalOutcome;
using ablation_internal::kOutcomeOrder;
using ablation_internal::OutcomeRank;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// All records of one variant (or of the baseline), pooled.
struct PooledVariant {
  std::string name;
  const AblationRecord* first = nullptr;    // scalar fields (kind, passes, paths) come from here
  const AblationRecord* failure = nullptr;  // the first record whose status is not "ok"
  const AblationRecord* wrong = nullptr;    // the first record whose check says not ok
  std::vector<double> samples;    // the metric, all records concatenated
  std::set<int64_t> blocks;       // the runner's timing blocks the records came from
  std::map<int64_t, std::vector<double>> samples_by_block;
  // The in-process control's samples (runner.h: `control`), one per sample
  // of `samples`; `control_complete` is false when some record with samples
  // has no control to pair them with.
  std::vector<double> control;
  bool control_complete = true;
  // The same, as ABBA pairs: two consecutive steps in opposite orders
  // (variant first, then control first), summed. Whichever program runs
  // second finds the caches warm (they share memory), which makes per-step
  // ratios alternate by a few percent; within a pair that cancels.
  std::vector<double> pair_variant, pair_control;
  // Per kernel, its time in each of `samples`' steps (the metric's per-kernel
  // rows: records.h kernel_steps_ns / kernel_steps_cpu_ns), for the variant
  // and its control, and the steps of each ABBA pair; complete only when
  // every record had them.
  std::map<std::string, std::vector<double>> kernel_rows, control_kernel_rows;
  std::vector<std::vector<size_t>> units;
  bool kernel_rows_complete = true;
  std::map<std::string, std::vector<double>> numbers;  // compile_ms, bytes, ...
  struct Kernel {
    const AblationKernel* info = nullptr;  // its first appearance (kind, detail, calls)
    std::vector<double> ns;
  };
  std::vector<std::string> kernel_order;  // first appearance
  std::map<std::string, Kernel> kernels;
};

void AddNumber(PooledVariant& v, const char* field, const std::optional<double>& x) {
  if (x) v.numbers[field].push_back(*x);
}
void AddNumber(PooledVariant& v, const char* field, const std::optional<int64_t>& x) {
  if (x) v.numbers[field].push_back(static_cast<double>(*x));
}

// The per-kernel step rows behind `metric` (null: it has none, or the
// samples do not hold them).
const std::map<std::string, std::vector<double>>* KernelRows(const AblationSamples& s, std::string_view metric) {
  const auto* rows = metric == "kernel_ns"       ? &s.kernel_steps_ns
                     : metric == "kernel_cpu_ns" ? &s.kernel_steps_cpu_ns
                                                 : nullptr;
  return rows == nullptr || rows->empty() ? nullptr : rows;
}

void AddRecord(PooledVariant& v, const AblationRecord& record, std::string_view metric) {
  if (v.first == nullptr) v.first = &record;
  if (record.StatusOrOk() != "ok" && v.failure == nullptr) v.failure = &record;
  if (record.CheckFailed() && v.wrong == nullptr) v.wrong = &record;
  const bool has_block = record.block.has_value();
  if (has_block) v.blocks.insert(*record.block);
  const std::vector<double> metric_values = record.samples ? record.samples->Metric(metric) : std::vector<double>{};
  const std::vector<double>* values = metric_values.empty() ? nullptr : &metric_values;
  if (values != nullptr) {
    const size_t before = v.samples.size();
    for (double x : *values) {
      v.samples.push_back(x);
      if (has_block) v.samples_by_block[*record.block].push_back(x);
    }
    const size_t added = v.samples.size() - before;
    const std::vector<double> control_values =
        record.control_samples ? record.control_samples->Metric(metric) : std::vector<double>{};
    const std::vector<double>* control = &control_values;
    if (!control->empty() && control->size() == added) {
      v.control.insert(v.control.end(), control->begin(), control->end());
      // Which program ran first in each step: recorded, or the worker's
      // order (alternating, the variant first).
      std::vector<bool> first(added);
      for (size_t i = 0; i < added; ++i) first[i] = i % 2 == 1;
      const std::vector<bool>& order = record.control_samples->control_first;
      if (order.size() == added) first = order;
      const double* vs = v.samples.data() + before;
      const double* cs = v.control.data() + (v.control.size() - added);
      for (size_t i = 0; i < added;) {
        const size_t n = i + 1 < added && first[i] != first[i + 1] ? 2 : 1;
        v.pair_variant.push_back(n == 2 ? vs[i] + vs[i + 1] : vs[i]);
        v.pair_control.push_back(n == 2 ? cs[i] + cs[i + 1] : cs[i]);
        v.units.push_back(n == 2 ? std::vector<size_t>{before + i, before + i + 1} : std::vector<size_t>{before + i});
        i += n;
      }
      const auto* rows = KernelRows(*record.samples, metric);
      const auto* control_rows = KernelRows(*record.control_samples, metric);
      if (rows == nullptr || control_rows == nullptr || !AppendKernelStepRows(*rows, before, added, v.kernel_rows) ||
          !AppendKernelStepRows(*control_rows, before, added, v.control_kernel_rows)) {
        v.kernel_rows_complete = false;
      }
    } else if (added > 0) {
      v.control_complete = false;
    }
  }
  AddNumber(v, "compile_ms", record.compile_ms);
  AddNumber(v, "optimize_ms", record.optimize_ms);
  AddNumber(v, "kernel_count", record.kernel_count);
  AddNumber(v, "bytes", record.bytes);
  AddNumber(v, "peak_rss_bytes", record.peak_rss_bytes);
  if (record.kernels) {
    for (const AblationKernel& k : *record.kernels) {
      auto [it, inserted] = v.kernels.try_emplace(k.name);
      if (inserted) {
        v.kernel_order.push_back(k.name);
        it->second.info = &k;
      }
      if (!k.ns) continue;
      // The kernel's median step where the record has its step times (a
      // mean carries the steps where something else ran on the host).
      const std::vector<double>* steps = nullptr;
      if (record.samples) {
        auto row = record.samples->kernel_steps_ns.find(k.name);
        if (row != record.samples->kernel_steps_ns.end() && !row->second.empty()) steps = &row->second;
      }
      it->second.ns.push_back(steps != nullptr ? Median(*steps) : *k.ns);
    }
  }
}

// A number of the report, or absent for NaN (JSON has no NaN).
std::optional<double> Number(double x) {
  if (std::isnan(x) || std::isinf(x)) return std::nullopt;
  return x;
}
double ValueOrNaN(const std::optional<double>& x) { return x.value_or(kNaN); }

double MedianNumber(const PooledVariant& v, const char* field) {
  auto it = v.numbers.find(field);
  if (it == v.numbers.end()) return kNaN;
  return Median(it->second);
}

std::map<std::string, double> KernelTimes(const PooledVariant& v) {
  std::map<std::string, double> times;
  for (const auto& [name, kernel] : v.kernels) times[name] = Median(kernel.ns);
  return times;
}

// The operations a GPU program runs on the host, for want of a device
// implementation (the CUDA runtime's "host: ..." records), by name.
std::set<std::string> HostOps(const PooledVariant& v) {
  std::set<std::string> ops;
  for (const auto& [name, kernel] : v.kernels) {
    if (kernel.info->detail && kernel.info->detail->starts_with(kHostFallbackPrefix)) {
      ops.insert(name);
    }
  }
  return ops;
}

std::vector<AblationReportKernel> KernelList(const PooledVariant& v) {
  std::vector<std::pair<double, std::string>> order;
  for (const std::string& name : v.kernel_order) {
    order.push_back({Median(v.kernels.at(name).ns), name});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<AblationReportKernel> list;
  for (const auto& [ns, name] : order) {
    const AblationKernel& info = *v.kernels.at(name).info;
    list.push_back({.name = name, .kind = info.kind, .detail = info.detail, .ns = Number(ns), .calls = info.calls});
  }
  return list;
}

// Kernels matched by name: added, removed, changed (> kernel_change of the
// baseline's time) or the same; largest |delta| first, top N kept.
std::vector<AblationKernelChange> KernelDiff(const std::map<std::string, double>& baseline,
                                             const std::map<std::string, double>& variant,
                                             const std::set<std::string>& host_ops, const ReportOptions& options,
                                             AblationKernelDiffCounts& counts) {
  struct Row {
    std::string name;
    double baseline_ns, variant_ns;
    std::string change;
    double delta;
  };
  std::vector<Row> rows;
  for (const auto& [name, ns] : baseline) {
    auto it = variant.find(name);
    if (it == variant.end()) {
      rows.push_back({name, ns, kNaN, "removed", ns});
      continue;
    }
    double delta = it->second - ns;
    bool changed = ns == 0 ? it->second != 0 : std::abs(delta) > options.kernel_change * ns;
    rows.push_back({name, ns, it->second, changed ? "changed" : "same", std::abs(delta)});
  }
  for (const auto& [name, ns] : variant) {
    if (!baseline.contains(name)) rows.push_back({name, kNaN, ns, "added", ns});
  }
  auto count = [&](std::string_view c) {
    return std::count_if(rows.begin(), rows.end(), [&](const Row& r) { return r.change == c; });
  };
  counts = {.added = count("added"), .removed = count("removed"), .changed = count("changed"), .same = count("same")};
  // Names break ties so the order never depends on the map's.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    auto da = std::isnan(a.delta) ? 0 : a.delta;
    auto db = std::isnan(b.delta) ? 0 : b.delta;
    if (da != db) return da > db;
    return a.name < b.name;
  });
  if (rows.size() > static_cast<size_t>(options.kernel_diff_top)) {
    rows.resize(options.kernel_diff_top);
  }
  std::vector<AblationKernelChange> diff;
  for (const Row& r : rows) {
    diff.push_back({.name = r.name,
                    .baseline_ns = Number(r.baseline_ns),
                    .variant_ns = Number(r.variant_ns),
                    .change = r.change,
                    .host = host_ops.contains(r.name)});  // the variant runs it on the host
  }
  return diff;
}

bool IsMeasured(const AblationReportVariant& variant) {
  const std::string outcome = variant.outcome.value_or("");
  return outcome == "slower" || outcome == "faster" || outcome == "no-change" || outcome == "undecided" ||
         outcome == "wrong-result";
}

// An A/A copy that measures the band: one that was not slowed down on
// purpose (--test-inject-delay), which is judged like any variant.
bool IsAaCopy(const AblationReportVariant& variant) {
  return variant.kind == kAaVariantKind && !variant.injected_delay.has_value();
}

// The A/A section: each copy's ratio, CI and verdict (before the band), the
// band they measure (the largest |ratio - 1|), and the band the report
// applies with where it came from. `adjusted`: the corrected p-values, in
// the order of `variants`.
AblationAaSection AaSection(const std::vector<AblationReportVariant>& variants, const std::vector<double>& p_values,
                            const std::vector<double>& adjusted, const ReportOptions& options) {
  AblationAaSection aa;
  double measured = -1, widest = -1;
  for (size_t i = 0; i < variants.size(); ++i) {
    const AblationReportVariant& v = variants[i];
    if (!IsAaCopy(v)) continue;
    AblationAaCopy c{.name = v.name,
                     .status = v.status,
                     .ratio = v.ratio,
                     .ci_low = v.ci_low,
                     .ci_high = v.ci_high,
                     .pairs = v.pairs,
                     .p_value = Number(p_values[i]),
                     .p_adjusted = Number(adjusted[i])};
    const bool measured_ok = v.status == "ok" && v.ratio.has_value();
    c.significant = measured_ok && !std::isnan(adjusted[i]) && adjusted[i] < options.alpha &&
                    std::abs(*v.ratio - 1) > options.threshold;
    if (measured_ok) {
      measured = std::max(measured, std::abs(*v.ratio - 1));
      for (const std::optional<double>& end : {v.ci_low, v.ci_high}) {
        if (end.has_value()) widest = std::max(widest, std::abs(*end - 1));
      }
    }
    aa.copies.push_back(std::move(c));
  }
  if (measured >= 0) aa.measured_band = measured;
  if (widest >= 0) aa.max_ci_deviation = widest;
  if (options.no_aa_band) {
    aa.band_source = "none (--no-aa-band)";
  } else if (!std::isnan(options.aa_band) && (options.aa_band_forced || measured < 0)) {
    aa.band = options.aa_band;
    aa.band_source = options.aa_band_source.empty() ? "given" : options.aa_band_source;
  } else if (measured >= 0) {
    aa.band = measured;
    aa.band_source = StrCat("this sweep's ", aa.copies.size(), " A/A copies");
  } else {
    aa.band_source = "none (no A/A copies in this sweep and no calibration for this configuration)";
  }
  return aa;
}

AblationReportSummary Summarize(const std::vector<AblationReportVariant>& variants) {
  AblationReportSummary summary;
  summary.variants = static_cast<int64_t>(variants.size());
  std::map<std::string, int64_t> outcomes;
  std::vector<double> half_widths;
  std::string worst_name;
  double worst = -1;
  for (const AblationReportVariant& v : variants) {
    ++outcomes[v.outcome.value_or("")];
    if (IsMeasured(v)) ++summary.measured;
    if (v.significant) ++summary.significant;
    if (v.SharesBaselineMismatch()) ++summary.shared_baseline_mismatches;
    if (!v.host_ops.empty()) ++summary.host_op_variants;
    if (v.ci_half_width.has_value() && v.outcome != kIdenticalOutcome) {  // precision of what was timed
      double w = *v.ci_half_width;
      half_widths.push_back(w);
      if (w > worst) {
        worst = w;
        worst_name = v.name;
      }
    }
  }
  for (const char* o : kOutcomeOrder) {
    if (o != std::string_view(kIdenticalOutcome) || outcomes[o] > 0) summary.outcomes[o] = outcomes[o];
  }
  summary.failures = outcomes["compile-error"] + outcomes["verifier-failure"] + outcomes["crash"] + outcomes["timeout"];
  summary.median_ci_half_width = Number(Median(half_widths));
  summary.max_ci_half_width = Number(worst < 0 ? kNaN : worst);
  if (!worst_name.empty()) summary.max_ci_half_width_variant = worst_name;
  return summary;
}

}  // namespace

std::string_view AblationMetricName(AblationMetric metric) {
  switch (metric) {
    case AblationMetric::kKernelNs:
      return "kernel_ns";
    case AblationMetric::kKernelCopyNs:
      return "kernel_copy_ns";
    case AblationMetric::kWallNs:
      return "wall_ns";
    case AblationMetric::kKernelRawNs:
      return "kernel_raw_ns";
    case AblationMetric::kKernelCpuNs:
      return "kernel_cpu_ns";
  }
  return "kernel_ns";
}

absl::StatusOr<AblationMetric> ParseAblationMetric(std::string_view name) {
  for (AblationMetric m : {AblationMetric::kKernelNs, AblationMetric::kKernelRawNs, AblationMetric::kKernelCopyNs,
                           AblationMetric::kWallNs, AblationMetric::kKernelCpuNs}) {
    if (name == AblationMetricName(m)) return m;
  }
  return absl::InvalidArgumentError(StrCat(
      "unknown metric '", name, "' (expected kernel_ns, kernel_raw_ns, kernel_copy_ns, wall_ns or kernel_cpu_ns)"));
}

AblationMetric SweepAblationMetric(std::string_view device, int64_t threads) {
  return device == "cpu" && threads == 1 ? AblationMetric::kKernelCpuNs : AblationMetric::kKernelNs;
}

AblationMetric DefaultAblationMetric(std::string_view device, int64_t threads,
                                     const std::vector<AblationRecord>& records) {
  const AblationMetric metric = SweepAblationMetric(device, threads);
  if (metric != AblationMetric::kKernelCpuNs) return metric;
  for (const AblationRecord& r : records) {
    if (r.samples && !r.samples->kernel_ns.empty() && r.samples->kernel_cpu_ns.empty()) {
      return AblationMetric::kKernelNs;
    }
  }
  return metric;
}

std::string_view PValueCorrectionName(PValueCorrection correction) {
  switch (correction) {
    case PValueCorrection::kHolm:
      return "holm";
    case PValueCorrection::kBenjaminiHochberg:
      return "bh";
  }
  return "holm";
}

absl::StatusOr<PValueCorrection> ParsePValueCorrection(std::string_view name) {
  if (name == "holm") return PValueCorrection::kHolm;
  if (name == "bh" || name == "fdr_bh" || name == "benjamini-hochberg") {
    return PValueCorrection::kBenjaminiHochberg;
  }
  return absl::InvalidArgumentError(
      StrCat("unknown p-value correction '", name, "' (expected holm or bh)"));
}

namespace {

// The baseline samples timed in the same blocks as `v`: all of them when
// `v` has no block numbers or the baseline has none of its blocks.
const std::vector<double>& BlockBaseline(const PooledVariant& baseline, const PooledVariant& v,
                                         std::vector<double>& storage) {
  storage.clear();
  for (int64_t b : v.blocks) {
    auto it = baseline.samples_by_block.find(b);
    if (it != baseline.samples_by_block.end()) storage.insert(storage.end(), it->second.begin(), it->second.end());
  }
  return storage.empty() ? baseline.samples : storage;
}

// Variant and baseline samples paired by round: the runner times every
// member of a block once per round, so the i-th sample of a variant and of
// its block's baseline were taken seconds apart, and their ratio is free of
// the drift between rounds. Empty when some block of `v` has no baseline or
// a different number of rounds (a partial record): the caller falls back to
// the unpaired comparison.
bool PairByRound(const PooledVariant& baseline, const PooledVariant& v, std::vector<double>& variant_out,
                 std::vector<double>& baseline_out) {
  variant_out.clear();
  baseline_out.clear();
  if (v.samples_by_block.empty()) return false;
  for (const auto& [block, samples] : v.samples_by_block) {
    auto it = baseline.samples_by_block.find(block);
    if (it == baseline.samples_by_block.end() || it->second.size() != samples.size()) return false;
    variant_out.insert(variant_out.end(), samples.begin(), samples.end());
    baseline_out.insert(baseline_out.end(), it->second.begin(), it->second.end());
  }
  return !variant_out.empty();
}

}  // namespace

// The ratio and 95% CI of a variant against its in-process control, as the
// report judges it: with every kernel's step times, the ratio of the sums of
// per-kernel lower quartiles (stats.h kKernelQuantile) bootstrapped over the
// ABBA pairs; else the paired per-step ratios. The runner's --target-ci and
// --sequential decide on this same interval.
static ConfidenceInterval InProcessRatioCi(const PooledVariant& v, const BootstrapOptions& bootstrap) {
  if (v.kernel_rows_complete && !v.kernel_rows.empty() && !v.control_kernel_rows.empty() && !v.units.empty()) {
    std::vector<std::vector<double>> rows, control_rows;
    for (const auto& [name, row] : v.kernel_rows) rows.push_back(row);
    for (const auto& [name, row] : v.control_kernel_rows) control_rows.push_back(row);
    return BootstrapKernelQuantileRatioCi(rows, control_rows, v.units, kKernelQuantile, bootstrap);
  }
  return BootstrapPairedRatioCi(v.pair_variant, v.pair_control, bootstrap);
}

double InProcessCiHalfWidth(const AblationRecord& record, AblationMetric metric, const ReportOptions& options) {
  PooledVariant v;
  AddRecord(v, record, AblationMetricName(metric));
  if (!v.control_complete || v.pair_variant.size() < 2) return kNaN;
  BootstrapOptions bootstrap;
  bootstrap.resamples = options.bootstrap_resamples;
  bootstrap.seed = options.bootstrap_seed;
  return InProcessRatioCi(v, bootstrap).RelativeHalfWidth();
}

InProcessDecision DecideInProcess(const AblationRecord& record, AblationMetric metric, double band,
                                  int64_t comparisons, const ReportOptions& options) {
  InProcessDecision d;
  PooledVariant v;
  AddRecord(v, record, AblationMetricName(metric));
  if (!v.control_complete || v.pair_variant.size() < 2) return d;
  BootstrapOptions bootstrap;
  bootstrap.resamples = options.bootstrap_resamples;
  bootstrap.seed = options.bootstrap_seed;
  const ConfidenceInterval ci = InProcessRatioCi(v, bootstrap);
  if (!std::isfinite(ci.low) || !std::isfinite(ci.high)) return d;
  d.low = ci.low;
  d.high = ci.high;
  const bool within = ci.low >= 1 - band && ci.high <= 1 + band;
  bool beyond = ci.low > 1 + band || ci.high < 1 - band;
  if (beyond) {
    std::vector<double> log_ratios;
    for (size_t i = 0; i < v.pair_variant.size(); ++i) {
      if (v.pair_variant[i] > 0 && v.pair_control[i] > 0) {
        log_ratios.push_back(std::log(v.pair_variant[i] / v.pair_control[i]));
      }
    }
    const double p = WilcoxonSignedRank(log_ratios).p_value;
    beyond = std::isfinite(p) && p * static_cast<double>(std::max<int64_t>(1, comparisons)) < 0.05;
  }
  d.decided = beyond || within;
  return d;
}

AblationReport BuildAblationReport(const nlohmann::json& manifest, const std::vector<AblationRecord>& records,
                                   const ReportOptions& options) {
  std::string_view metric = AblationMetricName(options.metric);
  PooledVariant baseline;
  std::vector<PooledVariant> pooled;
  std::map<std::string, size_t> index;
  for (const AblationRecord& record : records) {
    const std::string& name = record.variant;
    if (record.kind == "baseline") {
      if (baseline.name.empty()) baseline.name = name.empty() ? "baseline" : name;
      AddRecord(baseline, record, metric);
      continue;
    }
    auto [it, inserted] = index.try_emplace(name, pooled.size());
    if (inserted) {
      pooled.emplace_back();
      pooled.back().name = name;
    }
    AddRecord(pooled[it->second], record, metric);
  }

  AblationReport report;
  report.manifest = manifest.is_null() ? ordered_json::object() : ordered_json(manifest);
  report.metric = metric;
  report.threshold = options.threshold;
  report.correction = PValueCorrectionName(options.correction);
  report.alpha = options.alpha;
  std::vector<std::string>& warnings = report.warnings;

  BootstrapOptions bootstrap{.resamples = options.bootstrap_resamples,
                             .seed = options.bootstrap_seed};
  double baseline_median = Median(baseline.samples);
  ConfidenceInterval baseline_ci = BootstrapMedianCi(baseline.samples, bootstrap);
  AblationReportBaseline& base = report.baseline;
  base.name = baseline.name.empty() ? "baseline" : baseline.name;
  base.median_ns = Number(baseline_median);
  base.samples_ns = baseline.samples;
  base.ci_half_width = Number(baseline_ci.RelativeHalfWidth());
  base.compile_ms = Number(MedianNumber(baseline, "compile_ms"));
  base.kernel_count = Number(MedianNumber(baseline, "kernel_count"));
  base.bytes = Number(MedianNumber(baseline, "bytes"));
  base.peak_rss_bytes = Number(MedianNumber(baseline, "peak_rss_bytes"));
  base.kernels = KernelList(baseline);
  const std::set<std::string> baseline_host_ops = HostOps(baseline);
  base.host_ops.assign(baseline_host_ops.begin(), baseline_host_ops.end());
  if (baseline.first != nullptr) {
    base.trace = baseline.first->trace;
    base.snapshot = baseline.first->snapshot;
  }
  if (baseline.first == nullptr) {
    warnings.push_back("no baseline record: no ratio can be computed");
  } else if (baseline.failure != nullptr) {
    warnings.push_back(StrCat("the baseline failed (", baseline.failure->StatusOrOk(),
                              "): ", baseline.failure->error.value_or("")));
  } else if (baseline.samples.empty()) {
    warnings.push_back(StrCat("the baseline has no '", metric, "' samples"));
  }
  const json* baseline_errors = nullptr;  // the baseline's own mismatch, per output
  if (baseline.wrong != nullptr) {
    const json& check = *baseline.wrong->check;  // CheckFailed: an object
    auto errors = check.find("wrong_norm_errors");
    if (errors != check.end() && errors->is_object()) baseline_errors = &*errors;
  }
  std::map<std::string, double> baseline_kernels = KernelTimes(baseline);

  // Statistics per variant; p-values adjusted across all measured ones.
  std::vector<double> block_baseline_storage, paired_variant, paired_baseline;
  int64_t shared_mismatches = 0;  // variants whose mismatch is the baseline's
  double best_possible_p = kNaN;  // over the tested variants
  int64_t max_pairs = 0;
  bool any_in_process = false;  // then two repetitions (ABBA) make one paired ratio
  std::vector<AblationReportVariant>& variants = report.variants;
  std::vector<double> p_values;
  std::vector<double> smallest_ps;  // per variant: its test's smallest possible p
  for (const PooledVariant& v : pooled) {
    const AblationRecord& first = *v.first;
    AblationReportVariant out;
    out.name = v.name;
    out.kind = first.kind;
    out.passes = first.passes.value_or(std::vector<std::string>{});
    out.disable = first.disable;
    out.enable_only = first.enable_only;
    std::string status = v.failure != nullptr ? v.failure->StatusOrOk() : "ok";
    out.status = status;  // the outcome is set below, after the correction
    if (status == "ok" && first.identical_program.value_or(false)) {
      // The runner's screen found the baseline's program (runner.h
      // skip_identical): no change by construction, untimed, not tested.
      out.outcome = kIdenticalOutcome;
      out.ratio = 1.0;
      out.ci_low = out.ci_high = 1.0;
      out.ci_half_width = 0.0;
      out.comparison = "identical-program";
      out.estimate_ns = Number(baseline_median);
      out.ir_diff = first.ir_diff;
      p_values.push_back(kNaN);
      smallest_ps.push_back(kNaN);
      variants.push_back(std::move(out));
      continue;
    }
    // Each variant is compared with the baseline timed in the same blocks
    // (interleaved with it), so drift between blocks does not count as an
    // effect; records without block numbers use the pooled baseline.
    // Paired by round when the records allow it: the median of the
    // per-round ratios, and the signed-rank test of their logarithms.
    // Best of all, each sample has its in-process control (the baseline
    // program timed beside it in the same process), which cancels what
    // differs between processes as well.
    ConfidenceInterval ci;
    double p_value = kNaN;
    double smallest_p = kNaN;  // the test's smallest possible p at this sample size
    const bool in_process = v.control_complete && !v.control.empty();
    const bool paired = in_process || PairByRound(baseline, v, paired_variant, paired_baseline);
    if (in_process) {
      paired_variant = v.pair_variant;
      paired_baseline = v.pair_control;
    }
    // In process with every kernel's step times: the ratio of the sums of
    // per-kernel lower quartiles (stats.h kKernelQuantile), bootstrapped
    // over the ABBA pairs; the signed-rank test below stays on the pairs.
    if (in_process) ci = InProcessRatioCi(v, bootstrap);
    if (paired) {
      if (!in_process) ci = BootstrapPairedRatioCi(paired_variant, paired_baseline, bootstrap);
      std::vector<double> log_ratios;
      for (size_t i = 0; i < paired_variant.size(); ++i) {
        if (paired_variant[i] > 0 && paired_baseline[i] > 0) {
          log_ratios.push_back(std::log(paired_variant[i] / paired_baseline[i]));
        }
      }
      p_value = WilcoxonSignedRank(log_ratios).p_value;
      smallest_p = SmallestWilcoxonP(static_cast<int64_t>(log_ratios.size()));
    } else {
      const std::vector<double>& reference = BlockBaseline(baseline, v, block_baseline_storage);
      ci = BootstrapRatioOfMediansCi(v.samples, reference, bootstrap);
      p_value = MannWhitneyU(v.samples, reference).p_value;
      smallest_p = SmallestMannWhitneyP(static_cast<int64_t>(v.samples.size()), static_cast<int64_t>(reference.size()));
    }
    double median = Median(v.samples);
    out.median_ns = Number(median);
    out.samples_ns = v.samples;
    out.ratio = Number(ci.estimate);
    // Fewer paired ratios than a percentile bootstrap needs: its "CI" would
    // only be the range of those few numbers, so there is none.
    const bool too_few_pairs = paired && paired_variant.size() < kMinPairsForCi;
    if (!too_few_pairs) {
      out.ci_low = Number(ci.low);
      out.ci_high = Number(ci.high);
      out.ci_half_width = Number(ci.RelativeHalfWidth());
    }
    if (paired) out.pairs = static_cast<int64_t>(paired_variant.size());
    out.comparison = in_process ? "in-process-control" : paired ? "paired-rounds" : "pooled";
    if (in_process) out.control_median_ns = Number(Median(v.control));
    // The variant's time at the baseline's speed: what the charts and tables
    // show (its own median also carries its process's speed, which the
    // paired ratio cancels).
    out.estimate_ns = Number(ci.estimate * baseline_median);
    out.p_value = Number(p_value);
    out.compile_ms = Number(MedianNumber(v, "compile_ms"));
    out.kernel_count = Number(MedianNumber(v, "kernel_count"));
    out.bytes = Number(MedianNumber(v, "bytes"));
    out.peak_rss_bytes = Number(MedianNumber(v, "peak_rss_bytes"));
    const AblationRecord* detail = v.failure != nullptr ? v.failure : (v.wrong != nullptr ? v.wrong : &first);
    if (detail->check.has_value()) out.check = ordered_json(*detail->check);
    out.error = detail->error;
    out.failed_pass = detail->failed_pass;
    out.signal = detail->signal;
    out.timeout_s = detail->timeout_s;
    out.required_reason = detail->required_reason;
    const std::set<std::string> variant_host_ops = HostOps(v);
    if (!v.kernels.empty()) {
      AblationKernelDiffCounts counts;
      out.kernel_diff = KernelDiff(baseline_kernels, KernelTimes(v), variant_host_ops, options, counts);
      out.kernel_diff_counts = counts;
      // Every kernel's time, for the passes x kernels heatmap (heatmap.h).
      out.kernel_times_ns.emplace();
      for (const auto& [name, ns] : KernelTimes(v)) (*out.kernel_times_ns)[name] = Number(ns);
    }
    // Operations on the host that the baseline runs on the device: their
    // time counts as kernel time, so the variant pays for them.
    for (const std::string& op : variant_host_ops) {
      if (!baseline_host_ops.contains(op)) out.host_ops.push_back(op);
    }
    out.ir_diff = detail->ir_diff;
    // --test-inject-delay: slowed down on purpose (then no A/A copy).
    out.injected_delay = first.injected_delay;
    out.snapshot = detail->snapshot;
    out.trace = detail->trace;
    // A failed variant's partial samples are shown but not tested.
    p_values.push_back(status == "ok" && !std::isnan(ci.estimate) ? p_value : kNaN);
    smallest_ps.push_back(smallest_p);
    if (!std::isnan(p_values.back())) {
      best_possible_p = std::isnan(best_possible_p) ? smallest_p : std::min(best_possible_p, smallest_p);
      if (paired) max_pairs = std::max<int64_t>(max_pairs, static_cast<int64_t>(paired_variant.size()));
      any_in_process |= in_process;
    }
    variants.push_back(std::move(out));
  }
  // Both corrections' verdicts are reported; `adjusted` is the chosen one's.
  const std::vector<double> holm_adjusted = HolmAdjust(p_values);
  const std::vector<double> bh_adjusted = BenjaminiHochbergAdjust(p_values);
  const std::vector<double>& adjusted =
      options.correction == PValueCorrection::kHolm ? holm_adjusted : bh_adjusted;
  // The A/A band: the sweep's own copies' spread, else the caller's.
  report.aa = AaSection(variants, p_values, adjusted, options);
  const double band = report.aa.band.value_or(0.0);
  // The raw p a variant needs at the least to be significant after the
  // correction (Holm's first step; Benjamini-Hochberg's too).
  const int64_t tested_count = std::count_if(p_values.begin(), p_values.end(), [](double p) { return !std::isnan(p); });
  const double smallest_needed_p = tested_count > 0 ? options.alpha / static_cast<double>(tested_count) : options.alpha;
  // Too few repetitions: even a variant whose every ratio points the same
  // way cannot reach significance (e.g. 10 paired ratios give p >= 0.002,
  // and Holm over 78 variants needs 0.05/78 = 0.00064 for the first).
  int64_t tested = std::count_if(p_values.begin(), p_values.end(), [](double p) { return !std::isnan(p); });
  if (tested > 0 && !std::isnan(best_possible_p)) {
    const bool holm = options.correction == PValueCorrection::kHolm;
    double needed = holm ? options.alpha / static_cast<double>(tested) : options.alpha;
    if (best_possible_p >= needed) {
      int64_t pairs = static_cast<int64_t>(std::ceil(1 - std::log2(needed)));
      warnings.push_back(StrCat(
          "no variant can be significant: with ", max_pairs > 0 ? StrCat(max_pairs, " paired ratios") : "these samples",
          " per variant the test's smallest possible p is ", PInProse(best_possible_p), ", not below the ",
          PInProse(needed), holm ? StrCat(" that Holm's correction over ", tested, " variants needs") : " needed",
          "; rerun with `--repeats ", any_in_process ? 2 * pairs : pairs, "` or more (",
          any_in_process ? "two repetitions, the control first in one and second in the other, make one paired ratio"
                         : "one paired ratio per repetition",
          ")"));
    }
  }
  for (size_t i = 0; i < variants.size(); ++i) {
    AblationReportVariant& out = variants[i];
    if (out.outcome == kIdenticalOutcome) continue;
    out.p_adjusted = Number(adjusted[i]);
    double ratio = ValueOrNaN(out.ratio);
    // A change must exceed the threshold and, except for the A/A copies
    // that measure it, the A/A band.
    const double counts_beyond = IsAaCopy(out) ? options.threshold : std::max(options.threshold, band);
    auto significant_at = [&](double p) {
      return !std::isnan(p) && p < options.alpha && std::abs(ratio - 1) > counts_beyond;
    };
    const bool significant = significant_at(adjusted[i]);
    out.significant = significant;
    out.p_holm = Number(holm_adjusted[i]);
    out.p_bh = Number(bh_adjusted[i]);
    out.significant_holm = significant_at(holm_adjusted[i]);
    out.significant_bh = significant_at(bh_adjusted[i]);
    // The whole 95% CI beyond the threshold and the band, on one side: a
    // large effect that the correction alone leaves unproven (e.g. CI
    // [+7.9%, +47%] with Holm over 78 variants), never "no change".
    const double ci_low = ValueOrNaN(out.ci_low);
    const double ci_high = ValueOrNaN(out.ci_high);
    const bool ci_beyond = ci_low - 1 > counts_beyond || 1 - ci_high > counts_beyond;
    const std::string& status = out.status;
    std::optional<int> new_outputs;
    if (pooled[i].wrong != nullptr && baseline_errors != nullptr) {
      new_outputs = BaselineMismatchShared(*pooled[i].wrong, *baseline_errors);
    }
    const bool shares = new_outputs.has_value();
    if (shares) {
      if (!out.check.has_value()) out.check = ordered_json::object();
      (*out.check)["shares_baseline_mismatch"] = true;
      (*out.check)["outputs_beyond_baseline"] = *new_outputs;
      ++shared_mismatches;
    }
    if (status != "ok") {
      out.outcome = status;
    } else if (pooled[i].wrong != nullptr && !shares) {
      out.outcome = "wrong-result";
    } else if (significant) {
      out.outcome = ratio > 1 ? "slower" : "faster";
    } else if (ci_beyond) {
      // Likely slower (faster): more repetitions would decide it.
      out.outcome = "undecided";
      out.large_but_uncorrected = true;
    } else if (std::abs(ratio - 1) > counts_beyond && !std::isnan(smallest_ps[i]) &&
               smallest_ps[i] >= smallest_needed_p) {
      // A large change the test could not have called significant with
      // these repetitions: not "no change".
      out.outcome = "undecided";
    } else {
      out.outcome = "no-change";
    }
  }
  if (baseline.wrong != nullptr) {
    warnings.push_back(
        baseline_errors != nullptr
            ? StrCat("the baseline's outputs do not match the evaluator (", baseline_errors->size(),
                     " outputs, norm-wise error up to ", FormatPercent(MaxNumber(*baseline_errors)), "); ",
                     shared_mismatches, " variant(s) that miss it no more than the baseline does are judged by "
                     "their timing and shown as `as baseline` (in the baseline's outputs: at most twice its norm-wise "
                     "error, or 1 point more; `as baseline (+N)`: N more outputs, each within its worst error); "
                     "rerun with `--reference baseline` to judge each variant against the baseline program instead")
            : "the baseline's outputs do not match the evaluator, so variants that only share its mismatch are "
              "reported as wrong results too; rerun with `--reference baseline` to judge each variant against the "
              "baseline program instead");
  }

  // Measured variants by ratio, largest slowdown first (no ratio last); then
  // the failures grouped by outcome. Names break ties.
  std::stable_sort(variants.begin(), variants.end(),
                   [](const AblationReportVariant& a, const AblationReportVariant& b) {
                     bool ma = IsMeasured(a), mb = IsMeasured(b);
                     if (ma != mb) return ma;
                     if (ma) {
                       bool ra = a.ratio.has_value(), rb = b.ratio.has_value();
                       if (ra != rb) return ra;
                       if (ra && *a.ratio != *b.ratio) return *a.ratio > *b.ratio;
                     } else if (a.outcome != b.outcome) {
                       return OutcomeRank(a.outcome.value_or("")) < OutcomeRank(b.outcome.value_or(""));
                     }
                     return a.name < b.name;
                   });

  // Pair interactions against the disable-one ratios of each member.
  std::map<std::string, double> single;
  for (const AblationReportVariant& v : variants) {
    if (v.kind == "disable-one" && v.passes.size() == 1 && v.ratio.has_value()) single[v.passes[0]] = *v.ratio;
  }
  auto single_ratio = [&](const std::string& pass) {
    auto it = single.find(pass);
    return it == single.end() ? kNaN : it->second;
  };
  for (const AblationReportVariant& v : variants) {
    if (v.kind != "pair" || v.passes.size() != 2) continue;
    const std::string& a = v.passes[0];
    const std::string& b = v.passes[1];
    double ra = single_ratio(a), rb = single_ratio(b);
    double rab = ValueOrNaN(v.ratio);
    report.pairs.push_back({.variant = v.name,
                            .a = a,
                            .b = b,
                            .ratio_a = Number(ra),
                            .ratio_b = Number(rb),
                            .ratio_ab = Number(rab),
                            .interaction = Number((rab - 1) - ((ra - 1) + (rb - 1))),
                            .outcome = v.outcome});
  }
  report.compile_cost = BuildCompileCost(records, report.variants, options.threshold);
  report.summary = Summarize(report.variants);
  return report;
}

namespace ablation_internal {

std::string VerdictLabel(const AblationReportVariant& variant) {
  const std::string outcome = variant.outcome.value_or("");
  if (!variant.large_but_uncorrected) return OutcomeLabel(outcome);
  return Value(variant.ratio) > 1 ? "likely slower" : "likely faster";
}

std::string AdjustedPHeader(const AblationReport& report) {
  return report.correction == "bh" ? "p (BH / Holm)" : "p (Holm / BH)";
}

std::string AdjustedPCell(const AblationReport& report, const AblationReportVariant& variant) {
  const bool bh = report.correction == "bh";
  const double p = Value(bh ? variant.p_holm : variant.p_bh);
  if (std::isnan(p)) return FormatP(Value(variant.p_adjusted));
  return StrCat(FormatP(Value(variant.p_adjusted)), " / ", bh ? "Holm " : "BH ", FormatP(p),
                (bh ? variant.significant_holm : variant.significant_bh) ? "*" : "");
}

}  // namespace ablation_internal

absl::Status WriteAblationReports(const AblationReport& report, const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return absl::InternalError(StrCat("cannot create ", dir, ": ", error.message()));
  auto write = [&](const char* file, const std::string& text) -> absl::Status {
    std::filesystem::path path = std::filesystem::path(dir) / file;
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out) return absl::InternalError(StrCat("cannot write ", path.string()));
    return absl::OkStatus();
  };
  for (auto [file, text] : std::initializer_list<std::pair<const char*, std::string>>{
           {"report.json",
            ordered_json(report).dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n"},
           {"report.csv", RenderAblationCsv(report)},
           {"report.md", RenderAblationMarkdown(report)},
           {"report.html", RenderAblationHtml(report)},
           {"gbench.json", RenderAblationGbench(report).dump(
                               2, ' ', false, ordered_json::error_handler_t::replace) +
                               "\n"}}) {
    RETURN_IF_ERROR(write(file, text));
  }
  return absl::OkStatus();
}

}  // namespace passlab
