// The text renderings of an ablation report: CSV, Markdown and Google
// Benchmark JSON.
#include "analysis/ablation/report.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <initializer_list>

#include <fmt/format.h>

#include "analysis/ablation/environment.h"
#include "analysis/ablation/heatmap.h"
#include "analysis/ablation/compile_cost.h"
#include "analysis/ablation/report_internal.h"

namespace passlab {
namespace {

using ordered_json = nlohmann::ordered_json;
using namespace ablation_internal;

// RFC 4180: quote fields holding a comma, quote or line break.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CsvNumber(double x) {
  if (std::isnan(x)) return "";
  return fmt::format("{}", x);
}

// Markdown table cells: no line breaks, pipes escaped.
std::string MdCell(std::string_view text) {
  std::string out;
  for (char c : Excerpt(text, 100000)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string CheckCell(const AblationReportVariant& v) {
  const ordered_json check = v.check.value_or(ordered_json());
  if (!check.is_object() || !check.contains("ok") || !check["ok"].is_boolean()) return "–";
  if (!check["ok"].get<bool>()) {
    if (!check.value("shares_baseline_mismatch", false)) return "**MISMATCH**";
    const int more = check.value("outputs_beyond_baseline", 0);
    return more > 0 ? "as baseline (+" + std::to_string(more) + ")" : "as baseline";
  }
  std::string reference = TextField(check, "reference");
  return reference.empty() ? "ok" : "ok (vs " + reference + ")";
}

std::string KernelsCell(const AblationReportVariant& v, double baseline_count) {
  double count = Value(v.kernel_count);
  if (std::isnan(count)) return "–";
  std::string out = FormatCount(count);
  if (!std::isnan(baseline_count) && count != baseline_count) {
    out += fmt::format(" ({:+.0f})", count - baseline_count);
  }
  return out;
}

}  // namespace

std::string RenderAblationCsv(const AblationReport& report) {
  std::string out =
      "name,kind,passes,disable,outcome,status,significant,median_ns,ratio,ci_low,ci_high,"
      "ci_half_width,p_value,p_adjusted,samples,compile_ms,kernel_count,bytes,peak_rss_bytes,"
      "check_ok,failed_pass,signal,error\n";
  auto add = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
    out += "\n";
  };
  const AblationReportBaseline& b = report.baseline;
  add({CsvField(b.name), "baseline", "", "", "baseline", "ok", "", CsvNumber(Value(b.median_ns)), "1", "", "",
       CsvNumber(Value(b.ci_half_width)), "", "", std::to_string(b.samples_ns.size()), CsvNumber(Value(b.compile_ms)),
       CsvNumber(Value(b.kernel_count)), CsvNumber(Value(b.bytes)), CsvNumber(Value(b.peak_rss_bytes)), "", "", "",
       ""});
  for (const AblationReportVariant& v : report.variants) {
    std::string passes;
    for (const std::string& p : v.passes) {
      if (!passes.empty()) passes += ";";
      passes += p;
    }
    std::string check_ok;
    if (v.check.has_value() && v.check->is_object() && v.check->contains("ok")) check_ok = TextField(*v.check, "ok");
    add({
        CsvField(v.name),
        CsvField(v.kind),
        CsvField(passes),
        CsvField(v.disable.value_or("")),
        CsvField(v.outcome.value_or("")),
        CsvField(v.status),
        v.significant ? "true" : "false",
        CsvNumber(Value(v.median_ns)),
        CsvNumber(Value(v.ratio)),
        CsvNumber(Value(v.ci_low)),
        CsvNumber(Value(v.ci_high)),
        CsvNumber(Value(v.ci_half_width)),
        CsvNumber(Value(v.p_value)),
        CsvNumber(Value(v.p_adjusted)),
        std::to_string(v.samples_ns.size()),
        CsvNumber(Value(v.compile_ms)),
        CsvNumber(Value(v.kernel_count)),
        CsvNumber(Value(v.bytes)),
        CsvNumber(Value(v.peak_rss_bytes)),
        check_ok,
        CsvField(v.failed_pass.value_or("")),
        v.signal.has_value() ? std::to_string(*v.signal) : "",
        CsvField(v.error.value_or("")),
    });
  }
  return out;
}

std::string RenderAblationMarkdown(const AblationReport& report) {
  const AblationReportSummary& summary = report.summary;
  const AblationReportBaseline& baseline = report.baseline;
  const std::string& metric = report.metric;
  double threshold = report.threshold;
  double alpha = report.alpha;
  std::string correction = report.correction == "bh" ? "Benjamini-Hochberg" : "Holm";
  double baseline_count = Value(baseline.kernel_count);
  auto count = [&](const char* outcome) {
    auto it = summary.outcomes.find(outcome);
    return it == summary.outcomes.end() ? int64_t{0} : it->second;
  };

  std::string md = "# Pass ablation report\n\n";
  md += fmt::format(
      "**What was measured.** {} — each variant is the compiler pipeline with passes "
      "disabled (or, for add-one, only the required passes plus one); every variant "
      "was compiled, run and timed against the unmodified pipeline (the baseline). "
      "Metric: {} (`{}`).\n\n",
      SweepSubject(report), MetricDescription(metric), metric);
  md += "## Headline\n\n";
  md += fmt::format("- **{} variants** swept; baseline median {} ({} 95% CI, {} samples).\n",
                    summary.variants, FormatMs(Value(baseline.median_ns)), FormatHalfWidth(Value(baseline.ci_half_width)),
                    baseline.samples_ns.size());
  md += fmt::format(
      "- **{} significantly slower**, **{} significantly faster**, {} with no "
      "significant change (significant = {}-adjusted p < {:g} and a change of more "
      "than {:g}%).\n",
      count("slower"), count("faster"), count("no-change"), correction, alpha, threshold * 100);
  if (std::string band = AaBandSentence(report); !band.empty()) md += "- " + band + "\n";
  if (std::string identical = IdenticalSentence(report, "`"); !identical.empty()) md += "- " + identical + "\n";
  if (count("undecided") > 0) {
    md += fmt::format("- **{} undecided**: changes beyond the threshold that these repetitions cannot make "
                      "significant (see the warning below), or whose whole 95% CI lies beyond the threshold "
                      "and the A/A band yet {}'s correction leaves them not significant (\"likely slower\" / "
                      "\"likely faster\"; more repetitions would decide them).\n",
                      count("undecided"), correction);
  }
  for (auto [outcome, verb] :
       {std::pair<const char*, const char*>{
            "slower", "Passes that help most (the program is slower without them)"},
        {"faster", "Passes that hurt (the program is faster without them)"}}) {
    std::vector<const AblationReportVariant*> top = StrongestEffects(report, outcome, 5);
    if (top.empty()) continue;
    md += fmt::format("- {}: ", verb);
    for (size_t i = 0; i < top.size(); ++i) {
      md += fmt::format("{}`{}` ({})", i ? ", " : "", PassesLabel(*top[i]),
                        FormatChange(Value(top[i]->ratio)));
    }
    md += ".\n";
  }
  if (count("wrong-result") > 0) {
    md += fmt::format("- **⚠ {} WRONG RESULT{}**: the outputs of ", count("wrong-result"),
                      count("wrong-result") == 1 ? "" : "S");
    bool first = true;
    for (const AblationReportVariant& v : report.variants) {
      if (v.outcome != "wrong-result") continue;
      md += fmt::format("{}`{}`", first ? "" : ", ", v.name);
      first = false;
    }
    md += " do not match the reference. See *Wrong results* below.\n";
  } else if (summary.shared_baseline_mismatches > 0) {
    md += fmt::format("- No variant computed a wrong result of its own ({} miss the evaluator only as the baseline "
                      "does, see the warning below).\n",
                      summary.shared_baseline_mismatches);
  } else {
    md += "- No variant computed a wrong result (every checked output matched its reference).\n";
  }
  if (summary.host_op_variants > 0) {
    md += fmt::format("- **{} variant(s) run operations on the host** that the baseline runs on the device (no device "
                      "implementation for what the variant produces; their host time counts as kernel time): ",
                      summary.host_op_variants);
    bool first = true;
    for (const auto& [label, ops] : HostOpVariants(report)) {
      md += fmt::format("{}`{}` ({})", first ? "" : ", ", label, ops);
      first = false;
    }
    md += ".\n";
  }
  md += fmt::format(
      "- **{} failure{}** ({} crash, {} timeout, {} verifier failure, {} compile "
      "error); **{} required** pass{} (not disabled: the pipeline cannot run "
      "without them).\n",
      summary.failures, summary.failures == 1 ? "" : "s", count("crash"),
      count("timeout"), count("verifier-failure"), count("compile-error"), count("required"),
      count("required") == 1 ? "" : "es");
  if (std::isnan(Value(summary.median_ci_half_width))) {
    md += "- Precision: no ratio has a 95% CI (too few paired ratios per variant for a bootstrap).\n";
  } else {
    md += fmt::format(
        "- Precision reached: the 95% CI of each ratio is within {} (median) and {} "
        "(worst, `{}`).\n",
        FormatHalfWidth(Value(summary.median_ci_half_width)), FormatHalfWidth(Value(summary.max_ci_half_width)),
        summary.max_ci_half_width_variant.value_or(""));
  }
  for (const std::string& w : report.warnings) md += "- **Warning:** " + w + "\n";

  if (std::vector<std::vector<std::string>> rows = AaCopyRows(report); !rows.empty()) {
    const AblationAaSection& aa = report.aa;
    md += "\n## A/A calibration\n\n";
    md += fmt::format(
        "Each copy is the baseline itself, compiled and timed exactly as a variant (its own worker processes, "
        "beside its control). Largest |ratio − 1|: {}; widest 95% CI end: {} from 1.\n\n",
        FormatHalfWidth(Value(aa.measured_band)), FormatHalfWidth(Value(aa.max_ci_deviation)));
    md += "| Copy | Change | 95% CI | p (adj.) | Verdict |\n|---|---|---|---|---|\n";
    for (const std::vector<std::string>& r : rows) {
      md += fmt::format("| {} | {} | {} | {} | {} |\n", MdCell(r[0]), r[1], r[2], r[3], r[4]);
    }
  }

  md += "\n## Variants\n\n";
  md +=
      "Change = median over repetitions of (variant / baseline) − 1, each ratio between runs "
      "seconds apart: the baseline program timed right beside the variant in the variant's own "
      "process (the in-process control), two steps each in opposite orders so that running second "
      "(warm caches) favours neither; with `--no-control`, the block's baseline timed in the same "
      "round. Positive means the variant is slower, i.e. the disabled pass was helping. The 95% CI "
      "is a bootstrap over repetitions; p is the Wilcoxon signed-rank test of the paired ratios "
      "(variants without whole pairs: ratio of medians, Mann-Whitney). Time = baseline median × "
      "ratio, the variant's time at the baseline's speed.\n\n";
  md +=
      fmt::format("| # | Disabled passes | Outcome | Time | Ratio | Change [95% CI] | {} | Kernels | "
                  "Compile | Check |\n",
                  AdjustedPHeader(report));
  md += "|---:|---|---|---:|---:|---|---:|---:|---:|---|\n";
  int n = 0;
  for (const AblationReportVariant& v : report.variants) {
    std::string outcome = v.outcome.value_or("");
    if (IsFailureOutcome(outcome) || outcome == kIdenticalOutcome) continue;
    bool strong = outcome == "slower" || outcome == "faster" || outcome == "wrong-result";
    std::string label = VerdictLabel(v);
    double ratio = Value(v.ratio);
    md += fmt::format("| {} | {} | {} | {} | {} | {} {} | {} | {} | {} | {} |\n", ++n,
                      MdCell(PassesWithKind(v)), strong ? "**" + label + "**" : label,
                      FormatMs(Value(v.estimate_ns)), std::isnan(ratio) ? "–" : fmt::format("×{:.3f}", ratio),
                      FormatChange(ratio), FormatCi(Value(v.ci_low), Value(v.ci_high)), AdjustedPCell(report, v),
                      KernelsCell(v, baseline_count),
                      v.compile_ms.has_value() ? fmt::format("{:.0f} ms", *v.compile_ms) : "–",
                      CheckCell(v));
  }
  if (n == 0) md += "| | (no variant was measured) | | | | | | | | |\n";

  md += "\n## Failures and required passes\n\n";
  int failures = 0;
  std::string table = "| Passes | Outcome | Failed pass | Why | Files |\n|---|---|---|---|---|\n";
  for (const AblationReportVariant& v : report.variants) {
    std::string outcome = v.outcome.value_or("");
    if (!IsFailureOutcome(outcome)) continue;
    ++failures;
    std::string links;
    for (auto [key, path] : {std::pair<const char*, const std::optional<std::string>*>{"snapshot", &v.snapshot},
                             {"ir_diff", &v.ir_diff},
                             {"trace", &v.trace}}) {
      if (path->has_value() && !(*path)->empty()) {
        links += fmt::format("{}[{}]({})", links.empty() ? "" : " ", key, **path);
      }
    }
    table += fmt::format("| {} | {} | {} | {} | {} |\n", MdCell(PassesWithKind(v)),
                         OutcomeLabel(outcome), MdCell(v.failed_pass.value_or("")),
                         MdCell(FailureDetail(v, 240)), links);
  }
  md += failures == 0 ? "Every variant compiled and ran.\n" : table;

  md += "\n## Wrong results\n\n";
  int wrong = 0;
  for (const AblationReportVariant& v : report.variants) {
    if (v.outcome != "wrong-result") continue;
    ++wrong;
    const ordered_json check = v.check.value_or(ordered_json());
    md += fmt::format(
        "- **{}** ({}): {} (reference: {}).", v.name, VariantDescription(v),
        MdCell(TextField(check, "message")),
        TextField(check, "reference").empty() ? "unknown" : TextField(check, "reference"));
    if (!v.ir_diff.value_or("").empty()) md += fmt::format(" [IR diff]({})", *v.ir_diff);
    md += "\n";
  }
  if (wrong == 0) {
    const int64_t shared = summary.shared_baseline_mismatches;
    md += shared > 0 ? fmt::format("None of their own: {} variant(s) miss the evaluator only as the baseline does "
                                   "(marked *as baseline*).\n",
                                   shared)
                     : std::string("None: every variant that ran matched its reference.\n");
  }

  if (!report.pairs.empty()) {
    md += "\n## Pair interactions\n\n";
    md +=
        "Interaction = (ratio_ab − 1) − ((ratio_a − 1) + (ratio_b − 1)). Positive: disabling "
        "both costs more than the two alone (each pass covers for the other); negative: they "
        "overlap.\n\n";
    md += "| Pass a | Pass b | Without a | Without b | Without both | Interaction |\n";
    md += "|---|---|---:|---:|---:|---:|\n";
    for (const AblationPairInteraction& p : report.pairs) {
      double interaction = Value(p.interaction);
      md += fmt::format(
          "| {} | {} | {} | {} | {} | {} |\n", MdCell(p.a), MdCell(p.b), FormatChange(Value(p.ratio_a)),
          FormatChange(Value(p.ratio_b)), FormatChange(Value(p.ratio_ab)),
          std::isnan(interaction) ? "–" : fmt::format("{:+.1f} pp", interaction * 100));
    }
  }

  bool any_diff = false;
  for (const AblationReportVariant& v : report.variants) {
    if (!(v.significant || v.outcome == "wrong-result")) continue;
    bool changed = std::any_of(v.kernel_diff.begin(), v.kernel_diff.end(),
                               [](const AblationKernelChange& k) { return k.change != "same"; });
    if (!changed) continue;
    if (!any_diff) {
      md += "\n## Kernel changes of the significant variants\n\n";
      md += "Kernels matched by name; a kernel changed when its time moved by more than 5%.\n";
      any_diff = true;
    }
    md += fmt::format("\n**{}** ({})\n\n", v.name, FormatChange(Value(v.ratio)));
    md += "| Kernel | Change | Baseline | Variant |\n|---|---|---:|---:|\n";
    int shown = 0;
    for (const AblationKernelChange& k : v.kernel_diff) {
      if (k.change == "same" || ++shown > 10) continue;
      md += fmt::format("| {} | {}{} | {} | {} |\n", MdCell(k.name), k.change, k.host ? " (on the host)" : "",
                        FormatMs(Value(k.baseline_ns)), FormatMs(Value(k.variant_ns)));
    }
  }

  md += RenderHeatmapMarkdown(report);

  if (std::vector<std::vector<std::string>> tasks = SlurmTaskRows(report); !tasks.empty()) {
    md += "\n## Slurm tasks\n\nEach task timed its variants against its own baseline, on its node.\n\n";
    md += "| Task | State | Variants | Node | Machine |\n|---:|---|---:|---|---|\n";
    for (const std::vector<std::string>& row : tasks) {
      md += fmt::format("| {} | {} | {} | {} | {} |\n", MdCell(row[0]), MdCell(row[1]), MdCell(row[2]), MdCell(row[3]),
                        MdCell(row[4]));
    }
  }

  md += RenderCompileCostMarkdown(report);
  md += "\n## Manifest\n\n| Key | Value |\n|---|---|\n";
  for (const auto& [key, value] : report.manifest.items()) {
    if (key == "tasks") continue;  // the table above
    if (key == "argv") continue;   // "command", as a list
    // Nested objects (machine, environment) a row per field: "environment.versions.cudnn".
    for (const auto& [field, text] : FlattenJsonFields(key, value)) {
      md += fmt::format("| {} | `{}` |\n", MdCell(field), MdCell(Excerpt(text, 400)));
    }
  }
  md += fmt::format("\nSchema `{}`; machine-readable: report.json, report.csv, gbench.json.\n",
                    report.schema);
  return md;
}

nlohmann::ordered_json RenderAblationGbench(const AblationReport& report) {
  const ordered_json& manifest = report.manifest;
  // The manifest's value at the first key present, top level or under "machine".
  auto manifest_value = [&](std::initializer_list<const char*> keys,
                            ordered_json fallback) -> ordered_json {
    for (const ordered_json* scope :
         {&manifest, manifest.is_object() && manifest.contains("machine") ? &manifest["machine"] : &manifest,
          manifest.is_object() && manifest.contains("environment") ? &manifest["environment"] : &manifest}) {
      if (!scope->is_object()) continue;
      for (const char* key : keys) {
        if (scope->contains(key) && !(*scope)[key].is_null()) return (*scope)[key];
      }
    }
    return fallback;
  };
  ordered_json context;
  // Google Benchmark's context always has a date: the sweep's, else now.
  context["date"] = manifest_value({"date", "started"}, "");
  if (!context["date"].is_string() || context["date"].get<std::string>().empty()) {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    context["date"] = buf;
  }
  context["host_name"] = manifest_value({"host_name", "hostname", "host"}, "");
  context["executable"] = "passlab ablate";
  context["num_cpus"] = manifest_value({"num_cpus", "cores", "cpus"}, 0);
  context["mhz_per_cpu"] = 0;
  context["cpu_scaling_enabled"] = false;
  context["caches"] = ordered_json::array();
  context["load_avg"] = ordered_json::array();
  context["library_build_type"] = "release";
  context["passlab_schema"] = report.schema;
  context["passlab_metric"] = report.metric;

  // One time unit for the file, the largest that keeps every sample >= 1
  // (compare.py prints times with few digits: 0.15 ms would read 0).
  double smallest_ns = std::numeric_limits<double>::infinity();
  auto smallest = [&](const std::vector<double>& samples) {
    for (double x : samples) {
      if (x > 0) smallest_ns = std::min(smallest_ns, x);
    }
  };
  smallest(report.baseline.samples_ns);
  for (const AblationReportVariant& v : report.variants) smallest(v.samples_ns);
  const char* unit = smallest_ns >= 1e9 ? "s" : smallest_ns >= 1e6 ? "ms" : smallest_ns >= 1e3 ? "us" : "ns";
  const double ns_per_unit = smallest_ns >= 1e9 ? 1e9 : smallest_ns >= 1e6 ? 1e6 : smallest_ns >= 1e3 ? 1e3 : 1;

  ordered_json benchmarks = ordered_json::array();
  int family = 0;
  auto add = [&](const std::string& name, const std::vector<double>& samples) {
    if (samples.empty()) return;
    std::vector<double> ms;
    for (double s : samples) ms.push_back(s / ns_per_unit);
    int64_t n = static_cast<int64_t>(ms.size());
    auto entry = [&](const std::string& entry_name, const char* run_type) {
      ordered_json b;
      b["name"] = entry_name;
      b["family_index"] = family;
      b["per_family_instance_index"] = 0;
      b["run_name"] = name;
      b["run_type"] = run_type;
      b["repetitions"] = n;
      return b;
    };
    for (int64_t i = 0; i < n; ++i) {
      ordered_json b = entry(name, "iteration");
      b["repetition_index"] = i;
      b["threads"] = 1;
      b["iterations"] = 1;
      b["real_time"] = ms[i];
      b["cpu_time"] = ms[i];
      b["time_unit"] = unit;
      benchmarks.push_back(std::move(b));
    }
    double mean = 0;
    for (double x : ms) mean += x;
    mean /= static_cast<double>(n);
    double variance = 0;
    for (double x : ms) variance += (x - mean) * (x - mean);
    double stddev = n > 1 ? std::sqrt(variance / static_cast<double>(n - 1)) : 0;
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    for (auto [aggregate, value] :
         {std::pair<const char*, double>{"mean", mean}, {"median", median}, {"stddev", stddev}}) {
      ordered_json b = entry(name + "_" + aggregate, "aggregate");
      b["threads"] = 1;
      b["aggregate_name"] = aggregate;
      b["aggregate_unit"] = "time";
      b["iterations"] = n;
      b["real_time"] = value;
      b["cpu_time"] = value;
      b["time_unit"] = unit;
      benchmarks.push_back(std::move(b));
    }
    ++family;
  };
  add(report.baseline.name, report.baseline.samples_ns);
  for (const AblationReportVariant& v : report.variants) add(v.name, v.samples_ns);
  ordered_json out;
  out["context"] = std::move(context);
  out["benchmarks"] = std::move(benchmarks);
  return out;
}

}  // namespace passlab
