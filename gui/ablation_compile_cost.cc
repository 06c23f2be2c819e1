#include "gui/ablation_compile_cost.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gui/panels.h"

namespace passlab::gui {
namespace {

constexpr ImU32 kSlowerColour = IM_COL32(235, 95, 80, 255);   // essential: slower without it
constexpr ImU32 kFasterColour = IM_COL32(90, 200, 110, 255);  // harmful: faster without it
constexpr ImU32 kUnclearColour = IM_COL32(150, 156, 170, 255);
constexpr ImU32 kAxisText = IM_COL32(150, 152, 160, 255);
constexpr ImU32 kGrid = IM_COL32(55, 58, 66, 255);
// Points labelled beyond the clear ones: the most expensive (as report.html).
constexpr size_t kExpensiveLabels = 1;

// A label's place on the plot.
struct Box {
  ImVec2 min, max;
  bool Overlaps(const Box& o) const { return min.x < o.max.x && o.min.x < max.x && min.y < o.max.y && o.min.y < max.y; }
};

// As report.html writes times: µs below 0.1 ms.
std::string Ms(double ms) {
  char buf[32];
  if (!std::isfinite(ms)) return "–";
  if (ms > 0 && ms < 0.1) {
    std::snprintf(buf, sizeof buf, "%.1f µs", ms * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, ms < 10 ? "%.2f ms" : "%.0f ms", ms);
  }
  return buf;
}

std::string SignedMs(double ms) {
  if (!std::isfinite(ms)) return "–";
  return (ms >= 0 ? "+" : "-") + Ms(std::fabs(ms));
}

std::string Percent(double ratio) {
  if (!std::isfinite(ratio)) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", (ratio - 1) * 100);
  return buf;
}

std::string Ci(double low, double high) {
  if (!std::isfinite(low) || !std::isfinite(high)) return "–";
  char buf[48];
  std::snprintf(buf, sizeof buf, "[%+.1f%%, %+.1f%%]", (low - 1) * 100, (high - 1) * 100);
  return buf;
}

ImU32 PointColour(const CompileCostRow& row) {
  if (!row.clear_effect) return kUnclearColour;
  return row.ratio > 1 ? kSlowerColour : kFasterColour;
}

void RowTooltip(const CompileCostRow& row) {
  ImGui::SetTooltip("%s — %s\nown compile %s over %.0f runs; variant's compile %s (%s)\nrun-time change %s %s%s\n"
                    "click to select the variant",
                    row.label.c_str(), row.quadrant.empty() ? "unknown" : row.quadrant.c_str(), Ms(row.pass_ms).c_str(),
                    std::isfinite(row.pass_runs) ? row.pass_runs : 0.0, Ms(row.compile_ms).c_str(),
                    SignedMs(row.compile_delta_ms).c_str(), Percent(row.ratio).c_str(),
                    Ci(row.ci_low, row.ci_high).c_str(), row.significant ? ", significant" : "");
}

// The scatter plot: CompileCostPlot's geometry (report.html's SVG units)
// stretched over `size` pixels.
void DrawScatter(AppState& state, const AblationReport& report, ImVec2 size) {
  const CompileCostView& view = report.compile_cost;
  const CompileCostPlot& plot = view.plot;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##compile_cost_plot", size);
  const bool hovered = ImGui::IsItemHovered();
  const float sx = size.x / static_cast<float>(plot.width), sy = size.y / static_cast<float>(plot.height);
  auto at = [&](double x, double y) { return ImVec2(origin.x + sx * static_cast<float>(x), origin.y + sy * static_cast<float>(y)); };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 area0 = at(plot.left, plot.top), area1 = at(plot.right, plot.bottom);
  dl->AddRectFilled(area0, area1, IM_COL32(30, 32, 38, 255));
  // Within the threshold of no change: shaded.
  const double band_top = std::max(plot.top, plot.Y(report.threshold * 100));
  const double band_bottom = std::min(plot.bottom, plot.Y(-report.threshold * 100));
  if (band_bottom > band_top) {
    dl->AddRectFilled(at(plot.left, band_top), at(plot.right, band_bottom), IM_COL32(48, 52, 62, 255));
  }
  dl->AddRect(area0, area1, IM_COL32(70, 74, 84, 255));
  const float line = ImGui::GetTextLineHeight();
  for (const CompileCostTick& t : plot.x_ticks) {
    const ImVec2 a = at(t.position, plot.top), b = at(t.position, plot.bottom);
    dl->AddLine(a, b, kGrid);
    const float w = ImGui::CalcTextSize(t.label.c_str()).x;
    dl->AddText(ImVec2(b.x - w / 2, b.y + 3), kAxisText, t.label.c_str());
  }
  for (const CompileCostTick& t : plot.y_ticks) {
    const ImVec2 p = at(plot.left, t.position);
    const float w = ImGui::CalcTextSize(t.label.c_str()).x;
    dl->AddText(ImVec2(p.x - w - 6, p.y - line / 2), kAxisText, t.label.c_str());
  }
  dl->AddLine(at(plot.left, plot.zero_y), at(plot.right, plot.zero_y), IM_COL32(140, 150, 168, 255));
  if (std::isfinite(view.cost_split_ms)) {
    for (double y = plot.top; y < plot.bottom; y += 9) {
      dl->AddLine(at(plot.split_x, y), at(plot.split_x, std::min(y + 5, plot.bottom)), IM_COL32(140, 150, 168, 255));
    }
  }
  // The corners, as report.html names them: essential above (slower
  // without the pass), useless in the band around no change.
  const float band_y = std::min(area1.y - line - 4, at(0, plot.zero_y).y + 6);
  const float top_y = area0.y + 6;
  auto corner = [&](const char* text, float y, bool right, ImU32 colour) {
    const float w = ImGui::CalcTextSize(text).x;
    dl->AddText(ImVec2(right ? area1.x - w - 8 : area0.x + 8, y), colour, text);
  };
  corner("cheap and useless", band_y, false, IM_COL32(110, 210, 130, 255));
  corner("expensive and essential", top_y, true, IM_COL32(245, 110, 95, 255));
  corner("cheap and essential", top_y, false, kAxisText);
  corner("expensive and useless", band_y, true, kAxisText);

  // Labels: the points with a clear effect and the most expensive ones.
  std::vector<double> xs;
  for (const CompileCostPoint& p : plot.points) xs.push_back(p.x);
  std::sort(xs.begin(), xs.end(), std::greater<>());
  const double label_x = xs.size() >= kExpensiveLabels ? xs[kExpensiveLabels - 1] : -1;
  const int64_t selected = state.ablation.selected_variant;
  std::vector<Box> labels;
  for (const CompileCostPoint& p : plot.points) {
    const CompileCostRow& row = view.rows[p.row];
    const ImVec2 c = at(p.x, p.y);
    const ImU32 colour = PointColour(row);
    if (p.significant) {
      dl->AddCircleFilled(c, 5, colour);
    } else {
      dl->AddCircle(c, 5, colour, 0, 1.5f);
    }
    if (selected >= 0 && row.variant_index == selected) dl->AddCircle(c, 9, IM_COL32(255, 220, 90, 255), 0, 2);
    if (row.clear_effect || p.x >= label_x) {
      // Above the point, else higher up, else left out (its tooltip has it)
      // when it would cover another label.
      const float w = ImGui::CalcTextSize(p.label.c_str()).x;
      const bool left = c.x + 8 + w > area1.x;
      const float x = left ? c.x - 8 - w : c.x + 8;
      for (int shift = 0; shift < 3; ++shift) {
        const Box box{ImVec2(x, c.y - line * static_cast<float>(shift + 1) - 1),
                      ImVec2(x + w, c.y - line * static_cast<float>(shift) - 1)};
        if (std::any_of(labels.begin(), labels.end(), [&](const Box& b) { return b.Overlaps(box); })) continue;
        if (shift > 0) dl->AddLine(ImVec2(c.x, c.y - 5), ImVec2(left ? box.max.x : box.min.x, box.max.y), kGrid);
        dl->AddText(box.min, IM_COL32(220, 222, 228, 255), p.label.c_str());
        labels.push_back(box);
        break;
      }
    }
  }
  if (!hovered) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const int64_t hit = CompileCostPointAt(plot, (mouse.x - origin.x) / sx, (mouse.y - origin.y) / sy, 8 / std::min(sx, sy));
  if (hit < 0) return;
  const CompileCostRow& row = view.rows[plot.points[hit].row];
  RowTooltip(row);
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && row.variant_index >= 0) SelectAblationVariant(state, row.variant_index);
}

void DrawTable(AppState& state, const CompileCostView& view) {
  if (!ImGui::BeginTable("##compile_cost_rows", 9,
                         ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                             ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Sortable)) {
    return;
  }
  ImGui::TableSetupScrollFreeze(0, 1);
  const float ch = ImGui::CalcTextSize("0").x;
  constexpr ImGuiTableColumnFlags kFixed = ImGuiTableColumnFlags_WidthFixed;
  ImGui::TableSetupColumn("passes", ImGuiTableColumnFlags_WidthStretch | ImGuiTableColumnFlags_NoSort);
  ImGui::TableSetupColumn("own compile",
                          kFixed | ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending,
                          11 * ch);
  ImGui::TableSetupColumn("runs", kFixed | ImGuiTableColumnFlags_NoSort, 4 * ch);
  ImGui::TableSetupColumn("Δ compile", kFixed | ImGuiTableColumnFlags_PreferSortDescending, 10 * ch);
  ImGui::TableSetupColumn("autotune", kFixed | ImGuiTableColumnFlags_NoSort, 9 * ch);
  ImGui::TableSetupColumn("change", kFixed | ImGuiTableColumnFlags_PreferSortDescending, 9 * ch);
  ImGui::TableSetupColumn("95% CI", kFixed | ImGuiTableColumnFlags_NoSort, 17 * ch);
  ImGui::TableSetupColumn("sig.", kFixed | ImGuiTableColumnFlags_NoSort, 4 * ch);
  ImGui::TableSetupColumn("quadrant", kFixed | ImGuiTableColumnFlags_NoSort, 23 * ch);
  ImGui::TableHeadersRow();
  std::vector<size_t> order(view.rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (const ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs != nullptr && specs->SpecsCount > 0) {
    const ImGuiTableColumnSortSpecs& spec = specs->Specs[0];
    auto key = [&](size_t i) {
      const CompileCostRow& r = view.rows[i];
      const double k = spec.ColumnIndex == 1 ? r.pass_ms : spec.ColumnIndex == 3 ? r.compile_delta_ms : r.ratio;
      return std::isfinite(k) ? k : -1e300;  // unknown last when descending
    };
    const bool ascending = spec.SortDirection == ImGuiSortDirection_Ascending;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return ascending ? key(a) < key(b) : key(a) > key(b);
    });
  }
  for (size_t i : order) {
    const CompileCostRow& r = view.rows[i];
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::PushID(static_cast<int>(i));
    const bool selected = r.variant_index >= 0 && r.variant_index == state.ablation.selected_variant;
    if (ImGui::Selectable(r.label.c_str(), selected, ImGuiSelectableFlags_SpanAllColumns) && r.variant_index >= 0) {
      SelectAblationVariant(state, r.variant_index);
    }
    if (ImGui::IsItemHovered()) RowTooltip(r);
    ImGui::PopID();
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(Ms(r.pass_ms).c_str());
    ImGui::TableSetColumnIndex(2);
    if (std::isfinite(r.pass_runs)) ImGui::Text("%.0f", r.pass_runs);
    ImGui::TableSetColumnIndex(3);
    ImGui::TextUnformatted(SignedMs(r.compile_delta_ms).c_str());
    ImGui::TableSetColumnIndex(4);
    ImGui::TextUnformatted(Ms(r.autotune_ms).c_str());
    ImGui::TableSetColumnIndex(5);
    const ImVec4 colour = !r.clear_effect ? colors::kDim : r.ratio > 1 ? colors::kBad : colors::kGood;
    ImGui::TextColored(colour, "%s", Percent(r.ratio).c_str());
    ImGui::TableSetColumnIndex(6);
    ImGui::TextColored(colors::kDim, "%s", Ci(r.ci_low, r.ci_high).c_str());
    ImGui::TableSetColumnIndex(7);
    ImGui::TextUnformatted(r.significant ? "yes" : "no");
    ImGui::TableSetColumnIndex(8);
    ImGui::TextColored(r.quadrant == "expensive and essential" ? colors::kBad
                       : r.quadrant == "cheap and useless"     ? colors::kGood
                                                               : colors::kDim,
                       "%s", r.quadrant.empty() ? "–" : r.quadrant.c_str());
  }
  ImGui::EndTable();
}

}  // namespace

void DrawAblationCompileCost(AppState& state, const AblationReport& report) {
  const CompileCostView& view = report.compile_cost;
  if (!view.present) {
    ImGui::TextColored(colors::kDim, "This report has no compile cost per pass (a sweep from before passlab recorded "
                                     "it); rebuild it with passlab ablate --report-only --out DIR.");
    return;
  }
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(colors::kDim, "baseline compile %s: pipeline %s (autotuning %s), backend %s; kernel cache %.0f hits "
                                   "/ %.0f misses; cheap: below %s (dashed)",
                     Ms(view.baseline_compile_ms).c_str(), Ms(view.baseline_optimize_ms).c_str(),
                     Ms(view.baseline_autotune_ms).c_str(), Ms(view.baseline_backend_ms).c_str(),
                     std::isfinite(view.kernel_cache_hits) ? view.kernel_cache_hits : 0.0,
                     std::isfinite(view.kernel_cache_misses) ? view.kernel_cache_misses : 0.0,
                     Ms(view.cost_split_ms).c_str());
  ImGui::PopTextWrapPos();
  if (view.rows.empty()) {
    ImGui::TextColored(colors::kDim, "No disable-one or pair variants.");
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (view.plot.points.empty()) {
    ImGui::TextColored(colors::kDim, "No per-pass compile times in these records: no plot.");
  } else {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(colors::kDim, "y: run-time change without the pass; x: its own compile time in the baseline "
                                     "(log scale); filled: significant; shaded: within ±%.1f%%; click a point or a row",
                       report.threshold * 100);
    ImGui::PopTextWrapPos();
    DrawScatter(state, report, ImVec2(avail.x, std::max(200.0f, avail.y * 0.55f)));
  }
  DrawTable(state, view);
}

}  // namespace passlab::gui
