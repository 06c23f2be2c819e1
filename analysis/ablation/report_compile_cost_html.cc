// The HTML rendering of the report's "compile_cost" (compile_cost.h): a
// table and an inline SVG scatter plot, each pass's own compile time (log
// scale) against the run-time change without it, with the cost/benefit
// quadrants named.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "analysis/ablation/compile_cost.h"
#include "analysis/ablation/report_internal.h"

namespace passlab {
namespace {

using namespace ablation_internal;

constexpr double kWidth = 900, kHeight = 440;
constexpr double kLeft = 70, kRight = 24, kTop = 24, kBottom = 52;
// Points labelled beyond the significant ones: the most expensive passes
// (more would crowd the zero line, where the insignificant ones sit).
constexpr size_t kExpensiveLabels = 1;

std::string Ms(double ms) {
  if (!std::isfinite(ms)) return "–";
  if (ms > 0 && ms < 0.1) return fmt::format("{:.1f} µs", ms * 1e3);
  return ms < 10 ? fmt::format("{:.2f} ms", ms) : fmt::format("{:.0f} ms", ms);
}

std::string TickLabel(double ms) {
  return ms >= 1 ? fmt::format("{:.0f} ms", ms) : fmt::format("{:g} ms", ms);
}

// The x range in decades (log10 of ms) and y range in percent of a plot.
struct Axes {
  double low_decade = -2, high_decade = 2;
  double low_pct = -5, high_pct = 5;
  double X(double ms) const {
    double d = std::clamp(std::log10(std::max(ms, 1e-300)), low_decade, high_decade);
    return kLeft + (d - low_decade) / (high_decade - low_decade) * (kWidth - kLeft - kRight);
  }
  double Y(double pct) const {
    return kTop + (high_pct - pct) / (high_pct - low_pct) * (kHeight - kTop - kBottom);
  }
};

bool Plottable(const AblationCompileCostRow& row) {
  return std::isfinite(Value(row.pass_ms)) && std::isfinite(Value(row.ratio));
}

Axes AxesFor(const std::vector<AblationCompileCostRow>& rows) {
  double low = std::numeric_limits<double>::infinity(), high = -low, low_pct = -1, high_pct = 1;
  for (const AblationCompileCostRow& row : rows) {
    if (!Plottable(row)) continue;
    double ms = *row.pass_ms;
    double pct = (*row.ratio - 1) * 100;
    if (ms > 0) {
      low = std::min(low, std::log10(ms));
      high = std::max(high, std::log10(ms));
    }
    low_pct = std::min(low_pct, pct);
    high_pct = std::max(high_pct, pct);
  }
  Axes axes;
  if (std::isfinite(low)) {
    axes.low_decade = std::floor(low);
    axes.high_decade = std::max(std::ceil(high), axes.low_decade + 1);
  }
  // Passes that took no time sit at the left edge. Room at the top for
  // the quadrants' names.
  double span = high_pct - low_pct;
  axes.low_pct = low_pct - 0.08 * span;
  axes.high_pct = high_pct + 0.16 * span;
  return axes;
}

}  // namespace

CompileCostPlot LayOutCompileCostPlot(const AblationCompileCost& compile_cost) {
  CompileCostPlot plot{.width = kWidth, .height = kHeight};
  plot.left = kLeft;
  plot.top = kTop;
  plot.right = kWidth - kRight;
  plot.bottom = kHeight - kBottom;
  const std::vector<AblationCompileCostRow>& rows = compile_cost.rows;
  Axes axes = AxesFor(rows);
  plot.low_pct = axes.low_pct;
  plot.high_pct = axes.high_pct;
  double split = Value(compile_cost.cost_split_ms);
  plot.split_x = std::isfinite(split) ? axes.X(split) : kLeft;
  plot.zero_y = axes.Y(0);
  for (double d = axes.low_decade; d <= axes.high_decade + 1e-9; d += 1) {
    plot.x_ticks.push_back({axes.X(std::pow(10, d)), TickLabel(std::pow(10, d))});
  }
  double span = axes.high_pct - axes.low_pct;
  double step = std::pow(10, std::floor(std::log10(span / 4)));
  if (span / step > 10) step *= 2;
  if (span / step > 10) step *= 2.5;
  for (double t = std::ceil(axes.low_pct / step) * step; t <= axes.high_pct; t += step) {
    plot.y_ticks.push_back({axes.Y(t), fmt::format("{:+g}%", std::round(t * 100) / 100 + 0.0)});  // no "-0%"
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const AblationCompileCostRow& row = rows[i];
    if (!Plottable(row)) continue;
    CompileCostPoint p;
    p.row = i;
    p.label = row.PassesLabel();
    p.x = axes.X(*row.pass_ms);
    p.y = axes.Y((*row.ratio - 1) * 100);
    p.significant = row.significant;
    p.quadrant = row.quadrant;
    plot.points.push_back(std::move(p));
  }
  return plot;
}

std::string RenderCompileCostHtml(const AblationReport& report) {
  if (!report.compile_cost.has_value()) return "";
  const AblationCompileCost& cost = *report.compile_cost;
  const AblationCompileTimes& base = cost.baseline.times;
  const std::vector<AblationCompileCostRow>& rows = cost.rows;
  auto cache = [](const AblationCompileTimes& t) {
    if (!t.kernel_cache_hits || !t.kernel_cache_misses) return std::string("–");
    return fmt::format("{:.0f} / {:.0f}", *t.kernel_cache_hits, *t.kernel_cache_misses);
  };
  std::string h = "<h2>Compile cost against run-time benefit</h2>\n";
  h += fmt::format(
      "<p class=\"muted\">Baseline compile: <b>{}</b> in all — pipeline {} (autotuning {}), backend emitters and "
      "JIT {}; kernel cache hits / misses {} (a hit costs no compile, so a cheap compile with many hits is not a "
      "cheap program). A pass's own time: its total over its runs in the baseline's pipeline, median over the "
      "baseline's records. Δ compile: the variant's total compile time minus the baseline's.</p>\n",
      Ms(Value(base.compile_ms)), Ms(Value(base.optimize_ms)), Ms(Value(base.autotune_ms)),
      Ms(Value(base.backend_ms)), cache(base));
  if (rows.empty()) return h + "<p>No disable-one or pair variants.</p>\n";

  // The scatter plot.
  CompileCostPlot plot = LayOutCompileCostPlot(cost);
  Axes axes = AxesFor(rows);
  const double right = kWidth - kRight, bottom = kHeight - kBottom;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\" aria-label=\"compile cost against run-time change\">\n",
      kWidth, kHeight);
  double threshold = report.threshold;
  if (std::isfinite(threshold)) {
    double y1 = std::max(kTop, axes.Y(threshold * 100)), y2 = std::min(bottom, axes.Y(-threshold * 100));
    svg += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"#eef1f6\"/>\n", kLeft, y1,
                       right - kLeft, std::max(0.0, y2 - y1));
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#d9dee7\"/>\n", kLeft,
                     kTop, right - kLeft, bottom - kTop);
  for (const CompileCostTick& tick : plot.x_ticks) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eceff4\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"12\" fill=\"#5b6475\" text-anchor=\"middle\">{4}</text>\n",
        tick.position, kTop, bottom, bottom + 16, tick.label);
  }
  for (const CompileCostTick& tick : plot.y_ticks) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"12\" fill=\"#5b6475\" text-anchor=\"end\">{}</text>\n",
                       kLeft - 6, tick.position + 4, tick.label);
  }
  svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#8c96a8\"/>\n", kLeft,
                     plot.zero_y, right, plot.zero_y);
  if (std::isfinite(Value(cost.cost_split_ms))) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#8c96a8\" stroke-dasharray=\"5 4\"/>\n",
        plot.split_x, kTop, bottom);
  }
  // The quadrants' names: essential above (slower without the pass),
  // useless in the band around no change.
  const double band_y = std::min(bottom - 6, plot.zero_y + 16);
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{}\" font-size=\"13\" font-weight=\"600\" fill=\"#1a7f37\">cheap and useless</text>\n"
      "<text x=\"{:.1f}\" y=\"{}\" font-size=\"13\" font-weight=\"600\" fill=\"#c8102e\" text-anchor=\"end\">expensive "
      "and essential</text>\n"
      "<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\" fill=\"#8c96a8\">cheap and essential</text>\n"
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" fill=\"#8c96a8\" text-anchor=\"end\">expensive and useless</text>\n",
      kLeft + 8, band_y, right - 8, kTop + 18, kLeft + 8, kTop + 18, right - 8, band_y);
  // Labels: the points with a clear effect and the most expensive ones.
  std::vector<double> xs;
  for (const CompileCostPoint& p : plot.points) xs.push_back(p.x);
  std::sort(xs.begin(), xs.end(), std::greater<>());
  const double label_x = xs.size() >= kExpensiveLabels ? xs[kExpensiveLabels - 1] : -1;
  for (const CompileCostPoint& p : plot.points) {
    const bool above = p.y < plot.zero_y;
    // A clear effect (significant, or a CI wholly beyond the threshold) is
    // coloured and labelled; only a significant one is filled.
    const bool clear = p.significant || p.quadrant.find("essential") != std::string::npos || p.quadrant == "harmful";
    const char* color = !clear ? "#8c96a8" : above ? "#c8102e" : "#1a7f37";
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\" stroke=\"{}\" stroke-width=\"1.5\">"
                       "<title>{}</title></circle>\n",
                       p.x, p.y, p.significant ? color : "white", color, HtmlEscape(p.label + " — " + p.quadrant));
    if (clear || p.x >= label_x) {
      const bool left = p.x > right - 120;
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11.5\" fill=\"#1d2330\"{}>{}</text>\n",
                         left ? p.x - 8 : p.x + 8, p.y - 6, left ? " text-anchor=\"end\"" : "", HtmlEscape(p.label));
    }
  }
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{}\" font-size=\"13\" fill=\"#5b6475\" text-anchor=\"middle\">the pass's own compile "
      "time (log scale)</text>\n"
      "<text x=\"16\" y=\"{:.1f}\" font-size=\"13\" fill=\"#5b6475\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 16 {:.1f})\">run-time change without the pass</text>\n</svg>\n",
      (kLeft + right) / 2, kHeight - 10, (kTop + bottom) / 2, (kTop + bottom) / 2);
  if (plot.points.empty()) {
    h += "<p class=\"muted\">No per-pass compile times in these records (a sweep from before they were recorded): "
         "no plot.</p>\n";
  } else {
    h += "<figure>\n" + svg +
         "<figcaption>Each point is a pass: x its own compile time in the baseline, y the change of run time "
         "without it. Filled: significant. Dashed: 1% of the baseline's pipeline time (cheap to its left); shaded: within the "
         "report's threshold of no change. A quadrant's \"essential\" (or \"harmful\") needs a clear effect: significant, "
         "or its whole 95% CI beyond the threshold (a sweep too short for Holm's correction).</figcaption>\n</figure>\n";
  }

  h += "<table>\n<thead><tr><th>Passes</th><th class=\"num\">Own compile</th><th class=\"num\">Runs</th>"
       "<th class=\"num\">Δ compile</th><th class=\"num\">Autotuning</th><th class=\"num\">Kernel cache hits / "
       "misses</th><th class=\"num\">Run-time change</th><th>95% CI</th><th>Significant</th><th>Quadrant</th>"
       "</tr></thead>\n<tbody>\n";
  for (const AblationCompileCostRow& row : rows) {
    double runs = Value(row.pass_runs), delta = Value(row.compile_delta_ms);
    std::string ci = FormatCi(Value(row.ci_low), Value(row.ci_high));
    const std::string& quadrant = row.quadrant;
    h += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        HtmlEscape(row.PassesLabel()), Ms(Value(row.pass_ms)),
        std::isnan(runs) ? "–" : fmt::format("{:.0f}", runs),
        std::isnan(delta) ? "–" : (delta >= 0 ? "+" : "−") + Ms(std::fabs(delta)),
        Ms(Value(row.times.autotune_ms)), cache(row.times), FormatChange(Value(row.ratio)),
        ci.empty() ? "–" : HtmlEscape(ci), row.significant ? "yes" : "no",
        quadrant.empty() ? "–" : HtmlEscape(quadrant));
  }
  h += "</tbody>\n</table>\n";
  return h;
}

}  // namespace passlab
