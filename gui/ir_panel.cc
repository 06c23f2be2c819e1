// The IR panel: the module after the selected occurrence, or its diff
// against the module before it (side by side or unified), with the
// structural summary (instructions added/removed/changed). Texts and diffs
// are computed on jobs and cached by fingerprint.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "gui/panels.h"

namespace passlab::gui {
namespace {

void DrawStructuralSummary(const DiffModel& diff) {
  if (!diff.has_structural) {
    if (!diff.structural_error.empty()) ImGui::TextColored(colors::kWarn, "no structural diff: %s", diff.structural_error.c_str());
    return;
  }
  const StructuralDiff& s = diff.structural;
  ImGui::TextColored(colors::kAccent, "%s", diff.summary.c_str());
  if (s.empty()) return;
  ImGui::BeginChild("##structural", ImVec2(0, ImGui::GetTextLineHeightWithSpacing() * 7), true);
  auto list = [](const char* title, const auto& items, const ImVec4& color, auto&& draw) {
    if (items.empty()) return;
    if (!ImGui::TreeNodeEx(title, ImGuiTreeNodeFlags_DefaultOpen, "%s (%zu)", title, items.size())) return;
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(items.size()));
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        ImGui::PushStyleColor(ImGuiCol_Text, color);
        draw(items[i]);
        ImGui::PopStyleColor();
      }
    }
    ImGui::TreePop();
  };
  list("added", s.added, colors::kGood, [](const auto& p) { ImGui::Text("+ %s: %s", p.first.c_str(), p.second.c_str()); });
  list("removed", s.removed, colors::kBad, [](const auto& p) { ImGui::Text("- %s: %s", p.first.c_str(), p.second.c_str()); });
  list("changed", s.changed, colors::kWarn, [](const InstructionChange& c) {
    std::string what;
    for (const std::string& w : c.what) what += (what.empty() ? "" : ", ") + w;
    ImGui::Text("~ %s/%s (%s)", c.computation.c_str(), c.name.c_str(), what.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("before: %s\nafter:  %s", c.before.c_str(), c.after.c_str());
  });
  if (!s.computations_added.empty() || !s.computations_removed.empty()) {
    ImGui::TextColored(colors::kDim, "computations: +%zu -%zu", s.computations_added.size(), s.computations_removed.size());
  }
  ImGui::EndChild();
}

}  // namespace

void DrawIrPanel(AppState& state, UiState& ui) {
  if (state.loaded == nullptr) {
    ImGui::TextColored(colors::kDim, "Open an HLO file (File > Open, or drop one on the window) or build a model.");
    return;
  }
  const PipelineResult* r = state.pipeline_result.get();
  const int64_t id = state.selected_occurrence;
  uint64_t before_fp = 0, after_fp = state.loaded->fingerprint;
  std::shared_ptr<const std::string> before, after = state.loaded->text;
  const OccurrenceResult* occ = nullptr;
  if (id >= 0 && r != nullptr) {
    occ = &r->occurrences[id];
    const PassOccurrence& o = state.occurrences[id];
    ImGui::TextColored(colors::kAccent, "after %s", o.pass_name.c_str());
    ImGui::SameLine();
    ImGui::TextColored(colors::kDim, "@%lld in %s", static_cast<long long>(id), o.pipeline_path.c_str());
    if (occ->fingerprint_after == 0) {
      Badge("not reached", colors::kDim);
      ImGui::TextColored(colors::kDim, "The pipeline stopped before this occurrence.");
      return;
    }
    if (occ->verifier_failed) Badge("verifier failed", colors::kBad);
    else if (occ->failed) Badge("failed", colors::kBad);
    else if (occ->changed()) Badge("changed", colors::kGood);
    else if (occ->runs == 0) Badge("disabled", colors::kDim);
    else Badge("unchanged", colors::kDim);
    if (occ->run_list.size() > 1) {
      // Inside a fixed point: one run, or all of them (with the other
      // passes' changes in between).
      ImGui::TextColored(colors::kDim, "run:");
      for (size_t i = 0; i < occ->run_list.size(); ++i) {
        const OccurrenceRun& run = occ->run_list[i];
        ImGui::SameLine(0, 4);
        char label[64];
        std::snprintf(label, sizeof(label), "iteration %lld%s##run%zu", static_cast<long long>(run.iteration + 1),
                      run.fingerprint_before != run.fingerprint_after ? " *" : "", i);
        if (ImGui::RadioButton(label, state.selected_run == static_cast<int64_t>(i))) SelectRun(state, static_cast<int64_t>(i));
      }
      ImGui::SameLine(0, 4);
      if (ImGui::RadioButton("first to last", state.selected_run == -1)) SelectRun(state, -1);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("before its first run to after its last: includes the other passes of the fixed point");
    }
    std::tie(before_fp, after_fp) = SelectedFingerprints(state);
    before = r->Text(before_fp);
    after = r->Text(after_fp);
    if (before == nullptr && before_fp == r->input_fingerprint) before = state.loaded->text;
    if (after == nullptr && after_fp == r->input_fingerprint) after = state.loaded->text;
    if (!occ->error.empty()) ImGui::TextColored(colors::kBad, "%s", occ->error.c_str());
    if (occ->verifier_failed && !r->status.ok()) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(colors::kBad, "%.*s", static_cast<int>(r->status.message().size()), r->status.message().data());
      ImGui::PopTextWrapPos();
    }
  } else {
    ImGui::TextColored(colors::kAccent, "input module");
    ImGui::SameLine();
    ImGui::TextColored(colors::kDim, "%s, %lld instructions", state.loaded->source.label.c_str(),
                       static_cast<long long>(state.loaded->instruction_count));
  }
  const bool has_diff = occ != nullptr && before_fp != after_fp && before != nullptr;
  ImGui::SameLine(0, 24);
  ImGui::BeginDisabled(!has_diff);
  if (ImGui::RadioButton("diff", ui.ir_mode == UiState::IrMode::kDiff && has_diff)) ui.ir_mode = UiState::IrMode::kDiff;
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::RadioButton("module", ui.ir_mode == UiState::IrMode::kModule || !has_diff)) ui.ir_mode = UiState::IrMode::kModule;
  if (has_diff) {
    ImGui::SameLine();
    ImGui::Checkbox("summary", &ui.ir_show_summary);
  }

  std::shared_ptr<const TextModel> after_model = TextFor(state, after_fp, after);
  if (has_diff && ui.ir_mode == UiState::IrMode::kDiff) {
    std::shared_ptr<const DiffModel> diff = DiffFor(state, before_fp, after_fp, before, after, /*parse_hlo=*/true);
    if (diff == nullptr) {
      DrawComputing("the diff");
      return;
    }
    if (ui.ir_show_summary) DrawStructuralSummary(*diff);
    DrawDiffView("ir_diff", *diff, ui.ir_diff, after_model.get(), &ui.ir_text);
    // A name clicked in the diff opens the module at its definition.
    if (ui.ir_text.scroll_to_line >= 0) ui.ir_mode = UiState::IrMode::kModule;
    return;
  }
  if (after_model == nullptr) {
    DrawComputing("the text view");
    return;
  }
  DrawTextView("ir_text", *after_model, ui.ir_text);
}

}  // namespace passlab::gui
