// Ablation reports: from the runner's raw records (one JSON object per line
// of results.jsonl) to the verdicts and the files people read.
//
// BuildAblationReport pools the baseline's samples over all blocks, compares
// every variant's samples of the chosen metric against them (ratio of
// medians with a bootstrap 95% CI, Mann-Whitney U p-value adjusted across all
// measured variants), classifies each variant (slower / faster / no-change /
// wrong-result / the failure statuses), diffs its kernels against the
// baseline's and computes pair interactions. The result follows the
// typed AblationReport (ablation_report.h; report.json) that the renderers
// and the GUI read.
//
// WriteAblationReports renders that report as report.json, report.csv,
// report.md, report.html (self-contained, SVG charts, no scripts, no network)
// and gbench.json (Google Benchmark's JSON format, so compare.py-style tools
// work).
#ifndef PASSLAB_ANALYSIS_ABLATION_REPORT_H_
#define PASSLAB_ANALYSIS_ABLATION_REPORT_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/ablation/ablation_report.h"
#include "analysis/ablation/records.h"

namespace passlab {

// The per-repetition measurement compared between variants: the key of the
// records' "samples" object.
// What a sweep compares per step (records.h, AblationSamples::Metric):
// kernel time with each kernel's outlying steps capped (where the records
// hold per-kernel step times), the plain sum of kernel times, kernels and
// copies, the host's wall time, the process CPU time of the kernels.
enum class AblationMetric { kKernelNs, kKernelRawNs, kKernelCopyNs, kWallNs, kKernelCpuNs };
// "kernel_ns", "kernel_raw_ns", "kernel_copy_ns", "wall_ns", "kernel_cpu_ns".
std::string_view AblationMetricName(AblationMetric metric);
absl::StatusOr<AblationMetric> ParseAblationMetric(std::string_view name);

// The metric a sweep judges by when none is named: on the CPU backend with
// one kernel thread, the kernels' process CPU time (time the host gave other
// processes is not the program's, and a shared 2-core host gives plenty);
// elsewhere kernel time. DefaultAblationMetric also needs every record with
// samples to hold the CPU times (sweeps before they were recorded: kernel
// time).
AblationMetric SweepAblationMetric(std::string_view device, int64_t threads);
AblationMetric DefaultAblationMetric(std::string_view device, int64_t threads,
                                     const std::vector<AblationRecord>& records);

enum class PValueCorrection { kHolm, kBenjaminiHochberg };
// "holm", "bh".
std::string_view PValueCorrectionName(PValueCorrection correction);
// Accepts "holm", "bh", "fdr_bh", "benjamini-hochberg".
absl::StatusOr<PValueCorrection> ParsePValueCorrection(std::string_view name);

struct ReportOptions {
  AblationMetric metric = AblationMetric::kKernelNs;
  // A difference counts only when p_adjusted < alpha AND |ratio - 1| >
  // threshold (seed 003 highlights changes above 1%).
  double threshold = 0.01;
  double alpha = 0.05;
  PValueCorrection correction = PValueCorrection::kHolm;
  int bootstrap_resamples = 2000;
  uint64_t bootstrap_seed = 0x5eed'ab1a'7e00'0001ULL;
  // Kernel diff: a kernel present on both sides "changed" when its time
  // differs by more than this fraction of the baseline's; the diff keeps the
  // `kernel_diff_top` largest |variant_ns - baseline_ns| per variant.
  double kernel_change = 0.05;
  int kernel_diff_top = 20;
  // The A/A band (a fraction, 0.004 = ±0.4%): the largest |ratio - 1| among
  // A/A copies (plan.h: kAaVariantKind), variants whose program is the
  // baseline's. A change counts only when it also exceeds the band. The
  // sweep's own copies give it; otherwise `aa_band` (a calibration's, from
  // the CLI), said to come from `aa_band_source`. `aa_band_forced`: use
  // `aa_band` even when the sweep has copies (--aa-band); `no_aa_band`:
  // no band at all (--no-aa-band). The copies themselves are judged by the
  // threshold alone (they measure the band).
  double aa_band = std::numeric_limits<double>::quiet_NaN();
  std::string aa_band_source;
  bool aa_band_forced = false;
  bool no_aa_band = false;
};

// `manifest`: the runner's manifest object (copied into the report).
// `records`: results.jsonl's records (records.h). Records named alike (the
// baseline's one per block) are pooled: their samples concatenated, their
// kernels and numeric fields combined by median; a failure in any record of
// a variant makes it a failure. Records whose kind is "baseline" form the
// baseline.
AblationReport BuildAblationReport(const nlohmann::json& manifest, const std::vector<AblationRecord>& records,
                                   const ReportOptions& options = {});

// The relative 95% CI half-width of one record's in-process comparison
// (its samples against its control_samples, in ABBA pairs, as the report
// computes it), or NaN when the record has no complete control or fewer than
// two pairs. The runner's --target-ci checks it between repetitions.
double InProcessCiHalfWidth(const AblationRecord& record, AblationMetric metric, const ReportOptions& options = {});

// Sequential testing (the runner's --sequential): whether one record's
// in-process comparison has already settled its verdict: its 95% CI of the
// ratio lies wholly within 1 ± `band` (no change larger than the band), or
// wholly beyond it with a signed-rank p that stays below 0.05 even
// multiplied by `comparisons` (Bonferroni over the sweep's variants, never
// less strict than the report's Holm correction: the report will call it a
// change). Undecided otherwise, or when it cannot be computed (no complete
// control, < 2 pairs).
struct InProcessDecision {
  bool decided = false;
  double low = std::numeric_limits<double>::quiet_NaN();  // the ratio's CI
  double high = std::numeric_limits<double>::quiet_NaN();
};
InProcessDecision DecideInProcess(const AblationRecord& record, AblationMetric metric, double band,
                                  int64_t comparisons, const ReportOptions& options = {});

// Writes report.json, report.csv, report.md, report.html and gbench.json
// into `dir` (created if missing). Errors name the file.
absl::Status WriteAblationReports(const AblationReport& report, const std::string& dir);

// The renderings, one string each (WriteAblationReports writes these).
std::string RenderAblationCsv(const AblationReport& report);
std::string RenderAblationMarkdown(const AblationReport& report);
std::string RenderAblationHtml(const AblationReport& report);
nlohmann::ordered_json RenderAblationGbench(const AblationReport& report);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_REPORT_H_
