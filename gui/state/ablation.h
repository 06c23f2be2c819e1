// The Ablation panel's data: a report directory written by `passlab ablate`
// (report.json, schema "passlab.ablation/1") and a sweep running as a child
// process (`passlab ablate ... --out DIR`) whose progress is the line count
// of DIR/results.jsonl against the number of variants in DIR/plan.json.
// Besides: the report's compile cost per pass (compile_cost.h), several
// reports side by side (compare.h), and a variant's module recompiled from
// the sweep's manifest (for a kernel's HLO in the baseline and the variant).
#ifndef PASSLAB_GUI_STATE_ABLATION_H_
#define PASSLAB_GUI_STATE_ABLATION_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/ablation/compile_cost.h"
#include "analysis/ablation/heatmap.h"
#include "core/ir/hlo_module.h"
#include "gui/state/job.h"

namespace passlab::gui {

struct AblationKernel {
  std::string name;
  double ns = 0;
  int64_t calls = 0;
};

struct AblationKernelDiff {
  std::string name;
  double baseline_ns = 0;
  double variant_ns = 0;
  std::string change;  // added | removed | changed | same
  bool host = false;   // the variant runs it on the host (the baseline on the device)
};

struct AblationVariant {
  std::string name;
  std::string kind;
  std::vector<std::string> disabled;
  // The pass filters the sweep compiled it with (the CLI's --disable and
  // --enable-only: "@109", "algsimp,dce").
  std::string disable;
  std::string enable_only;
  // slower | faster | no-change | undecided | wrong-result |
  // verifier-failure | compile-error | crash | timeout | required
  std::string outcome;
  // The outcome as the report's tables show it: "likely slower" / "likely
  // faster" for an undecided variant whose whole CI lies beyond the
  // threshold (report.json's large_but_uncorrected), else the outcome.
  std::string label;
  double median_ns = 0;    // in the variant's own process (its speed included)
  double estimate_ns = 0;  // at the baseline's speed: ratio x the baseline's median
  double ratio = 1;
  double ci_low = 1;
  double ci_high = 1;
  double p_adjusted = 1;
  bool significant = false;
  std::string error;
  std::vector<AblationKernelDiff> kernel_diff;
  std::string ir_diff_path;  // relative to the report directory; empty when absent
  // Whether the variant has a measured ratio (not a failure or a required pass).
  bool measured() const;
};

// The report's "compile_cost" (analysis/ablation/compile_cost.h) as the
// GUI shows it: the same numbers and the same plot as report.html's
// "Compile cost against run-time benefit". NaN where the report has null.
struct CompileCostRow {
  std::string variant;
  std::string label;  // its passes, "a + b" for a pair
  int64_t variant_index = -1;  // in AblationReport::variants; -1 when absent
  double pass_ms = 0;          // the passes' own compile time in the baseline
  double pass_runs = 0;
  double compile_ms = 0;        // the variant's total compile time
  double compile_delta_ms = 0;  // minus the baseline's
  double autotune_ms = 0;
  double ratio = 0, ci_low = 0, ci_high = 0;
  bool significant = false;
  bool clear_effect = false;  // significant, or its CI wholly beyond the threshold
  std::string quadrant;       // "cheap and useless", ..., "harmful", "" unknown
};

struct CompileCostView {
  bool present = false;  // the report has "compile_cost"
  double baseline_compile_ms = 0, baseline_optimize_ms = 0, baseline_backend_ms = 0, baseline_autotune_ms = 0;
  double kernel_cache_hits = 0, kernel_cache_misses = 0;
  double cost_split_ms = 0;  // cheap below it
  std::vector<CompileCostRow> rows;  // in the report's order
  CompileCostPlot plot;              // points' `row` index `rows`
};

struct AblationReport {
  std::string directory;
  std::string metric;
  double threshold = 0.01;
  std::string manifest;  // pretty JSON, shown as is
  // From the manifest: what recompiling a variant needs.
  std::string pipeline = "gpu";
  std::string input;  // the module, relative to the directory ("" when the manifest names none)
  std::vector<std::string> pass_options;    // PASS.OPTION=VALUE
  std::vector<std::string> removed_passes;  // --xla_disable_hlo_passes
  std::string device = "cpu";
  std::string baseline_name;
  double baseline_median_ns = 0;
  std::vector<AblationKernel> baseline_kernels;
  std::vector<AblationVariant> variants;  // in file order
  // The passes x kernels heatmap (analysis/ablation/heatmap.h), as report.html
  // draws it; no rows when the report has no "kernel_times_ns".
  KernelHeatmap heatmap;
  CompileCostView compile_cost;
};

// Reads DIR/report.json; errors name the file and the field.
absl::StatusOr<AblationReport> LoadAblationReport(const std::string& directory);
// The text of a variant's IR diff file (empty when it has none).
absl::StatusOr<std::string> ReadVariantIrDiff(const AblationReport& report, const AblationVariant& variant);

// Measured variants sorted by slowdown (largest first), then the others.
std::vector<int64_t> VariantsBySlowdown(const AblationReport& report);

// Where the heatmap's cells are, `cell` pixels square, columns of different
// hero kinds `gap` pixels apart; positions relative to the first cell.
struct HeatmapGeometry {
  float cell = 12;
  float gap = 4;
  std::vector<float> column_x;  // left edge of each column
  float width = 0, height = 0;  // of the cell grid
};
HeatmapGeometry LayOutHeatmap(const KernelHeatmap& heatmap, float cell, float gap);
// The cell under a point (relative to the first cell): {row, column}, or
// {-1, -1} outside the grid or in a gap.
std::pair<int64_t, int64_t> HeatmapCellAt(const HeatmapGeometry& geometry, const KernelHeatmap& heatmap, float x,
                                          float y);
// The index in report.variants of a heatmap row's variant, -1 when none.
int64_t HeatmapRowVariant(const AblationReport& report, int64_t row);

// The compile-cost plot's point nearest to (x, y) in the plot's units
// (CompileCostPlot::width x height) within `radius`: its index in
// plot.points, -1 when none.
int64_t CompileCostPointAt(const CompileCostPlot& plot, double x, double y, double radius);

// Reports side by side (`passlab ablate --compare`, compare.h): per variant
// each report's ratio, CI and outcome; each report against the first: sign
// agreement and rank correlation; what differs in their manifests.
struct ComparedCell {
  bool present = false;  // the report has this variant
  double ratio = 0, ci_low = 0, ci_high = 0;  // NaN when not measured / no CI
  bool significant = false;
  std::string outcome;
};
struct ComparedVariant {
  std::string name;
  std::vector<ComparedCell> cells;  // one per report
};
struct ComparedAgreement {
  int64_t report = 0;  // against report 0
  int64_t common_variants = 0;
  int64_t significant_in_either = 0;
  int64_t same_sign = 0;
  std::vector<std::string> disagreeing;
  double spearman = 0;  // NaN when undefined
};
struct ManifestDifference {
  std::string field;
  std::vector<std::string> values;  // one per report
};
struct AblationComparison {
  std::vector<std::string> directories;
  std::vector<std::string> labels;  // how the reports are named ("gpu mlp cpu")
  std::vector<double> baseline_median_ns;
  std::vector<ComparedVariant> variants;  // largest effect in any report first
  std::vector<ComparedAgreement> agreement;
  std::vector<ManifestDifference> manifest_differences;
};
// Reads DIR/report.json of every directory (two or more); errors name the
// directory.
absl::StatusOr<AblationComparison> LoadAblationComparison(const std::vector<std::string>& directories);

// The optimized module of the baseline (variant null) or a variant, compiled
// again from the sweep's manifest: its input module, pipeline, pass options
// and removed passes, and the variant's pass filters; the algorithm pickers
// read the sweep's autotune cache first, so that they choose as the sweep
// did. Slow (a whole pipeline): run it on a Job.
absl::StatusOr<std::shared_ptr<const HloModule>> RecompileSweepModule(const AblationReport& report,
                                                                      const AblationVariant* variant,
                                                                      JobProgress* progress = nullptr);
// A kernel's HLO in a module: the instruction named `name` outside fusion
// computations, after its fused computation when it is a fusion; "" when the
// module has no such instruction.
std::string KernelHloText(const HloModule& module, const std::string& name);

// A sweep in a child process; Poll() from the UI thread each frame.
class AblationSweep {
 public:
  AblationSweep() = default;
  AblationSweep(const AblationSweep&) = delete;
  AblationSweep& operator=(const AblationSweep&) = delete;
  ~AblationSweep();

  // Starts `passlab ablate <args...> --out <out_dir>`; stdout and stderr go
  // to <out_dir>/sweep.log.
  absl::Status Start(const std::string& passlab, const std::vector<std::string>& args, const std::string& out_dir);
  // Reads progress and reaps the child when it exited.
  void Poll();
  // Kills the child (SIGTERM, then SIGKILL when it does not exit).
  void Cancel();

  bool running() const { return pid_ > 0; }
  bool finished() const { return finished_; }
  int exit_code() const { return exit_code_; }  // -signal when killed
  int64_t done() const { return done_; }
  int64_t total() const { return total_; }
  const std::string& out_dir() const { return out_dir_; }
  const std::string& command_line() const { return command_line_; }
  // The last lines of sweep.log (errors).
  std::string LogTail(size_t max_bytes = 2000) const;

 private:
  pid_t pid_ = -1;
  bool finished_ = false;
  int exit_code_ = 0;
  int64_t done_ = 0;
  int64_t total_ = 0;
  std::string out_dir_;
  std::string command_line_;
};

// Counts the lines of a results log and the variants of a plan (for tests).
int64_t CountResultLines(const std::string& results_jsonl);
int64_t CountPlanVariants(const std::string& plan_json);

}  // namespace passlab::gui

#endif  // PASSLAB_GUI_STATE_ABLATION_H_
