// The Ablation panel: open a `passlab ablate` report directory (and others
// beside it) or start a sweep (a child process, with progress and cancel).
// Four views of the report:
//  - Slowdowns: horizontal bars of the normalized slowdown (ratio - 1) per
//    disabled pass with the threshold lines, significant bars highlighted,
//    confidence intervals as whiskers; failures and required passes listed;
//    clicking a bar shows that variant's kernel diff and its IR diff;
//  - Passes x kernels: the heatmap (ablation_heatmap.cc); a cell shows both
//    kernels' HLO and the pass's IR diff;
//  - Compile cost: each pass's compile time against its run-time effect
//    (ablation_compile_cost.cc);
//  - Side by side: the reports opened beside it (ablation_compare.cc).
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>

#include "gui/ablation_compare.h"
#include "gui/ablation_compile_cost.h"
#include "gui/ablation_heatmap.h"
#include "gui/panels.h"

namespace passlab::gui {
namespace {

ImVec4 OutcomeColor(const std::string& outcome) {
  if (outcome == "slower") return colors::kBad;
  if (outcome == "faster") return colors::kGood;
  if (outcome == "no-change" || outcome == "identical") return colors::kDim;
  if (outcome == "undecided") return ImVec4(0.85f, 0.7f, 0.3f, 1.0f);
  if (outcome == "required") return colors::kAccent;
  return colors::kWarn;
}

std::string Label(const AblationVariant& v) {
  if (v.disabled.empty()) return v.name;
  std::string s;
  for (const std::string& d : v.disabled) s += (s.empty() ? "" : ", ") + d;
  return s;
}

void DrawSweepControls(AppState& state, UiState& ui) {
  AblationState& a = state.ablation;
  ImGui::SetNextItemWidth(320);
  ImGui::InputTextWithHint("##dir", "report directory", &ui.ablation_dir_input);
  ImGui::SameLine();
  if (ImGui::Button("Open report")) OpenAblationReport(state, ui.ablation_dir_input);
  ImGui::SameLine();
  ImGui::BeginDisabled(a.report == nullptr);
  if (ImGui::Button("Open another...")) ImGui::OpenPopup("##open_another");
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::SetTooltip("put another report directory beside this one (Side by side)");
  }
  if (ImGui::BeginPopup("##open_another")) {
    ImGui::TextColored(colors::kDim, "A report to read beside %s:", a.report_dir.c_str());
    ImGui::SetNextItemWidth(420);
    const bool enter = ImGui::InputTextWithHint("##another", "report directory", &ui.ablation_another_input,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::Button("Open beside") || enter) {
      OpenAnotherAblationReport(state, ui.ablation_another_input);
      ui.ablation_view = AblationView::kCompare;
      ui.ablation_view_requested = true;
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  const bool running = a.sweep != nullptr && a.sweep->running();
  ImGui::SetNextItemWidth(320);
  ImGui::BeginDisabled(running);
  ImGui::InputTextWithHint("##args", "passlab ablate arguments", &a.sweep_args);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(220);
  ImGui::InputTextWithHint("##out", "--out DIR", &a.sweep_out_dir);
  ImGui::SameLine();
  if (ImGui::Button("Start sweep")) StartAblationSweep(state, ui.passlab_binary);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("runs %s ablate <arguments> --out DIR in the background", ui.passlab_binary.c_str());
  if (a.sweep == nullptr) return;
  if (running) {
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) CancelAblationSweep(state);
  }
  const int64_t total = a.sweep->total(), done = a.sweep->done();
  char overlay[96];
  std::snprintf(overlay, sizeof(overlay), "%lld / %lld variants%s", static_cast<long long>(done),
                static_cast<long long>(total), running ? "" : (a.sweep->exit_code() == 0 ? " (done)" : " (stopped)"));
  ImGui::ProgressBar(total > 0 ? static_cast<float>(done) / static_cast<float>(total) : 0.0f, ImVec2(-FLT_MIN, 0), overlay);
}

// The bar chart; returns its height.
void DrawChart(AppState& state, const AblationReport& r, const std::vector<int64_t>& order) {
  std::vector<int64_t> measured;
  for (int64_t i : order) {
    if (r.variants[i].measured()) measured.push_back(i);
  }
  if (measured.empty()) {
    ImGui::TextColored(colors::kDim, "No measured variants.");
    return;
  }
  double extent = r.threshold * 2;
  std::vector<double> extents;
  for (int64_t i : measured) {
    const AblationVariant& v = r.variants[i];
    extents.push_back(std::max({std::abs(v.ratio - 1), std::abs(v.ci_high - 1), std::abs(v.ci_low - 1)}));
    extent = std::max(extent, extents.back());
  }
  // One huge effect (conv-rewriter's ×22 on a ResNet) would squeeze every
  // other bar into a pixel: above 3x the next largest, the axis stops a
  // little past the next one and that bar is drawn broken at the edge (as
  // the HTML report does).
  std::sort(extents.rbegin(), extents.rend());
  if (extents.size() >= 3 && extents[1] > 0 && extents[0] > 3 * extents[1]) {
    extent = std::max(r.threshold * 2, extents[1] * 1.15);
  }
  extent *= 1.1;
  const float row_h = ImGui::GetTextLineHeightWithSpacing() + 4;
  const float label_w = 280;
  const float value_w = 120;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  const float plot_w = std::max(100.0f, width - label_w - value_w);
  const float axis_h = 20;
  const float height = axis_h + row_h * static_cast<float>(measured.size());
  ImGui::InvisibleButton("##chart", ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float x0 = origin.x + label_w;
  auto x_of = [&](double slowdown) { return x0 + plot_w * static_cast<float>(0.5 + 0.5 * slowdown / extent); };
  const float zero_x = x_of(0);
  // Axis: ticks at round percentages, the threshold lines dashed.
  // A 1-2-5 step giving at most 5 ticks per side.
  double step = 0.001;
  for (double base = 0.001; base < 100; base *= 10) {
    step = base;
    if (extent / step <= 5) break;
    step = base * 2;
    if (extent / step <= 5) break;
    step = base * 5;
    if (extent / step <= 5) break;
  }
  for (double t = -std::floor(extent / step) * step; t <= extent; t += step) {
    const float x = x_of(t);
    dl->AddLine(ImVec2(x, origin.y + axis_h - 4), ImVec2(x, origin.y + height), IM_COL32(55, 58, 66, 255));
    char label[16];
    std::snprintf(label, sizeof(label), "%+.0f%%", t * 100);
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(label).x / 2, origin.y), IM_COL32(140, 142, 150, 255), label);
  }
  for (double th : {r.threshold, -r.threshold}) {
    const float x = x_of(th);
    for (float y = origin.y + axis_h; y < origin.y + height; y += 8) {
      dl->AddLine(ImVec2(x, y), ImVec2(x, std::min(y + 4, origin.y + height)), IM_COL32(240, 200, 80, 220), 1.5f);
    }
  }
  dl->AddLine(ImVec2(zero_x, origin.y + axis_h - 4), ImVec2(zero_x, origin.y + height), IM_COL32(200, 200, 210, 255));
  for (size_t k = 0; k < measured.size(); ++k) {
    const int64_t i = measured[k];
    const AblationVariant& v = r.variants[i];
    const float y = origin.y + axis_h + row_h * static_cast<float>(k);
    const bool selected = state.ablation.selected_variant == i;
    const bool row_hovered = hovered && mouse.y >= y && mouse.y < y + row_h;
    if (selected || row_hovered) {
      dl->AddRectFilled(ImVec2(origin.x, y), ImVec2(origin.x + width, y + row_h),
                        selected ? IM_COL32(60, 80, 120, 120) : IM_COL32(60, 62, 70, 90));
    }
    const std::string label = Label(v);
    dl->AddText(ImVec2(origin.x + 4, y + 2), IM_COL32(220, 222, 228, 255), label.c_str());
    const double slowdown = v.ratio - 1;
    ImU32 color = IM_COL32(110, 120, 140, 255);
    if (v.significant) color = slowdown > 0 ? IM_COL32(235, 95, 80, 255) : IM_COL32(90, 200, 110, 255);
    const bool clipped = std::abs(slowdown) > extent;
    const double shown = std::clamp(slowdown, -extent, extent);
    const float xa = std::min(zero_x, x_of(shown)), xb = std::max(zero_x, x_of(shown));
    dl->AddRectFilled(ImVec2(xa, y + 3), ImVec2(std::max(xb, xa + 1), y + row_h - 3), color, 2.0f);
    if (clipped) {
      // Break mark: two slashes near the clipped end.
      const float e = slowdown > 0 ? xb - 12 : xa + 18;
      for (float dx : {0.0f, 6.0f}) {
        dl->AddLine(ImVec2(e + dx, y + 2), ImVec2(e + dx - 5, y + row_h - 2), IM_COL32(30, 32, 38, 255), 2.5f);
      }
    } else {
      // Confidence interval whisker.
      const float cl = x_of(std::clamp(v.ci_low - 1, -extent, extent));
      const float ch = x_of(std::clamp(v.ci_high - 1, -extent, extent)), cy = y + row_h / 2;
      dl->AddLine(ImVec2(cl, cy), ImVec2(ch, cy), IM_COL32(235, 235, 240, 200), 1.5f);
      dl->AddLine(ImVec2(cl, cy - 4), ImVec2(cl, cy + 4), IM_COL32(235, 235, 240, 200), 1.5f);
      dl->AddLine(ImVec2(ch, cy - 4), ImVec2(ch, cy + 4), IM_COL32(235, 235, 240, 200), 1.5f);
    }
    char value[48];
    std::snprintf(value, sizeof(value), "%+.1f%%%s", slowdown * 100, v.significant ? " *" : "");
    dl->AddText(ImVec2(x0 + plot_w + 8, y + 2), ImGui::GetColorU32(OutcomeColor(v.outcome)), value);
    if (row_hovered) {
      // The time beside the ratio is the variant's at the baseline's speed
      // (ratio x baseline), so the two never disagree; its own process's
      // median (which carries that process's speed) comes after.
      ImGui::SetTooltip(
          "%s\n%s: ratio %.4f [%.4f, %.4f], p(adj) %.3g%s\n%.3f ms at the baseline's speed (baseline %.3f ms)\n"
          "%.3f ms median in its own process\nclick for the kernel and IR diff",
          v.name.c_str(), v.label.c_str(), v.ratio, v.ci_low, v.ci_high, v.p_adjusted,
          v.significant ? ", significant" : "", v.estimate_ns / 1e6, r.baseline_median_ns / 1e6, v.median_ns / 1e6);
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) SelectAblationVariant(state, i);
    }
  }
}

void DrawVariantDetails(AppState& state, const AblationReport& r) {
  const int64_t i = state.ablation.selected_variant;
  if (i < 0) {
    ImGui::TextColored(colors::kDim, "Click a bar for the variant's kernel diff and IR diff.");
    return;
  }
  const AblationVariant& v = r.variants[i];
  ImGui::TextColored(colors::kAccent, "%s", v.name.c_str());
  Badge(v.label.c_str(), OutcomeColor(v.outcome));
  if (!v.error.empty()) ImGui::TextColored(colors::kBad, "%s", v.error.c_str());
  const float half = ImGui::GetContentRegionAvail().x * 0.42f;
  ImGui::BeginChild("##kdiff", ImVec2(half, 0), false);
  if (v.kernel_diff.empty()) {
    ImGui::TextColored(colors::kDim, "no kernel diff in the report");
  } else if (ImGui::BeginTable("##kernel_diff", 4,
                               ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                   ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("kernel", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("baseline us");
    ImGui::TableSetupColumn("variant us");
    ImGui::TableSetupColumn("change");
    ImGui::TableHeadersRow();
    for (const AblationKernelDiff& k : v.kernel_diff) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(k.name.c_str());
      ImGui::TableSetColumnIndex(1);
      if (k.change != "added") ImGui::Text("%.1f", k.baseline_ns / 1e3);
      ImGui::TableSetColumnIndex(2);
      if (k.change != "removed") ImGui::Text("%.1f", k.variant_ns / 1e3);
      ImGui::TableSetColumnIndex(3);
      const ImVec4 c = k.change == "added" ? colors::kWarn : k.change == "removed" ? colors::kGood
                       : k.change == "changed" ? colors::kAccent : colors::kDim;
      ImGui::TextColored(c, "%s", k.change.c_str());
      if (k.host) {
        ImGui::SameLine();
        ImGui::TextColored(colors::kBad, "host");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("the variant runs this on the host; the baseline on the device");
      }
    }
    ImGui::EndTable();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##irdiff", ImVec2(0, 0), false);
  if (state.ablation.selected_ir_diff.empty()) {
    ImGui::TextColored(colors::kDim, "no IR diff for this variant");
  } else {
    DrawUnifiedDiffText("##variant_ir", state.ablation.selected_ir_diff);
  }
  ImGui::EndChild();
}

void DrawSlowdowns(AppState& state, const AblationReport* r) {
  const std::vector<int64_t> order = VariantsBySlowdown(*r);
  const float avail = ImGui::GetContentRegionAvail().y;
  ImGui::BeginChild("##chart_area", ImVec2(0, avail * 0.55f), false);
  ImGui::TextColored(colors::kDim, "slowdown when the pass is disabled (ratio - 1); dashed: ±threshold; * significant");
  DrawChart(state, *r, order);
  bool header = false;
  for (int64_t i : order) {
    const AblationVariant& v = r->variants[i];
    if (v.measured()) continue;
    if (!header) {
      ImGui::Spacing();
      ImGui::TextColored(colors::kDim, "not measured:");
      header = true;
    }
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::Selectable(Label(v).c_str(), state.ablation.selected_variant == i, 0, ImVec2(270, 0))) {
      SelectAblationVariant(state, i);
    }
    ImGui::PopID();
    Badge(v.label.c_str(), OutcomeColor(v.outcome));
    if (!v.error.empty()) {
      ImGui::SameLine();
      ImGui::TextColored(colors::kDim, "%s", v.error.c_str());
    }
  }
  ImGui::EndChild();
  ImGui::Separator();
  DrawVariantDetails(state, *r);
}

// A view's tab; `requested` selects it on this frame.
bool ViewTab(UiState& ui, const char* label, AblationView view) {
  const ImGuiTabItemFlags flags =
      ui.ablation_view_requested && ui.ablation_view == view ? ImGuiTabItemFlags_SetSelected : 0;
  if (!ImGui::BeginTabItem(label, nullptr, flags)) return false;
  if (!ui.ablation_view_requested) ui.ablation_view = view;
  return true;
}

}  // namespace

void DrawUnifiedDiffText(const char* id, const std::string& text) {
  ImGui::BeginChild(id, ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(std::string_view(text).substr(start, nl - start));
    start = nl + 1;
  }
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(lines.size()), ImGui::GetTextLineHeightWithSpacing());
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      std::string_view l = lines[i];
      ImU32 bg = 0;
      if (l.starts_with("@@") || l.starts_with("---") || l.starts_with("+++")) {
        ImGui::TextColored(colors::kAccent, "%.*s", static_cast<int>(l.size()), l.data());
        continue;
      }
      if (!l.empty() && l[0] == '+') bg = colors::kAdded;
      if (!l.empty() && l[0] == '-') bg = colors::kRemoved;
      if (bg != 0) {
        ImVec2 p = ImGui::GetCursorScreenPos();
        ImGui::GetWindowDrawList()->AddRectFilled(
            p, ImVec2(p.x + ImGui::GetWindowWidth() + ImGui::GetScrollX(), p.y + ImGui::GetTextLineHeightWithSpacing()), bg);
      }
      DrawCodeLine(l, nullptr, nullptr);
    }
  }
  ImGui::EndChild();
}

bool ParseAblationView(std::string_view name, AblationView& view) {
  if (name == "slowdowns") view = AblationView::kSlowdowns;
  else if (name == "heatmap") view = AblationView::kHeatmap;
  else if (name == "compile-cost") view = AblationView::kCompileCost;
  else if (name == "compare") view = AblationView::kCompare;
  else return false;
  return true;
}

void DrawAblationPanel(AppState& state, UiState& ui) {
  DrawSweepControls(state, ui);
  const AblationReport* r = state.ablation.report.get();
  if (r == nullptr) {
    ImGui::TextColored(colors::kDim, "Open a report directory (report.json from passlab ablate) or start a sweep.");
    return;
  }
  ImGui::Separator();
  ImGui::TextColored(colors::kAccent, "%s", r->directory.c_str());
  ImGui::SameLine();
  ImGui::TextColored(colors::kDim, "metric %s, baseline %.3f ms, threshold %.1f%%, %zu variants", r->metric.c_str(),
                     r->baseline_median_ns / 1e6, r->threshold * 100, r->variants.size());
  if (!r->manifest.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r->manifest.c_str());
  if (ImGui::BeginTabBar("##ablation_views")) {
    if (ViewTab(ui, "Slowdowns", AblationView::kSlowdowns)) {
      DrawSlowdowns(state, r);
      ImGui::EndTabItem();
    }
    if (ViewTab(ui, "Passes x kernels", AblationView::kHeatmap)) {
      DrawAblationHeatmap(state, *r);
      ImGui::EndTabItem();
    }
    if (ViewTab(ui, "Compile cost", AblationView::kCompileCost)) {
      DrawAblationCompileCost(state, *r);
      ImGui::EndTabItem();
    }
    const std::string compare_label =
        state.ablation.compared_dirs.empty()
            ? std::string("Side by side###compare")
            : "Side by side (" + std::to_string(state.ablation.compared_dirs.size() + 1) + ")###compare";
    if (ViewTab(ui, compare_label.c_str(), AblationView::kCompare)) {
      DrawAblationComparison(state, ui);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ui.ablation_view_requested = false;
}

}  // namespace passlab::gui
