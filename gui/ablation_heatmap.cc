#include "gui/ablation_heatmap.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "gui/panels.h"

namespace passlab::gui {
namespace {

constexpr float kLabelWidth = 230;
constexpr float kEffectWidth = 60;
constexpr float kGroupBand = 18;
constexpr float kGroupGap = 4;
constexpr int kAddedShown = 5;
constexpr ImU32 kAddedColour = IM_COL32(150, 60, 190, 255);
constexpr ImU32 kRemovedFill = IM_COL32(70, 72, 80, 255);
constexpr ImU32 kCross = IM_COL32(220, 222, 228, 255);

// "#rrggbb" (HeatmapColour) as an ImGui colour.
ImU32 Colour(const std::string& hex) {
  unsigned long v = std::strtoul(hex.c_str() + 1, nullptr, 16);
  return IM_COL32((v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff, 255);
}

std::string Ms(double ns) {
  if (std::isnan(ns)) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f ms", ns / 1e6);
  return buf;
}

std::string Percent(double change) {
  if (std::isnan(change)) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", change * 100);
  return buf;
}

void CellTooltip(const KernelHeatmap& map, int64_t row, int64_t column) {
  const HeatmapRow& r = map.rows[row];
  const HeatmapColumn& c = map.columns[column];
  const HeatmapCell& cell = r.cells[column];
  if (cell.state == HeatmapCellState::kRemoved) {
    ImGui::SetTooltip("%s\n%s (%s)\nbaseline %s\nremoved: only the baseline has it\nclick to select", r.label.c_str(),
                      c.kernel.c_str(), c.group.c_str(), Ms(c.baseline_ns).c_str());
    return;
  }
  ImGui::SetTooltip("%s\n%s (%s)\nbaseline %s, variant %s\nchange %s\nclick to select", r.label.c_str(),
                    c.kernel.c_str(), c.group.c_str(), Ms(c.baseline_ns).c_str(), Ms(cell.variant_ns).c_str(),
                    Percent(cell.change).c_str());
}

// The selected kernel in the selected variant, in one line.
void DrawSelection(const AppState& state, const AblationReport& report) {
  const std::string& kernel = state.ablation.selected_kernel;
  if (kernel.empty() || state.ablation.selected_variant < 0) {
    ImGui::TextColored(colors::kDim, "Click a cell to select its variant and kernel; the wheel zooms.");
    return;
  }
  const std::string& variant = report.variants[state.ablation.selected_variant].name;
  const KernelHeatmap& map = report.heatmap;
  for (size_t c = 0; c < map.columns.size(); ++c) {
    if (map.columns[c].kernel != kernel) continue;
    for (const HeatmapRow& row : map.rows) {
      if (row.variant != variant) continue;
      const HeatmapCell& cell = row.cells[c];
      ImGui::TextColored(colors::kAccent, "%s", kernel.c_str());
      ImGui::SameLine();
      if (cell.state == HeatmapCellState::kRemoved) {
        ImGui::Text("(%s) in %s: baseline %s, removed", map.columns[c].group.c_str(), row.label.c_str(),
                    Ms(map.columns[c].baseline_ns).c_str());
      } else {
        ImGui::Text("(%s) in %s: baseline %s, variant %s, change %s", map.columns[c].group.c_str(), row.label.c_str(),
                    Ms(map.columns[c].baseline_ns).c_str(), Ms(cell.variant_ns).c_str(), Percent(cell.change).c_str());
      }
      return;
    }
  }
  ImGui::TextColored(colors::kDim, "%s: not in the heatmap", kernel.c_str());
}

// HLO text, coloured, in a scrolling child.
void DrawCode(const char* id, const std::string& text) {
  ImGui::BeginChild(id, ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(std::string_view(text).substr(start, nl - start));
    start = nl + 1;
  }
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(lines.size()), ImGui::GetTextLineHeightWithSpacing());
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) DrawCodeLine(lines[i], nullptr, nullptr);
  }
  ImGui::EndChild();
}

// One side of the kernel comparison: a title, then the HLO or why there is none.
void DrawKernelSide(const char* id, const std::string& title, const std::string& hlo, const std::string& note) {
  ImGui::TextColored(colors::kAccent, "%s", title.c_str());
  if (hlo.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(note.find("no kernel") == 0 ? colors::kDim : colors::kBad, "%s", note.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  DrawCode(id, hlo);
}

// Below the heatmap: the selected cell's kernel in the baseline and in the
// variant (their modules compiled again from the sweep's manifest), and the
// disabled pass's IR diff from the report.
void DrawKernelDetails(const AppState& state, const AblationReport& report) {
  const AblationState& a = state.ablation;
  if (a.selected_kernel.empty() || a.selected_variant < 0) {
    ImGui::TextColored(colors::kDim, "Click a cell for the kernel's HLO in the baseline and in the variant, and the "
                                     "disabled pass's IR diff.");
    return;
  }
  const AblationVariant& v = report.variants[a.selected_variant];
  const AblationKernelHlo* k = a.kernel_hlo.get();
  const float w = ImGui::GetContentRegionAvail().x;
  const float h = ImGui::GetContentRegionAvail().y;
  const float column = (w - 2 * ImGui::GetStyle().ItemSpacing.x) / 3;
  if (k == nullptr || k->variant != v.name || k->kernel != a.selected_kernel) {
    DrawComputing("both modules again from the sweep's manifest (its input, pipeline and the variant's --disable)");
  } else {
    ImGui::BeginChild("##kernel_baseline", ImVec2(column, h), false);
    DrawKernelSide("##baseline_hlo", "baseline: " + k->kernel, k->baseline_hlo, k->baseline_note);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("##kernel_variant", ImVec2(column, h), false);
    DrawKernelSide("##variant_hlo", v.name + ": " + k->kernel, k->variant_hlo,
                   k->variant_note.find("no kernel") == 0 ? "not in the variant's module: removed (or renamed)"
                                                          : k->variant_note);
    ImGui::EndChild();
    ImGui::SameLine();
  }
  ImGui::BeginChild("##kernel_pass_diff", ImVec2(0, h), false);
  ImGui::TextColored(colors::kAccent, "IR diff of %s in the baseline", v.disabled.empty() ? v.name.c_str()
                                                                                        : v.disabled.front().c_str());
  if (a.selected_ir_diff.empty()) {
    ImGui::TextColored(colors::kDim, "no IR diff in the report (the pass did not change the module, or the sweep "
                                     "wrote none)");
  } else {
    DrawUnifiedDiffText("##kernel_ir_diff", a.selected_ir_diff);
  }
  ImGui::EndChild();
}

}  // namespace

void DrawAblationHeatmap(AppState& state, const AblationReport& report) {
  const KernelHeatmap& map = report.heatmap;
  if (map.rows.empty() || map.columns.empty()) {
    ImGui::TextColored(colors::kDim, map.variants_without_times > 0
                                         ? "This report has no per-kernel times per variant; rebuild it with "
                                           "passlab ablate --report-only --out DIR."
                                         : "No variant has kernel times.");
    return;
  }
  DrawSelection(state, report);
  if (map.rows_left_out > 0 || map.columns_left_out > 0) {
    ImGui::TextColored(colors::kDim, "not shown: %zu more variants, %zu more of the baseline's kernels",
                       map.rows_left_out, map.columns_left_out);
  }
  const float cell = state.ablation.heatmap_cell;
  const HeatmapGeometry geometry = LayOutHeatmap(map, cell, kGroupGap);
  const float line = ImGui::GetTextLineHeight();
  const float added_x = kLabelWidth + kEffectWidth + geometry.width + 12;
  const float width = added_x + kAddedShown * cell + 120;
  const float height = kGroupBand + geometry.height + 4;

  // Half the view at most: the selected cell's kernels go below.
  const float shown = std::min(height + 20, std::max(120.0f, ImGui::GetContentRegionAvail().y * 0.5f));
  ImGui::BeginChild("##heatmap", ImVec2(0, shown), false,
                    ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##heatmap_canvas", ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();
  if (hovered && io.MouseWheel != 0) {
    state.ablation.heatmap_cell = std::clamp(cell * (1 + 0.12f * io.MouseWheel), 3.0f, 40.0f);
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 grid(origin.x + kLabelWidth + kEffectWidth, origin.y + kGroupBand);

  // Hero kinds: a band over each group, its name clipped to the band.
  for (size_t g = 0; g < map.groups.size(); ++g) {
    const HeatmapGroup& group = map.groups[g];
    const float gx = grid.x + geometry.column_x[group.first];
    const float gw = cell * static_cast<float>(group.count);
    dl->AddRectFilled(ImVec2(gx, origin.y), ImVec2(gx + gw, origin.y + kGroupBand - 2),
                      g % 2 == 0 ? IM_COL32(60, 66, 80, 255) : IM_COL32(45, 50, 60, 255));
    dl->PushClipRect(ImVec2(gx, origin.y), ImVec2(gx + gw, origin.y + kGroupBand), true);
    dl->AddText(ImVec2(gx + 2, origin.y + 1), IM_COL32(210, 212, 220, 255), group.name.c_str());
    dl->PopClipRect();
  }
  dl->AddText(ImVec2(origin.x + added_x, origin.y + 1), IM_COL32(160, 162, 170, 255), "added");

  // Labels every few rows when the cells are smaller than a line of text.
  const int label_every = std::max(1, static_cast<int>(std::ceil(0.9f * line / cell)));
  const int64_t selected_variant = state.ablation.selected_variant;
  const std::string selected_name = selected_variant >= 0 ? report.variants[selected_variant].name : "";
  for (size_t r = 0; r < map.rows.size(); ++r) {
    const HeatmapRow& row = map.rows[r];
    const float y = grid.y + cell * static_cast<float>(r);
    if (!selected_name.empty() && row.variant == selected_name) {
      dl->AddRectFilled(ImVec2(origin.x, y), ImVec2(origin.x + width, y + cell), IM_COL32(60, 80, 120, 120));
    }
    if (r % label_every == 0) {
      const ImVec2 size = ImGui::CalcTextSize(row.label.c_str());
      dl->PushClipRect(ImVec2(origin.x, y - line), ImVec2(origin.x + kLabelWidth - 4, y + cell + line), true);
      dl->AddText(ImVec2(origin.x + kLabelWidth - 6 - size.x, y + (cell - line) / 2), IM_COL32(220, 222, 228, 255),
                  row.label.c_str());
      dl->PopClipRect();
      const std::string effect = Percent(row.ratio - 1);
      const ImU32 effect_colour = row.outcome == "slower"   ? IM_COL32(235, 95, 80, 255)
                                  : row.outcome == "faster" ? IM_COL32(90, 200, 110, 255)
                                                            : IM_COL32(150, 152, 160, 255);
      dl->AddText(ImVec2(grid.x - 6 - ImGui::CalcTextSize(effect.c_str()).x, y + (cell - line) / 2), effect_colour,
                  effect.c_str());
    }
    for (size_t c = 0; c < map.columns.size(); ++c) {
      const HeatmapCell& hc = row.cells[c];
      const ImVec2 a(grid.x + geometry.column_x[c], y);
      const ImVec2 b(a.x + cell - 1, a.y + cell - 1);
      if (hc.state == HeatmapCellState::kRemoved) {
        dl->AddRectFilled(a, b, kRemovedFill);
        if (cell >= 6) {
          dl->AddLine(ImVec2(a.x + 2, a.y + 2), ImVec2(b.x - 2, b.y - 2), kCross);
          dl->AddLine(ImVec2(b.x - 2, a.y + 2), ImVec2(a.x + 2, b.y - 2), kCross);
        }
        continue;
      }
      dl->AddRectFilled(a, b, Colour(HeatmapColour(hc.change)));
    }
    for (size_t i = 0; i < row.added.size() && i < static_cast<size_t>(kAddedShown); ++i) {
      const ImVec2 a(origin.x + added_x + cell * static_cast<float>(i), y);
      dl->AddRectFilled(a, ImVec2(a.x + cell - 1, a.y + cell - 1), kAddedColour);
    }
    if (!row.added.empty() && r % label_every == 0) {
      char text[32];
      std::snprintf(text, sizeof text, "%zu", row.added.size());
      dl->AddText(ImVec2(origin.x + added_x + cell * kAddedShown + 4, y + (cell - line) / 2),
                  IM_COL32(160, 162, 170, 255), text);
    }
  }
  // The selected kernel's column, outlined.
  for (size_t c = 0; c < map.columns.size(); ++c) {
    if (map.columns[c].kernel != state.ablation.selected_kernel) continue;
    const float x = grid.x + geometry.column_x[c];
    dl->AddRect(ImVec2(x - 1, grid.y - 1), ImVec2(x + cell, grid.y + geometry.height), IM_COL32(255, 220, 90, 255));
  }

  if (hovered) {
    const ImVec2 mouse = io.MousePos;
    auto [row, column] = HeatmapCellAt(geometry, map, mouse.x - grid.x, mouse.y - grid.y);
    if (row >= 0) {
      CellTooltip(map, row, column);
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) SelectAblationHeatmapCell(state, row, column);
    } else if (mouse.x - origin.x >= added_x && mouse.y >= grid.y) {
      const int64_t r = static_cast<int64_t>((mouse.y - grid.y) / cell);
      if (r < static_cast<int64_t>(map.rows.size()) && !map.rows[r].added.empty()) {
        std::string text = map.rows[r].label + ": kernels only the variant has\n";
        for (size_t i = 0; i < map.rows[r].added.size() && i < 12; ++i) {
          text += map.rows[r].added[i].kernel + "  " + Ms(map.rows[r].added[i].ns) + "\n";
        }
        if (map.rows[r].added.size() > 12) text += "…";
        ImGui::SetTooltip("%s", text.c_str());
      }
    }
  }
  ImGui::EndChild();
  ImGui::Separator();
  DrawKernelDetails(state, report);
}

}  // namespace passlab::gui
