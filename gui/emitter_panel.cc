// The Emitter panel: pick a kernel of the optimized module (a fusion or an
// unfused op the CPU code generator compiles); its MLIR after every emitter
// pass, with the diff against the previous pass in the shared diff view.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <functional>

#include "gui/panels.h"

namespace passlab::gui {
namespace {

uint64_t TextKey(const std::string& text) { return std::hash<std::string>()(text) | 1; }

}  // namespace

void DrawEmitterPanel(AppState& state, UiState& ui) {
  if (ui.emitter_candidates_for != state.pipeline_result.get()) {
    ui.emitter_candidates = EmitterCandidates(state);
    ui.emitter_candidates_for = state.pipeline_result.get();
  }
  const std::vector<std::string>& candidates = ui.emitter_candidates;
  if (candidates.empty()) {
    ImGui::TextColored(colors::kDim, "Compile a module first: its kernels are listed here.");
    return;
  }
  const float list_w = 180;
  ImGui::BeginChild("##emitter_kernels", ImVec2(list_w, 0), true);
  ImGui::SetNextItemWidth(-FLT_MIN);
  ImGui::InputTextWithHint("##kfilter", "filter kernels", &ui.emitter_filter);
  std::vector<int> shown;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (ui.emitter_filter.empty() || candidates[i].find(ui.emitter_filter) != std::string::npos) shown.push_back(static_cast<int>(i));
  }
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(shown.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const std::string& name = candidates[shown[i]];
      if (ImGui::Selectable(name.c_str(), state.emitter_kernel == name)) StartEmitter(state, name);
    }
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##emitter_main", ImVec2(0, 0), false);
  if (state.emitter_job != nullptr) {
    DrawComputing(state.emitter_job->name().c_str());
    ImGui::EndChild();
    return;
  }
  const EmitterResult* e = state.emitter_result.get();
  if (e == nullptr) {
    ImGui::TextColored(colors::kDim, "Pick a kernel: it is compiled with every emitter pass observed.");
    ImGui::EndChild();
    return;
  }
  ImGui::TextColored(colors::kAccent, "%s", e->kernel.c_str());
  ImGui::SameLine();
  ImGui::TextColored(colors::kDim, "%zu emitter passes", e->passes.size());
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(e->hlo.c_str());
    ImGui::EndTooltip();
  }
  // Pass strip: one button per pass (changed ones highlighted).
  for (size_t i = 0; i < e->passes.size(); ++i) {
    const EmitterPassSnapshot& p = e->passes[i];
    const bool changed = p.before != p.after;
    if (i > 0) ImGui::SameLine(0, 4);
    if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(p.pass_name.c_str()).x + 20) ImGui::NewLine();
    const bool selected = static_cast<int64_t>(i) == state.selected_emitter_pass;
    ImGui::PushStyleColor(ImGuiCol_Button, selected ? ImVec4(0.25f, 0.45f, 0.75f, 1) : ImVec4(0.18f, 0.19f, 0.22f, 1));
    ImGui::PushStyleColor(ImGuiCol_Text, changed ? ImVec4(0.92f, 0.92f, 0.95f, 1) : colors::kDim);
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::Button(p.pass_name.c_str())) state.selected_emitter_pass = static_cast<int64_t>(i);
    ImGui::PopID();
    ImGui::PopStyleColor(2);
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("%s: %s, %.2f ms", p.pass_name.c_str(), changed ? "changed the MLIR" : "no change", p.seconds * 1e3);
    }
  }
  if (state.selected_emitter_pass < 0 || state.selected_emitter_pass >= static_cast<int64_t>(e->passes.size())) {
    ImGui::EndChild();
    return;
  }
  const EmitterPassSnapshot& p = e->passes[state.selected_emitter_pass];
  auto before = std::shared_ptr<const std::string>(state.emitter_result, &p.before);
  auto after = std::shared_ptr<const std::string>(state.emitter_result, &p.after);
  std::shared_ptr<const TextModel> after_model = TextFor(state, TextKey(p.after), after);
  if (p.before == p.after) {
    ImGui::TextColored(colors::kDim, "%s did not change the MLIR:", p.pass_name.c_str());
    if (after_model == nullptr) {
      DrawComputing("the text view");
    } else {
      DrawTextView("emitter_text", *after_model, ui.emitter_text);
    }
    ImGui::EndChild();
    return;
  }
  std::shared_ptr<const DiffModel> diff = DiffFor(state, TextKey(p.before), TextKey(p.after), before, after, false);
  if (diff == nullptr) {
    DrawComputing("the diff");
  } else {
    DrawDiffView("emitter_diff", *diff, ui.emitter_diff, nullptr, nullptr);
  }
  ImGui::EndChild();
}

}  // namespace passlab::gui
