// Compile cost against run-time benefit, per pass.
//
// The worker records what its compile cost: the wall time of every pass of
// the pipeline, aggregated per pass name ("pass_times"), the part of it spent
// autotuning (the config assigner and the algorithm pickers, "autotune_ms"),
// and the kernel cache's hits and misses while the backend compiled the
// variant ("kernel_cache"), so that a cache hit is not taken for a cheap
// compile. The backend's own time (emitters and JIT) is the record's
// "compile_ms", the pipeline's "optimize_ms".
//
// BuildCompileCost turns the records into the report's "compile_cost" object:
// per disable-one (and pair) variant, the pass's own compile time (its total
// over its runs, median over the baseline's records), the variant's total
// compile time (optimize_ms + compile_ms) against the baseline's, and its
// run-time effect (ratio, CI, significance) — and where it falls in the
// cost/benefit plane. Records of sweeps older than these fields give null
// (rendered as "–").
#ifndef PASSLAB_ANALYSIS_ABLATION_COMPILE_COST_H_
#define PASSLAB_ANALYSIS_ABLATION_COMPILE_COST_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/ablation/ablation_report.h"
#include "analysis/ablation/records.h"

namespace passlab {

class PassRecorder;

// Whether the pass autotunes (times candidate configurations or algorithms).
bool IsAutotuningPass(std::string_view pass_name);

// A worker's record fields from its pipeline's recorder: {"pass_times":
// {PASS: {"ms": total, "runs": N}, ...}, "autotune_ms": ms}.
nlohmann::json CompileCostFields(const PassRecorder& recorder);

// The report's "compile_cost" (ablation_report.h AblationCompileCost).
// `variants`: the report's variants (their name, kind, passes, ratio,
// ci_low, ci_high, significant, outcome). `threshold`: the report's smallest
// change that counts (0.01 = 1%).
AblationCompileCost BuildCompileCost(const std::vector<AblationRecord>& records,
                                     const std::vector<AblationReportVariant>& variants, double threshold = 0.01);

// Where a row falls: "cheap and useless", "cheap and essential", "expensive
// and useless", "expensive and essential", "harmful" (significantly faster
// without the pass), or "" when its pass time or ratio is unknown. Cheap:
// pass_ms below `cost_split_ms`; essential: a clear effect (significant, or
// the whole 95% CI beyond the threshold, for sweeps too short for the
// corrected test to reach significance) and slower without the pass.
std::string CompileCostQuadrant(double pass_ms, double ratio, bool clear_effect, double cost_split_ms);

// The renderings of report.compile_cost ("" when the report has none).
std::string RenderCompileCostMarkdown(const AblationReport& report);
std::string RenderCompileCostHtml(const AblationReport& report);

// The scatter plot's geometry, shared by report.html's SVG and the GUI
// (which scales it to its panel): a point per row with a known pass time and
// ratio, the axes' ticks, in SVG user units.
struct CompileCostPoint {
  std::string label;
  size_t row = 0;  // index into AblationCompileCost::rows
  double x = 0, y = 0;  // position in the SVG
  bool significant = false;
  std::string quadrant;
};
struct CompileCostTick {
  double position = 0;  // x of an x tick, y of a y tick
  std::string label;    // "1 ms", "+5%"
};
struct CompileCostPlot {
  double width = 0, height = 0;
  double left = 0, top = 0, right = 0, bottom = 0;  // the plotting area
  double split_x = 0;  // the cost split's x
  double zero_y = 0;   // y of "no change"
  std::vector<CompileCostTick> x_ticks;  // decades of the pass time (log scale)
  std::vector<CompileCostTick> y_ticks;  // round run-time changes
  std::vector<CompileCostPoint> points;
  // The axes: the y of a run-time change in percent (the threshold band).
  double low_pct = 0, high_pct = 0;
  double Y(double pct) const { return top + (high_pct - pct) / (high_pct - low_pct) * (bottom - top); }
};
CompileCostPlot LayOutCompileCostPlot(const AblationCompileCost& compile_cost);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_COMPILE_COST_H_
