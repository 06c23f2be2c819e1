// report.html's "Passes x kernels" section: the heatmap of heatmap.h as one
// inline SVG (no scripts): a <title> tooltip on every cell, a diverging
// colour scale capped at ±100%, removed kernels crossed out, the kernels only
// a variant has in a strip of their own at the right of its row.
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analysis/ablation/heatmap.h"
#include "analysis/ablation/report_internal.h"

namespace passlab {
namespace {

using ordered_json = nlohmann::ordered_json;
using ablation_internal::Excerpt;
using ablation_internal::FormatChange;
using ablation_internal::FormatMs;
using ablation_internal::HtmlEscape;

// Layout, in pixels.
constexpr int kLabelWidth = 210;   // the variant's passes
constexpr int kEffectWidth = 52;   // its overall change
constexpr int kCell = 11;
constexpr int kGroupGap = 4;
constexpr int kGroupBand = 16;     // the hero kinds' band at the top
constexpr int kNameBand = 96;      // the kernels' names, rotated
constexpr int kAddedShown = 5;     // added kernels drawn per row
constexpr int kAddedText = 96;
constexpr const char* kAddedColour = "#7a1fa2";

// "+12.3%" from a change (not a ratio); "–" for NaN.
std::string FormatRelative(double change) { return FormatChange(change + 1); }

// The colour scale and the marks, drawn from `top` down (34 pixels), in a
// group moved to the heatmap's first cell column.
std::string Legend(int left, int top) {
  std::string s = fmt::format("<g transform=\"translate({} {})\">\n", left - 40, top);
  constexpr int kSteps = 21, kStep = 12;
  for (int i = 0; i < kSteps; ++i) {
    double change = -1 + 2.0 * i / (kSteps - 1);
    s += fmt::format("<rect x=\"{}\" y=\"2\" width=\"{}\" height=\"12\" fill=\"{}\"/>", 40 + i * kStep, kStep,
                     HeatmapColour(change));
  }
  s += fmt::format(
      "<text x=\"40\" y=\"28\" font-size=\"11\" fill=\"#5b6475\">−100% (faster)</text>"
      "<text x=\"{}\" y=\"28\" font-size=\"11\" fill=\"#5b6475\" text-anchor=\"middle\">0</text>"
      "<text x=\"{}\" y=\"28\" font-size=\"11\" fill=\"#5b6475\" text-anchor=\"end\">≥ +100% (slower)</text>\n",
      40 + kSteps * kStep / 2, 40 + kSteps * kStep);
  const int x = 40 + kSteps * kStep + 24;
  s += fmt::format(
      "<rect x=\"{0}\" y=\"2\" width=\"12\" height=\"12\" fill=\"#eef0f4\" stroke=\"#c3c9d4\"/>"
      "<path d=\"M{1} 4 L{2} 12 M{2} 4 L{1} 12\" stroke=\"#3a3f4b\" stroke-width=\"1.3\"/>"
      "<text x=\"{3}\" y=\"12\" font-size=\"11\" fill=\"#5b6475\">removed</text>"
      "<rect x=\"{4}\" y=\"2\" width=\"12\" height=\"12\" fill=\"{5}\"/>"
      "<text x=\"{6}\" y=\"12\" font-size=\"11\" fill=\"#5b6475\">added in variant</text>"
      "<rect x=\"{7}\" y=\"2\" width=\"12\" height=\"12\" fill=\"{8}\"/>"
      "<text x=\"{9}\" y=\"12\" font-size=\"11\" fill=\"#5b6475\">no time</text>\n",
      x, x + 2, x + 10, x + 16, x + 80, kAddedColour, x + 96, x + 196, HeatmapColour(NAN), x + 212);
  s += "</g>\n";
  return s;
}

}  // namespace

std::string RenderHeatmapHtml(const AblationReport& report) {
  KernelHeatmap map = BuildKernelHeatmap(report);
  if (map.rows.empty() || map.columns.empty()) {
    if (map.variants_without_times == 0) return "";
    return "<h2>Passes x kernels</h2>\n<p class=\"muted\">This report has no per-kernel times per variant "
           "(it predates them); rebuild it with <code>passlab ablate --report-only --out DIR</code>.</p>\n";
  }
  std::string h =
      "<h2>Passes x kernels</h2>\n<p class=\"muted\">How each of the baseline's kernels moves when a pass is "
      "disabled: one row per variant (largest overall change first), one column per kernel of the baseline, "
      "grouped by hero kind (the most touched kernels first). Colour: the kernel's time change, blue faster, "
      "red slower, capped at ±100%; a cross: the variant has no such kernel; purple at the right: kernels only "
      "the variant has. Hover a cell for its times.</p>\n";
  // Column positions: a gap between groups.
  std::vector<int> x(map.columns.size());
  int cursor = kLabelWidth + kEffectWidth;
  for (size_t g = 0; g < map.groups.size(); ++g) {
    if (g > 0) cursor += kGroupGap;
    for (size_t i = 0; i < map.groups[g].count; ++i) {
      x[map.groups[g].first + i] = cursor;
      cursor += kCell;
    }
  }
  const int added_x = cursor + 14;
  // At least as wide as the legend below the rows.
  const int width = std::max(added_x + kAddedShown * kCell + 6 + kAddedText, kLabelWidth + kEffectWidth + 560);
  const int top = kGroupBand + kNameBand;
  const int rows_bottom = top + static_cast<int>(map.rows.size()) * kCell;
  constexpr int kLegendHeight = 44;
  const int height = rows_bottom + kLegendHeight;

  h += fmt::format(
      "<figure><svg width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" style=\"max-width:100%;height:auto\" "
      "role=\"img\" "
      "aria-label=\"passes x kernels heatmap\">\n",
      width, height);
  // Hero kinds: a band over each group, its name when it fits.
  for (size_t g = 0; g < map.groups.size(); ++g) {
    const HeatmapGroup& group = map.groups[g];
    const int gx = x[group.first];
    const int gw = static_cast<int>(group.count) * kCell;
    const size_t fits = static_cast<size_t>(std::max(0, (gw - 4) / 6));
    std::string label = group.name.size() <= fits ? group.name : (fits >= 3 ? Excerpt(group.name, fits) : "");
    h += fmt::format(
        "<g><title>{} ({} kernel{})</title><rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"11\" font-size=\"10\" fill=\"#1d2330\">{}</text></g>\n",
        HtmlEscape(group.name), group.count, group.count == 1 ? "" : "s", gx, gw, kGroupBand - 2,
        g % 2 == 0 ? "#e3e8f0" : "#f0f2f6", gx + 2, HtmlEscape(label));
  }
  // Kernel names, rotated to read upwards.
  for (size_t c = 0; c < map.columns.size(); ++c) {
    const HeatmapColumn& col = map.columns[c];
    const int cx = x[c] + kCell / 2 + 3;
    h += fmt::format(
        "<text x=\"{0}\" y=\"{1}\" font-size=\"9\" fill=\"#3a3f4b\" transform=\"rotate(-90 {0} {1})\">"
        "<title>{2} ({3}): {4} in the baseline, touched by {5} shown variant{6}</title>{7}</text>\n",
        cx, top - 3, HtmlEscape(col.kernel), HtmlEscape(col.group), FormatMs(col.baseline_ns), col.touched,
        col.touched == 1 ? "" : "s", HtmlEscape(Excerpt(col.kernel, 15)));
  }
  h += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#5b6475\">added in variant</text>\n", added_x, top - 3);

  for (size_t r = 0; r < map.rows.size(); ++r) {
    const HeatmapRow& row = map.rows[r];
    const int y = top + static_cast<int>(r) * kCell;
    h += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\" fill=\"#1d2330\"><title>{} ({})</title>{}"
        "</text><text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\" fill=\"{}\">{}</text>\n",
        kLabelWidth - 4, y + kCell - 2, HtmlEscape(row.variant), HtmlEscape(row.outcome), HtmlEscape(Excerpt(row.label, 38)),
        kLabelWidth + kEffectWidth - 6, y + kCell - 2,
        row.outcome == "slower" ? "#c8102e" : row.outcome == "faster" ? "#1a7f37" : "#5b6475",
        FormatChange(row.ratio));
    for (size_t c = 0; c < map.columns.size(); ++c) {
      const HeatmapCell& cell = row.cells[c];
      const HeatmapColumn& col = map.columns[c];
      std::string title = fmt::format("{}&#10;{} ({})&#10;baseline {}", HtmlEscape(row.label), HtmlEscape(col.kernel),
                                      HtmlEscape(col.group), FormatMs(col.baseline_ns));
      if (cell.state == HeatmapCellState::kRemoved) {
        h += fmt::format(
            "<g><title>{}&#10;removed: only the baseline has it</title><rect x=\"{}\" y=\"{}\" width=\"{}\" "
            "height=\"{}\" fill=\"#eef0f4\" stroke=\"#ffffff\" stroke-width=\"0.5\"/><path d=\"M{} {} L{} {} M{} {} "
            "L{} {}\" stroke=\"#3a3f4b\" stroke-width=\"1.1\"/></g>\n",
            title, x[c], y, kCell, kCell, x[c] + 2, y + 2, x[c] + kCell - 2, y + kCell - 2, x[c] + kCell - 2, y + 2,
            x[c] + 2, y + kCell - 2);
        continue;
      }
      h += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"0.5\">"
          "<title>{}, variant {}&#10;change {}</title></rect>\n",
          x[c], y, kCell, kCell, HeatmapColour(cell.change), title, FormatMs(cell.variant_ns),
          FormatRelative(cell.change));
    }
    double added_ns = 0;
    for (const HeatmapAdded& a : row.added) added_ns += std::isnan(a.ns) ? 0 : a.ns;
    for (size_t i = 0; i < row.added.size() && i < static_cast<size_t>(kAddedShown); ++i) {
      h += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"0.5\">"
          "<title>{}&#10;{}&#10;added: only the variant has it, {}</title></rect>\n",
          added_x + static_cast<int>(i) * kCell, y, kCell, kCell, kAddedColour, HtmlEscape(row.label),
          HtmlEscape(row.added[i].kernel), FormatMs(row.added[i].ns));
    }
    if (!row.added.empty()) {
      h += fmt::format(
          "<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#5b6475\"><title>{} kernel{} only in the variant, {} in "
          "all; {} of the baseline's removed</title>{} · {}</text>\n",
          added_x + kAddedShown * kCell + 6, y + kCell - 2, row.added.size(), row.added.size() == 1 ? "" : "s",
          FormatMs(added_ns), row.removed, row.added.size(), FormatMs(added_ns));
    }
  }
  h += Legend(kLabelWidth + kEffectWidth, rows_bottom + 10);
  h += "</svg>\n<figcaption>Hero kinds, left to right: ";
  for (size_t g = 0; g < map.groups.size(); ++g) {
    h += fmt::format("{}<code>{}</code> ({})", g ? ", " : "", HtmlEscape(map.groups[g].name), map.groups[g].count);
  }
  h += ".</figcaption></figure>\n";

  std::vector<std::string> notes;
  if (map.rows_left_out > 0) {
    notes.push_back(fmt::format("{} more variant{} with smaller overall changes", map.rows_left_out,
                                map.rows_left_out == 1 ? "" : "s"));
  }
  if (map.columns_left_out > 0) {
    notes.push_back(map.untouched_left_out == 0
                        ? fmt::format("{} more of the baseline's kernels, touched by fewer variants",
                                      map.columns_left_out)
                        : fmt::format("{} more of the baseline's kernels, touched by fewer variants ({} by none)",
                                      map.columns_left_out, map.untouched_left_out));
  }
  if (map.variants_without_times > 0) {
    notes.push_back(fmt::format("{} variant{} without per-kernel times (rebuild the report with --report-only)",
                                map.variants_without_times, map.variants_without_times == 1 ? "" : "s"));
  }
  if (!notes.empty()) {
    h += "<p class=\"muted\">Not shown: ";
    for (size_t i = 0; i < notes.size(); ++i) h += (i ? "; " : "") + HtmlEscape(notes[i]);
    h += ".</p>\n";
  }
  return h;
}

}  // namespace passlab
