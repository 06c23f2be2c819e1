// The Pipeline panel: the pipeline as a tree of sub-pipelines and pass
// occurrences with checkboxes (ctrl+click or the context menu toggles the
// pass everywhere), a filter, presets, the registry's description on hover,
// and after a compile each occurrence's badges: changed, Δ instructions,
// time, runs (fixed-point iterations), failure or verifier failure.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "gui/panels.h"
#include "passes/registry.h"

namespace passlab::gui {
namespace {

bool ContainsNoCase(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return true;
  auto eq = [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b)); };
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), eq) != hay.end();
}

bool GroupMatches(const AppState& state, const PipelineGroup& g, std::string_view filter) {
  if (filter.empty()) return true;
  for (const PipelineGroup::Item& item : g.items) {
    if (item.is_group ? GroupMatches(state, state.groups[item.index], filter)
                      : ContainsNoCase(state.occurrences[item.index].pass_name, filter)) {
      return true;
    }
  }
  return false;
}

const FixedPointRecord* FindFixedPoint(const PipelineResult* r, const std::string& path) {
  if (r == nullptr) return nullptr;
  for (const FixedPointRecord& f : r->fixed_points) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

void OccurrenceTooltip(const AppState& state, const PassOccurrence& occ, const OccurrenceResult* r) {
  const PassRegistryEntry* e = FindRegisteredPass(occ.pass_name);
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
  ImGui::TextColored(colors::kAccent, "%s", occ.pass_name.c_str());
  ImGui::SameLine();
  ImGui::TextColored(colors::kDim, "@%lld  %s", static_cast<long long>(occ.id), occ.pipeline_path.c_str());
  if (e != nullptr) {
    ImGui::TextColored(colors::kDim, "%.*s · %.*s%s", static_cast<int>(e->class_name.size()), e->class_name.data(),
                       static_cast<int>(e->group.size()), e->group.data(), e->required ? " · required" : "");
    ImGui::TextWrapped("%.*s", static_cast<int>(e->description.size()), e->description.data());
    if (e->required) {
      ImGui::TextColored(colors::kWarn, "required: %.*s", static_cast<int>(e->required_reason.size()),
                         e->required_reason.data());
    }
  }
  if (r != nullptr && (r->runs > 0 || r->failed)) {
    ImGui::Separator();
    ImGui::Text("%lld run%s, %lld changed, %.3f ms, %+lld instructions", static_cast<long long>(r->runs),
                r->runs == 1 ? "" : "s", static_cast<long long>(r->changed_runs), r->total_ms,
                static_cast<long long>(r->delta_instructions));
    for (const auto& [op, d] : r->opcode_delta) ImGui::BulletText("%s %+lld", op.c_str(), static_cast<long long>(d));
    for (const auto& [c, n] : r->counters) {
      ImGui::TextColored(colors::kDim, "  %s: %lld", c.c_str(), static_cast<long long>(n));
    }
    if (!r->error.empty()) ImGui::TextColored(colors::kBad, "%s", r->error.c_str());
  }
  ImGui::TextColored(colors::kDim, "ctrl+click the box: toggle '%s' everywhere", occ.pass_name.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void DrawOccurrenceRow(AppState& state, const PassOccurrence& occ) {
  const PipelineResult* result = state.pipeline_result.get();
  const OccurrenceResult* r = result != nullptr ? &result->occurrences[occ.id] : nullptr;
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::PushID(static_cast<int>(occ.id));
  bool on = state.enabled[occ.id];
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(1, 1));
  const bool clicked = ImGui::Checkbox("##on", &on);
  ImGui::PopStyleVar();
  if (clicked) {
    if (ImGui::GetIO().KeyCtrl) {
      SetPassEnabled(state, occ.pass_name, on);
    } else {
      SetOccurrenceEnabled(state, occ.id, on);
    }
  }
  ImGui::SameLine(0, 4);
  const bool selected = state.selected_occurrence == occ.id;
  ImVec4 name_color = on ? ImVec4(0.9f, 0.9f, 0.92f, 1) : colors::kDim;
  if (r != nullptr && (r->failed || r->verifier_failed)) name_color = colors::kBad;
  ImGui::PushStyleColor(ImGuiCol_Text, name_color);
  if (ImGui::Selectable(occ.pass_name.c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) {
    SelectOccurrence(state, occ.id);
  }
  // A selection made elsewhere (--select-pass, the ablation panel) scrolls
  // its row into view once.
  static int64_t scrolled_to = -1;
  if (selected && scrolled_to != occ.id) {
    if (!ImGui::IsItemVisible()) ImGui::SetScrollHereY(0.3f);
    scrolled_to = occ.id;
  }
  ImGui::PopStyleColor();
  if (ImGui::IsItemHovered()) OccurrenceTooltip(state, occ, r);
  if (ImGui::BeginPopupContextItem("ctx")) {
    if (ImGui::MenuItem(("enable '" + occ.pass_name + "' everywhere").c_str())) SetPassEnabled(state, occ.pass_name, true);
    if (ImGui::MenuItem(("disable '" + occ.pass_name + "' everywhere").c_str())) SetPassEnabled(state, occ.pass_name, false);
    ImGui::EndPopup();
  }
  if (occ.occurrence_index > 0) {
    ImGui::SameLine(0, 4);
    ImGui::TextColored(colors::kDim, "#%lld", static_cast<long long>(occ.occurrence_index + 1));
  }
  if (r != nullptr) {
    if (r->verifier_failed) {
      Badge("verifier", colors::kBad);
    } else if (r->failed) {
      Badge("failed", colors::kBad);
    } else if (r->changed()) {
      Badge("changed", colors::kGood);
    } else if (r->runs == 0 && r->skipped_runs > 0) {
      Badge("off", colors::kDim);
    }
  }
  char buf[32];
  ImGui::TableSetColumnIndex(1);
  if (r != nullptr && r->delta_instructions != 0) {
    std::snprintf(buf, sizeof(buf), "%+lld", static_cast<long long>(r->delta_instructions));
    ImGui::TextColored(r->delta_instructions < 0 ? colors::kGood : colors::kWarn, "%s", buf);
  }
  ImGui::TableSetColumnIndex(2);
  if (r != nullptr && r->runs > 0) {
    ImGui::TextColored(r->total_ms >= 1 ? ImVec4(0.85f, 0.86f, 0.88f, 1) : colors::kDim,
                       r->total_ms >= 10 ? "%.0f" : r->total_ms >= 1 ? "%.1f" : "%.2f", r->total_ms);
  }
  ImGui::TableSetColumnIndex(3);
  if (r != nullptr && r->runs > 1) ImGui::TextColored(colors::kAccent, "%lld", static_cast<long long>(r->runs));
  ImGui::PopID();
}

void DrawGroup(AppState& state, UiState& ui, int64_t index) {
  const PipelineGroup& g = state.groups[index];
  if (!GroupMatches(state, g, ui.pipeline_filter)) return;
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_SpanFullWidth | ImGuiTreeNodeFlags_DefaultOpen;
  if (!ui.pipeline_filter.empty()) ImGui::SetNextItemOpen(true, ImGuiCond_Always);
  const bool open = ImGui::TreeNodeEx(g.path.c_str(), flags, "%s", g.name.c_str());
  if (const FixedPointRecord* f = FindFixedPoint(state.pipeline_result.get(), g.path)) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%lld iteration%s%s", static_cast<long long>(f->iterations), f->iterations == 1 ? "" : "s",
                  f->hit_limit ? " (limit!)" : f->cycled ? " (cycle!)" : "");
    Badge(buf, f->hit_limit || f->cycled ? colors::kBad : colors::kAccent);
  }
  if (!open) return;
  for (const PipelineGroup::Item& item : g.items) {
    if (item.is_group) {
      DrawGroup(state, ui, item.index);
      continue;
    }
    const PassOccurrence& occ = state.occurrences[item.index];
    if (!ContainsNoCase(occ.pass_name, ui.pipeline_filter)) continue;
    DrawOccurrenceRow(state, occ);
  }
  ImGui::TreePop();
}

}  // namespace

void DrawPipelinePanel(AppState& state, UiState& ui) {
  ImGui::TextColored(colors::kAccent, "Pipeline");
  ImGui::SameLine();
  ImGui::TextColored(colors::kDim, "%zu occurrences", state.occurrences.size());
  // Today's XLA:GPU or the seed era's (seed 003's table 1).
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("gpu-2021 (seed 003) ").x + 30);
  if (ImGui::BeginCombo("##pipeline", state.pipeline_name.c_str())) {
    for (const char* name : {"gpu", "gpu-2021"}) {
      if (ImGui::Selectable(name, state.pipeline_name == name)) SetPipeline(state, name);
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("gpu: today's XLA:GPU default path; gpu-2021: XLA:GPU of seed 003's era");
  ImGui::SetNextItemWidth(-FLT_MIN);
  ImGui::InputTextWithHint("##filter", "filter passes", &ui.pipeline_filter);
  if (ImGui::SmallButton("all")) ApplyPreset(state, PassPreset::kAll);
  ImGui::SameLine();
  if (ImGui::SmallButton("none")) ApplyPreset(state, PassPreset::kNone);
  ImGui::SameLine();
  if (ImGui::SmallButton("required only")) ApplyPreset(state, PassPreset::kRequiredOnly);
  ImGui::Checkbox("auto-compile", &state.auto_compile);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("compile after every load and every toggle");
  ImGui::SameLine();
  ImGui::Checkbox("verify", &state.verify_each);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("run the HLO verifier after every pass run that changed the module");

  const std::string filter = DisableFilter(state);
  if (!filter.empty()) {
    ImGui::TextColored(colors::kDim, "--disable %s", filter.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the same configuration on the CLI: passlab opt/run --disable %s", filter.c_str());
  }

  // The input module, then the tree.
  const ImGuiTableFlags flags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##pipeline", 4, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("pass", ImGuiTableColumnFlags_WidthStretch);
  const float digit = ImGui::CalcTextSize("0").x;
  ImGui::TableSetupColumn("Δ", ImGuiTableColumnFlags_WidthFixed, digit * 5);
  ImGui::TableSetupColumn("ms", ImGuiTableColumnFlags_WidthFixed, digit * 5);
  ImGui::TableSetupColumn("×", ImGuiTableColumnFlags_WidthFixed, digit * 2);
  ImGui::TableHeadersRow();
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  if (ImGui::Selectable("(input module)", state.selected_occurrence == -1, ImGuiSelectableFlags_SpanAllColumns)) {
    SelectOccurrence(state, -1);
  }
  if (state.loaded != nullptr) {
    ImGui::TableSetColumnIndex(1);
    ImGui::TextColored(colors::kDim, "%lld", static_cast<long long>(state.loaded->instruction_count));
  }
  if (!state.groups.empty()) DrawGroup(state, ui, 0);
  ImGui::EndTable();
}

}  // namespace passlab::gui
