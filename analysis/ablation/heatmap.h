// The passes x kernels heatmap of an ablation report: for each variant (the
// passes it disables), how the time of each of the baseline's kernels moved.
//
// The report builder stores every variant's complete per-kernel times under
// "kernel_times_ns" ({kernel: median ns}; its "kernel_diff" keeps only the
// largest differences). BuildKernelHeatmap reads that and the baseline's
// kernel list back and lays the matrix out for the renderers (report.html's
// "Passes x kernels" section, report.md's summary, the GUI):
//   - rows: the variants with kernel times, largest overall effect
//     |ratio - 1| first, at most `max_rows`;
//   - columns: the baseline's kernels grouped by hero kind (the kernel
//     record's "detail": "loop", "reduction", "__blas$gemm/blas", ...), at
//     most `max_columns`, the ones the shown rows touch most kept; groups
//     and the kernels within a group ordered by how much they are touched;
//   - cells: the kernel's relative time change in that variant, or "removed"
//     (the variant lacks the kernel); each row also lists the kernels only
//     the variant has ("added").
#ifndef PASSLAB_ANALYSIS_ABLATION_HEATMAP_H_
#define PASSLAB_ANALYSIS_ABLATION_HEATMAP_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/ablation/ablation_report.h"

namespace passlab {

struct HeatmapOptions {
  size_t max_rows = 40;
  size_t max_columns = 60;
  // A kernel counts as touched by a variant when removed or when its time
  // moved by more than this fraction (the report's kernel_change default).
  double touch_threshold = 0.05;
};

struct HeatmapColumn {
  std::string kernel;
  std::string group;  // hero kind: the kernel's detail, else its kind
  double baseline_ns = 0;
  int touched = 0;  // shown rows that remove it or move it past the threshold
};

// A run of consecutive columns with the same group.
struct HeatmapGroup {
  std::string name;
  size_t first = 0, count = 0;
};

enum class HeatmapCellState { kTimed, kRemoved };

struct HeatmapCell {
  HeatmapCellState state = HeatmapCellState::kTimed;
  double variant_ns = 0;  // NaN when removed (or the time is unknown)
  double change = 0;      // variant_ns / baseline_ns - 1, uncapped; NaN when unknown
};

struct HeatmapAdded {
  std::string kernel;
  double ns = 0;
};

struct HeatmapRow {
  std::string variant;  // the variant's name
  std::string label;    // its passes, with the kind unless disable-one
  std::string outcome;
  double ratio = 0;                // the variant's overall ratio (NaN when none)
  std::vector<HeatmapCell> cells;  // one per column
  std::vector<HeatmapAdded> added;  // kernels only the variant has, largest first
  int removed = 0;                  // of all the baseline's kernels, shown or not
};

struct KernelHeatmap {
  std::vector<HeatmapColumn> columns;
  std::vector<HeatmapGroup> groups;
  std::vector<HeatmapRow> rows;
  size_t rows_left_out = 0;     // variants with kernel times beyond max_rows
  size_t columns_left_out = 0;  // baseline kernels beyond max_columns
  size_t untouched_left_out = 0;  // of those, kernels no shown row touches
  size_t variants_without_times = 0;  // measured variants lacking "kernel_times_ns" (older reports)
};

KernelHeatmap BuildKernelHeatmap(const AblationReport& report, const HeatmapOptions& options = {});

// A change capped to [-1, +1] (±100%); NaN stays NaN.
double CapChange(double change);
// The diverging colour of a change ("#rrggbb"): white at 0, blue when faster
// (#2166ac at -100%), red when slower (#b2182b at +100% and beyond); grey
// (#d0d4db) when unknown.
std::string HeatmapColour(double change);

// The report.html section "Passes x kernels" (an inline SVG with a <title>
// tooltip per cell); "" when no variant has kernel times.
std::string RenderHeatmapHtml(const AblationReport& report);
// report.md's summary: the largest changes of single kernels, as a short
// Markdown section; "" when no variant has kernel times.
std::string RenderHeatmapMarkdown(const AblationReport& report);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_HEATMAP_H_
