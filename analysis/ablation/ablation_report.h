// The built ablation report (report.json, schema "passlab.ablation/1") as a
// typed document: what BuildAblationReport (report.h) computes from a
// sweep's records, and what the renderers, the GUI, the comparison of
// sweeps and the A/A calibration read. One to_json/from_json pair (found by
// nlohmann's adl_serializer), the fields listed once (json_schema.h).
//
// Versions. 1: the reports written before the version field existed (no
// "schema_version" key; docs/results/*/report.json are such files). 2: the
// same keys plus "schema_version" after "schema". Reading accepts both;
// keys this code does not know are kept in `extra` and written back.
//
// Reading. A report needs its "schema" (passlab.ablation/N) and a name for
// every row (variant, kernel, A/A copy, pair); any other key may be absent
// or null (older reports, hand-written test fixtures) and then reads as
// the field's default. A key of the wrong type is an error naming it.
//
// Nulls. The report writes every key of a row, null where the value is
// unknown (NaN, a failed variant's ratio, a field older sweeps lack): those
// are the std::optional fields here. A few keys are written only when they
// apply (a variant's "pairs", a kernel's "host"); the comments say which.
// Numbers a producer computed as medians (nanoseconds, bytes, counts) are
// written as JSON integers when integral, as BuildAblationReport did; the
// other numbers (ratios, p-values, thresholds) as they are.
//
// Written as nlohmann::ordered_json: the keys in the order listed here,
// which is the order of the version-1 files.
#ifndef PASSLAB_ANALYSIS_ABLATION_ABLATION_REPORT_H_
#define PASSLAB_ANALYSIS_ABLATION_ABLATION_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace passlab {

// The version written by this code (see the file comment).
inline constexpr int kAblationReportSchemaVersion = 2;
// The report's "schema" string, the same in every version.
inline constexpr const char* kAblationReportSchema = "passlab.ablation/1";

// One of the baseline's kernels (per-step medians), slowest first.
struct AblationReportKernel {
  std::string name;
  std::optional<std::string> kind;    // "kernel", "library", ...
  std::optional<std::string> detail;  // "loop", "__dnn$convForward/cudnn#1", ...
  std::optional<double> ns;           // per step
  std::optional<int64_t> calls;       // per step
};

// One row of a variant's kernel diff against the baseline.
struct AblationKernelChange {
  std::string name;
  std::optional<double> baseline_ns;  // absent: the kernel was added
  std::optional<double> variant_ns;   // absent: the kernel was removed
  std::string change;                 // "added", "removed", "changed", "same"
  // Written only when true: the variant runs it on the host.
  bool host = false;
};

// How many of a variant's kernels fall in each change class (before the
// diff is cut to its largest rows).
struct AblationKernelDiffCounts {
  int64_t added = 0;
  int64_t removed = 0;
  int64_t changed = 0;
  int64_t same = 0;
};

struct AblationReportBaseline {
  std::string name = "baseline";
  std::optional<double> median_ns;
  std::vector<double> samples_ns;
  std::optional<double> ci_half_width;  // relative
  std::optional<double> compile_ms;
  std::optional<double> kernel_count;
  std::optional<double> bytes;
  std::optional<double> peak_rss_bytes;
  std::vector<AblationReportKernel> kernels;
  std::vector<std::string> host_ops;  // operations it runs on the host
  std::optional<std::string> trace;
  std::optional<std::string> snapshot;
};

// One variant's verdict and figures.
struct AblationReportVariant {
  std::string name;
  std::string kind;                  // plan.h's kinds
  std::vector<std::string> passes;   // written twice: "passes" and "disabled"
  std::optional<std::string> disable;
  std::optional<std::string> enable_only;
  std::string status = "ok";         // the records' status
  // report_internal.h kOutcomeOrder; absent only while the report is built.
  std::optional<std::string> outcome;
  std::optional<double> median_ns;
  std::vector<double> samples_ns;
  std::optional<double> ratio;  // variant / baseline, NaN: none
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  std::optional<double> ci_half_width;
  std::optional<int64_t> pairs;  // written only for paired comparisons
  std::string comparison;        // "in-process-control", "paired-rounds", "pooled"
  std::optional<double> control_median_ns;
  std::optional<double> estimate_ns;  // the variant's time at the baseline's speed
  std::optional<double> p_value;
  std::optional<double> p_adjusted;  // by the report's correction
  bool significant = false;
  std::optional<double> compile_ms;
  std::optional<double> kernel_count;
  std::optional<double> bytes;
  std::optional<double> peak_rss_bytes;
  // The output check of the record that explains the verdict (records.h),
  // plus "shares_baseline_mismatch"/"outputs_beyond_baseline" when its
  // mismatch is the baseline's.
  std::optional<nlohmann::ordered_json> check;
  std::optional<std::string> error;
  std::optional<std::string> failed_pass;
  std::optional<int64_t> signal;
  std::optional<double> timeout_s;
  std::optional<std::string> required_reason;
  std::vector<AblationKernelChange> kernel_diff;
  std::vector<std::string> host_ops;  // on the host here, on the device in the baseline
  std::optional<AblationKernelDiffCounts> kernel_diff_counts;
  // Every kernel's per-step time by name (null: unknown), for the heatmap.
  std::optional<std::map<std::string, std::optional<double>>> kernel_times_ns;
  std::optional<std::string> ir_diff;
  std::optional<double> injected_delay;  // --test-inject-delay
  std::optional<std::string> snapshot;
  std::optional<std::string> trace;
  std::optional<double> p_holm;
  std::optional<double> p_bh;
  bool significant_holm = false;
  bool significant_bh = false;
  // Undecided, but its whole 95% CI lies beyond the threshold and the band.
  bool large_but_uncorrected = false;
  nlohmann::json extra = nlohmann::json::object();

  bool CheckFailed() const;  // the check says the outputs are wrong
  bool SharesBaselineMismatch() const;
};

// One A/A copy's figures, before the band is applied.
struct AblationAaCopy {
  std::string name;
  std::string status;
  std::optional<double> ratio;
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  std::optional<int64_t> pairs;
  std::optional<double> p_value;
  std::optional<double> p_adjusted;
  bool significant = false;
};

// The A/A band the verdicts used (report.h ReportOptions::aa_band).
struct AblationAaSection {
  std::vector<AblationAaCopy> copies;
  std::optional<double> measured_band;     // the copies' largest |ratio - 1|
  std::optional<double> max_ci_deviation;  // their CIs' farthest end from 1
  std::optional<double> band;              // absent: no band
  std::string band_source;
};

// A pair variant against its members' disable-one ratios.
struct AblationPairInteraction {
  std::string variant;
  std::string a;
  std::string b;
  std::optional<double> ratio_a;
  std::optional<double> ratio_b;
  std::optional<double> ratio_ab;
  std::optional<double> interaction;  // (ab - 1) - ((a - 1) + (b - 1))
  std::optional<std::string> outcome;
};

struct AblationReportSummary {
  int64_t variants = 0;
  int64_t measured = 0;
  int64_t significant = 0;
  // Every outcome of kOutcomeOrder (written in that order), then others.
  std::map<std::string, int64_t> outcomes;
  int64_t failures = 0;
  int64_t shared_baseline_mismatches = 0;
  int64_t host_op_variants = 0;
  std::optional<double> median_ci_half_width;
  std::optional<double> max_ci_half_width;
  std::optional<std::string> max_ci_half_width_variant;
};

// The report's "compile_cost" (compile_cost.h BuildCompileCost): the
// compile time of the baseline and of each disable-one and pair variant
// against its run-time effect. Numbers are medians over records, written as
// JSON numbers as computed (1.0, not 1); null where unknown (older sweeps).
struct AblationCompileTimes {
  std::optional<double> compile_ms;   // the pipeline plus the backend
  std::optional<double> optimize_ms;  // the pipeline
  std::optional<double> backend_ms;   // emitters and JIT
  std::optional<double> autotune_ms;
  std::optional<double> kernel_cache_hits;
  std::optional<double> kernel_cache_misses;
  // Of the misses, kernels loaded from the persistent kernel cache; written
  // only for sweeps with one.
  std::optional<double> kernel_cache_persistent_hits;
};

struct AblationCompileCostBaseline {
  AblationCompileTimes times;  // written flat, before the count
  int64_t records_with_pass_times = 0;
};

// One pass's own time in the baseline's pipeline, slowest first.
struct AblationPassTime {
  std::string pass;
  std::optional<double> ms;    // total over its runs
  std::optional<double> runs;
};

struct AblationCompileCostRow {
  std::string variant;
  std::string kind;  // "disable-one" or "pair"
  std::vector<std::string> passes;
  std::optional<double> pass_ms;    // the passes' own time in the baseline
  std::optional<double> pass_runs;
  AblationCompileTimes times;       // the variant's, written flat
  std::optional<double> compile_delta_ms;  // minus the baseline's
  std::optional<double> ratio;
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  bool significant = false;
  std::optional<std::string> outcome;
  // Significant, or its whole 95% CI beyond the threshold; reports without
  // the key read it as `significant`.
  bool clear_effect = false;
  std::string quadrant;  // CompileCostQuadrant's; "" when unknown

  // The passes joined by " + " (the variant's name when it has none).
  std::string PassesLabel() const;
};

struct AblationCompileCost {
  AblationCompileCostBaseline baseline;
  std::vector<AblationPassTime> pass_times;
  std::optional<double> cost_split_ms;  // cheap below it
  std::vector<AblationCompileCostRow> rows;
};

struct AblationReport {
  int schema_version = kAblationReportSchemaVersion;
  std::string schema = kAblationReportSchema;
  // The sweep's manifest.json as the report copied it (the runner's
  // settings and the caller's part; records.h AblationManifest types it).
  nlohmann::ordered_json manifest = nlohmann::ordered_json::object();
  std::string metric = "kernel_ns";  // report.h AblationMetricName
  double threshold = 0.01;
  std::string correction = "holm";  // report.h PValueCorrectionName
  double alpha = 0.05;
  AblationReportBaseline baseline;
  // Measured variants by ratio, largest slowdown first, then the failures.
  std::vector<AblationReportVariant> variants;
  AblationAaSection aa;
  std::vector<AblationPairInteraction> pairs;
  // Null (or absent, in reports older than it): none.
  std::optional<AblationCompileCost> compile_cost;
  AblationReportSummary summary;
  std::vector<std::string> warnings;
  nlohmann::json extra = nlohmann::json::object();

  // The variant named `name`, or null.
  const AblationReportVariant* FindVariant(const std::string& name) const;
};

void to_json(nlohmann::ordered_json& j, const AblationReportKernel& k);
void from_json(const nlohmann::json& j, AblationReportKernel& k);
void to_json(nlohmann::ordered_json& j, const AblationKernelChange& c);
void from_json(const nlohmann::json& j, AblationKernelChange& c);
void to_json(nlohmann::ordered_json& j, const AblationKernelDiffCounts& c);
void from_json(const nlohmann::json& j, AblationKernelDiffCounts& c);
void to_json(nlohmann::ordered_json& j, const AblationReportBaseline& b);
void from_json(const nlohmann::json& j, AblationReportBaseline& b);
void to_json(nlohmann::ordered_json& j, const AblationReportVariant& v);
void from_json(const nlohmann::json& j, AblationReportVariant& v);
void to_json(nlohmann::ordered_json& j, const AblationAaCopy& c);
void from_json(const nlohmann::json& j, AblationAaCopy& c);
void to_json(nlohmann::ordered_json& j, const AblationAaSection& a);
void from_json(const nlohmann::json& j, AblationAaSection& a);
void to_json(nlohmann::ordered_json& j, const AblationPairInteraction& p);
void from_json(const nlohmann::json& j, AblationPairInteraction& p);
void to_json(nlohmann::ordered_json& j, const AblationCompileCostBaseline& b);
void from_json(const nlohmann::json& j, AblationCompileCostBaseline& b);
void to_json(nlohmann::ordered_json& j, const AblationPassTime& p);
void from_json(const nlohmann::json& j, AblationPassTime& p);
void to_json(nlohmann::ordered_json& j, const AblationCompileCostRow& r);
void from_json(const nlohmann::json& j, AblationCompileCostRow& r);
void to_json(nlohmann::ordered_json& j, const AblationCompileCost& c);
void from_json(const nlohmann::json& j, AblationCompileCost& c);
void to_json(nlohmann::ordered_json& j, const AblationReportSummary& s);
void from_json(const nlohmann::json& j, AblationReportSummary& s);
// from_json throws json_schema::SchemaError naming the missing or mistyped
// key (a "schema" other than passlab.ablation/N too); ParseAblationReport
// turns that into a Status.
void to_json(nlohmann::ordered_json& j, const AblationReport& r);
void from_json(const nlohmann::json& j, AblationReport& r);

// `where` prefixes the error ("DIR/report.json").
absl::StatusOr<AblationReport> ParseAblationReport(const nlohmann::json& j, const std::string& where);
// The same from a report kept in key order (BuildAblationReport's JSON).
absl::StatusOr<AblationReport> ParseAblationReport(const nlohmann::ordered_json& j, const std::string& where);
// A report.json file; errors name the file (and the key).
absl::StatusOr<AblationReport> ReadAblationReport(const std::string& path);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_ABLATION_REPORT_H_
