// The Kernels panel: run the optimized module on the CPU backend or the CUDA
// runtime (device combo), then a header naming the device the shown run came
// from, a sortable per-kernel table (name, kind, calls, total, median, share, bytes),
// a zoomable timeline of the last step (wheel zooms at the mouse, drag pans),
// and the HLO of the kernel clicked in either.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>

#include "core/ir/str_util.h"
#include "gui/panels.h"

namespace passlab::gui {
namespace {

ImU32 KindColor(KernelKind kind) {
  switch (kind) {
    case KernelKind::kEmitted: return IM_COL32(80, 150, 230, 255);
    case KernelKind::kLibraryCall: return IM_COL32(230, 160, 60, 255);
    case KernelKind::kCopy: return IM_COL32(150, 150, 160, 255);
    case KernelKind::kMemset: return IM_COL32(120, 120, 130, 255);
    case KernelKind::kControlFlow: return IM_COL32(90, 90, 100, 120);
    case KernelKind::kRuntimeRoutine: return IM_COL32(200, 90, 160, 255);
  }
  return IM_COL32(200, 200, 200, 255);
}

std::string FormatBytes(int64_t b) {
  char buf[32];
  if (b >= (int64_t{1} << 30)) std::snprintf(buf, sizeof(buf), "%.1f GiB", b / 1073741824.0);
  else if (b >= (int64_t{1} << 20)) std::snprintf(buf, sizeof(buf), "%.1f MiB", b / 1048576.0);
  else if (b >= 1024) std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(b));
  return buf;
}

void SortRows(const KernelSummary& s, ImGuiTableSortSpecs* specs, std::vector<int64_t>& order) {
  order.resize(s.rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  if (specs == nullptr || specs->SpecsCount == 0) return;
  const ImGuiTableColumnSortSpecs& spec = specs->Specs[0];
  auto key = [&](const KernelSummaryRow& r, const KernelSummaryRow& q) -> int {
    auto cmp = [](auto a, auto b) { return a < b ? -1 : a > b ? 1 : 0; };
    switch (spec.ColumnIndex) {
      case 0: return cmp(r.name, q.name);
      case 1: return cmp(std::string(KernelKindName(r.kind)), std::string(KernelKindName(q.kind)));
      case 2: return cmp(r.calls, q.calls);
      case 3: return cmp(r.total_ns, q.total_ns);
      case 4: return cmp(r.median_ns, q.median_ns);
      case 5: return cmp(r.share, q.share);
      case 6: return cmp(r.bytes, q.bytes);
      case 7: return cmp(r.estimate_ns, q.estimate_ns);
    }
    return 0;
  };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    int c = key(s.rows[a], s.rows[b]);
    return spec.SortDirection == ImGuiSortDirection_Ascending ? c < 0 : c > 0;
  });
}

void DrawTimeline(AppState& state, UiState& ui, const RunResult& run) {
  const std::vector<KernelRecord>& recs = run.profile.last_step;
  if (recs.empty()) return;
  // One lane per CPU thread or CUDA stream, in id order (stream ids are
  // sparse: CUPTI's, not 0..n).
  int64_t t_end = 0;
  std::map<int64_t, int> lanes;
  for (const KernelRecord& r : recs) {
    t_end = std::max(t_end, r.end_ns);
    lanes.emplace(r.thread, 0);
  }
  if (t_end <= 0) return;
  int lane_count = 0;
  for (auto& [thread, lane] : lanes) lane = lane_count++;
  const float lane_h = 22.0f;
  const float ruler_h = 18.0f;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  const float height = ruler_h + lane_h * static_cast<float>(lane_count) + 4;
  ImGui::InvisibleButton("##timeline", ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();
  // Visible window of the step: [offset, offset + 1/zoom) as fractions.
  float& zoom = ui.timeline_zoom;
  float& offset = ui.timeline_offset;
  if (hovered && io.MouseWheel != 0) {
    const float at = offset + (io.MousePos.x - origin.x) / width / zoom;
    zoom = std::clamp(zoom * (io.MouseWheel > 0 ? 1.25f : 0.8f), 1.0f, 20000.0f);
    offset = at - (io.MousePos.x - origin.x) / width / zoom;
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    offset -= io.MouseDelta.x / width / zoom;
  }
  offset = std::clamp(offset, 0.0f, 1.0f - 1.0f / zoom);
  const double ns_per_px = static_cast<double>(t_end) / zoom / width;
  const double t0 = offset * static_cast<double>(t_end);
  auto x_of = [&](int64_t ns) { return origin.x + static_cast<float>((ns - t0) / ns_per_px); };

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + width, origin.y + height), true);
  dl->AddRectFilled(origin, ImVec2(origin.x + width, origin.y + height), IM_COL32(24, 26, 30, 255));
  // Ruler: about 8 ticks at a round step.
  const double span = static_cast<double>(t_end) / zoom;
  double step = 1;
  while (step * 8 < span) step *= 10;
  if (step / 2 * 8 >= span) step /= 2;
  for (double t = std::floor(t0 / step) * step; t < t0 + span; t += step) {
    const float x = x_of(static_cast<int64_t>(t));
    dl->AddLine(ImVec2(x, origin.y), ImVec2(x, origin.y + height), IM_COL32(60, 62, 70, 255));
    char label[32];
    if (step >= 1e6) std::snprintf(label, sizeof(label), "%.1f ms", t / 1e6);
    else if (step >= 1e3) std::snprintf(label, sizeof(label), "%.0f us", t / 1e3);
    else std::snprintf(label, sizeof(label), "%.0f ns", t);
    dl->AddText(ImVec2(x + 3, origin.y + 1), IM_COL32(150, 152, 160, 255), label);
  }
  const KernelRecord* hover = nullptr;
  for (const KernelRecord& r : recs) {
    float x0 = x_of(r.start_ns), x1 = std::max(x_of(r.end_ns), x0 + 1.0f);
    if (x1 < origin.x || x0 > origin.x + width) continue;
    const float y0 = origin.y + ruler_h + lane_h * static_cast<float>(lanes[r.thread]) + 2;
    const ImVec2 a(x0, y0), b(x1, y0 + lane_h - 4);
    const bool selected = r.hlo_instruction == state.selected_kernel || r.name == state.selected_kernel;
    dl->AddRectFilled(a, b, KindColor(r.kind), 2.0f);
    if (selected) dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 2.0f, 0, 2.0f);
    if (x1 - x0 > 40) {
      dl->PushClipRect(a, b, true);
      dl->AddText(ImVec2(x0 + 3, y0 + 3), IM_COL32(10, 10, 15, 255), r.name.c_str());
      dl->PopClipRect();
    }
    if (hovered && io.MousePos.x >= a.x && io.MousePos.x <= b.x && io.MousePos.y >= a.y && io.MousePos.y <= b.y) {
      hover = &r;
    }
  }
  dl->PopClipRect();
  if (hover != nullptr) {
    ImGui::SetTooltip("%s (%s%s%s)\n%.3f us, start %.3f us\n%s %lld", hover->name.c_str(), KernelKindName(hover->kind),
                      hover->detail.empty() ? "" : ", ", hover->detail.c_str(), hover->duration_ns() / 1e3,
                      hover->start_ns / 1e3, run.device == "cuda" ? "stream" : "thread",
                      static_cast<long long>(hover->thread));
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 0).x == 0) {
      state.selected_kernel = hover->name;
    }
  }
  ImGui::TextColored(colors::kDim, "last step, %.3f ms; wheel zooms (x%.1f), drag pans", t_end / 1e6, zoom);
}

}  // namespace

void DrawKernelsPanel(AppState& state, UiState& ui) {
  const bool can_run = state.pipeline_result != nullptr && state.pipeline_result->optimized != nullptr;
  ImGui::BeginDisabled(!can_run || state.run_job != nullptr);
  const std::string run_label = "Run on " + state.run_settings.device;
  if (ImGui::Button(run_label.c_str())) StartRun(state);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(state.run_job != nullptr);
  ImGui::SetNextItemWidth(70);
  if (ImGui::BeginCombo("device", state.run_settings.device.c_str())) {
    for (std::string_view device : kRunDevices) {
      const bool selected = state.run_settings.device == device;
      if (ImGui::Selectable(std::string(device).c_str(), selected) && !selected) SetRunDevice(state, std::string(device));
      if (selected) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::InputInt("repeats", &state.run_settings.repeats);
  state.run_settings.repeats = std::clamp(state.run_settings.repeats, 1, 1000);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::InputInt("warm-up", &state.run_settings.warmup);
  state.run_settings.warmup = std::clamp(state.run_settings.warmup, 0, 100);
  if (state.run_job != nullptr) {
    ImGui::SameLine();
    ImGui::TextColored(colors::kWarn, "%s (%.1f s)", state.run_job->progress().stage().c_str(), state.run_job->seconds());
  }
  const bool show_error = !state.run_status.ok() && state.run_job == nullptr;
  if (show_error) {
    ImGui::TextColored(colors::kBad, "last run failed: %s", std::string(state.run_status.message()).c_str());
  }
  const RunResult* run = state.run_result.get();
  if (run == nullptr) {
    ImGui::TextColored(colors::kDim, can_run ? "Run the optimized module to time its kernels."
                                             : "Compile a module first (the last compile must succeed).");
    return;
  }
  const KernelSummary& s = run->profile.summary;
  // Its own line: a CUDA device description is long.
  ImGui::TextColored(colors::kAccent, "ran on %s", run->device_description.c_str());
  ImGui::SameLine();
  if (run->device == "cuda") {
    ImGui::Text("kernel %.3f ms/step (CUPTI)   wall %.3f ms/step (traced %.3f)   compile %.0f ms   device arena %.1f MiB",
                run->kernel_ms_median, run->wall_ms_median, run->traced_wall_ms_median, run->profile.compile_ms,
                run->profile.memory.arena_bytes / 1048576.0);
  } else {
    ImGui::Text("kernel %.3f ms/step   wall %.3f ms/step   compile %.0f ms   peak %.1f MiB", run->kernel_ms_median,
                run->wall_ms_median, run->profile.compile_ms, run->profile.memory.peak_bytes() / 1048576.0);
  }

  const float avail = ImGui::GetContentRegionAvail().y;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("##kernels", 8, flags, ImVec2(0, avail * 0.5f))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("kind");
    ImGui::TableSetupColumn("calls", ImGuiTableColumnFlags_PreferSortDescending);
    ImGui::TableSetupColumn("total ms", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
    ImGui::TableSetupColumn("median us", ImGuiTableColumnFlags_PreferSortDescending);
    ImGui::TableSetupColumn("share", ImGuiTableColumnFlags_PreferSortDescending | ImGuiTableColumnFlags_WidthFixed, 110);
    ImGui::TableSetupColumn("bytes", ImGuiTableColumnFlags_PreferSortDescending);
    // Priority fusion's cost model for the device that ran (per call).
    ImGui::TableSetupColumn(run->cost_model.empty() ? "estimate us" : StrCat("est. us (", run->cost_model, ")").c_str(),
                            ImGuiTableColumnFlags_PreferSortDescending);
    ImGui::TableHeadersRow();
    ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
    if ((specs != nullptr && specs->SpecsDirty) || ui.kernel_order_for != &s || ui.kernel_order.size() != s.rows.size()) {
      SortRows(s, specs, ui.kernel_order);
      if (specs != nullptr) specs->SpecsDirty = false;
      ui.kernel_order_for = &s;
    }
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(ui.kernel_order.size()));
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const KernelSummaryRow& row = s.rows[ui.kernel_order[i]];
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::PushID(i);
        if (ImGui::Selectable(row.name.c_str(), state.selected_kernel == row.name, ImGuiSelectableFlags_SpanAllColumns)) {
          state.selected_kernel = row.name;
        }
        if (ImGui::IsItemHovered() && !row.detail.empty()) ImGui::SetTooltip("%s\nin %s", row.detail.c_str(), row.computation.c_str());
        ImGui::PopID();
        ImGui::TableSetColumnIndex(1);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(KindColor(row.kind)), "%s", KernelKindName(row.kind));
        ImGui::TableSetColumnIndex(2);
        ImGui::Text("%lld", static_cast<long long>(row.calls));
        ImGui::TableSetColumnIndex(3);
        ImGui::Text("%.3f", row.total_ns / 1e6);
        ImGui::TableSetColumnIndex(4);
        ImGui::Text("%.1f", row.median_ns / 1e3);
        ImGui::TableSetColumnIndex(5);
        ImVec2 p = ImGui::GetCursorScreenPos();
        const float w = ImGui::GetContentRegionAvail().x;
        ImGui::GetWindowDrawList()->AddRectFilled(
            p, ImVec2(p.x + w * static_cast<float>(row.share), p.y + ImGui::GetTextLineHeight()), IM_COL32(80, 150, 230, 90));
        ImGui::Text("%5.1f%%", row.share * 100);
        ImGui::TableSetColumnIndex(6);
        ImGui::TextUnformatted(FormatBytes(row.bytes).c_str());
        ImGui::TableSetColumnIndex(7);
        if (row.estimate_ns >= 0) {
          // Dim when the model is within 2x of the measurement.
          const double ratio = row.median_ns > 0 ? static_cast<double>(row.estimate_ns) / row.median_ns : 0;
          const bool off = ratio > 2 || ratio < 0.5;
          ImGui::TextColored(off ? ImVec4(1.0f, 0.7f, 0.3f, 1.0f) : ImGui::GetStyleColorVec4(ImGuiCol_Text), "%.1f",
                             row.estimate_ns / 1e3);
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("estimate / measured median = %.2f", ratio);
        } else {
          ImGui::TextColored(colors::kDim, "-");
        }
      }
    }
    ImGui::EndTable();
  }
  DrawTimeline(state, ui, *run);
  if (state.selected_kernel.empty()) {
    ImGui::TextColored(colors::kDim, "Click a kernel (table or timeline) to see its HLO.");
    return;
  }
  std::string computation;
  for (const KernelSummaryRow& row : s.rows) {
    if (row.name == state.selected_kernel) computation = row.computation;
  }
  const std::string hlo = KernelHlo(*run, state.selected_kernel, computation);
  ImGui::TextColored(colors::kAccent, "HLO of %s", state.selected_kernel.c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("emitter passes")) {
    StartEmitter(state, state.selected_kernel);
    ui.tab = Tab::kEmitter;
    ui.tab_requested = true;
  }
  ImGui::BeginChild("##kernel_hlo", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  if (hlo.empty()) ImGui::TextColored(colors::kDim, "(no HLO instruction of that name: a runtime routine?)");
  size_t start = 0;
  while (start < hlo.size()) {
    size_t nl = hlo.find('\n', start);
    if (nl == std::string::npos) nl = hlo.size();
    DrawCodeLine(std::string_view(hlo).substr(start, nl - start), nullptr, nullptr);
    start = nl + 1;
  }
  ImGui::EndChild();
}

}  // namespace passlab::gui
