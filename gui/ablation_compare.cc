#include "gui/ablation_compare.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

namespace passlab::gui {
namespace {

std::string Change(const ComparedCell& c) {
  if (!c.present) return "–";
  if (!std::isfinite(c.ratio)) return c.outcome.empty() ? "–" : c.outcome;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.1f%%", (c.ratio - 1) * 100);
  std::string text = buf;
  if (std::isfinite(c.ci_low) && std::isfinite(c.ci_high)) {
    std::snprintf(buf, sizeof buf, " [%+.1f, %+.1f]", (c.ci_low - 1) * 100, (c.ci_high - 1) * 100);
    text += buf;
  }
  if (c.significant) text += " *";
  if (c.outcome == "wrong-result") text += " WRONG";
  return text;
}

ImVec4 ChangeColour(const ComparedCell& c) {
  if (!c.present || !std::isfinite(c.ratio)) return colors::kWarn;
  if (!c.significant) return colors::kDim;
  return c.ratio > 1 ? colors::kBad : colors::kGood;
}

// Whether the variant's significant effects go the same way in every report
// compare.h set beside the first: "opposite" when one pair disagrees, "same"
// when at least two reports measured it and one of them found it
// significant, "" otherwise (a crash or compile error in one report is no
// agreement).
const char* SignAgreement(const AblationComparison& c, const ComparedVariant& v) {
  for (const ComparedAgreement& a : c.agreement) {
    if (std::find(a.disagreeing.begin(), a.disagreeing.end(), v.name) != a.disagreeing.end()) return "opposite";
  }
  int measured = 0;
  bool significant = false;
  for (const ComparedCell& cell : v.cells) {
    if (!cell.present || !std::isfinite(cell.ratio)) continue;
    ++measured;
    significant = significant || cell.significant;
  }
  return measured >= 2 && significant ? "same" : "";
}

void DrawReports(AppState& state, const AblationComparison& c) {
  for (size_t s = 0; s < c.labels.size(); ++s) {
    ImGui::PushID(static_cast<int>(s));
    ImGui::TextColored(colors::kAccent, "%zu. %s", s + 1, c.labels[s].c_str());
    ImGui::SameLine();
    ImGui::TextColored(colors::kDim, "%s, baseline %.4f ms", c.directories[s].c_str(),
                       std::isfinite(c.baseline_median_ns[s]) ? c.baseline_median_ns[s] / 1e6 : 0.0);
    if (s > 0) {
      ImGui::SameLine();
      if (ImGui::SmallButton("close")) CloseComparedAblationReport(state, static_cast<int64_t>(s) - 1);
      for (const ComparedAgreement& a : c.agreement) {
        if (a.report != static_cast<int64_t>(s)) continue;
        char rho[32] = "n/a";
        if (std::isfinite(a.spearman)) std::snprintf(rho, sizeof rho, "%.2f", a.spearman);
        ImGui::TextColored(colors::kDim,
                           "    against 1: %lld variants measured by both; of the %lld significant in either, %lld "
                           "change the same way; Spearman rank correlation %s",
                           static_cast<long long>(a.common_variants), static_cast<long long>(a.significant_in_either),
                           static_cast<long long>(a.same_sign), rho);
        if (!a.disagreeing.empty()) {
          std::string names;
          for (const std::string& n : a.disagreeing) names += (names.empty() ? "" : ", ") + n;
          ImGui::TextColored(colors::kWarn, "    opposite: %s", names.c_str());
        }
      }
    }
    ImGui::PopID();
  }
}

void DrawVariants(const AblationComparison& c, float height) {
  const int columns = static_cast<int>(c.labels.size()) + 2;
  if (!ImGui::BeginTable("##compared_variants", columns,
                         ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_RowBg |
                             ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit,
                         ImVec2(0, height))) {
    return;
  }
  ImGui::TableSetupScrollFreeze(1, 1);
  const float ch = ImGui::CalcTextSize("0").x;
  ImGui::TableSetupColumn("variant", ImGuiTableColumnFlags_WidthFixed, 36 * ch);
  for (size_t s = 0; s < c.labels.size(); ++s) {
    ImGui::TableSetupColumn((std::to_string(s + 1) + ". " + c.labels[s]).c_str(), ImGuiTableColumnFlags_WidthFixed,
                            26 * ch);
  }
  ImGui::TableSetupColumn("sign", ImGuiTableColumnFlags_WidthFixed, 9 * ch);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(c.variants.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const ComparedVariant& v = c.variants[i];
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(v.name.c_str());
      for (size_t s = 0; s < v.cells.size(); ++s) {
        ImGui::TableSetColumnIndex(static_cast<int>(s) + 1);
        ImGui::TextColored(ChangeColour(v.cells[s]), "%s", Change(v.cells[s]).c_str());
      }
      ImGui::TableSetColumnIndex(columns - 1);
      const char* sign = SignAgreement(c, v);
      ImGui::TextColored(std::string(sign) == "opposite" ? colors::kWarn : colors::kGood, "%s", sign);
    }
  }
  ImGui::EndTable();
}

void DrawManifestDifferences(const AblationComparison& c) {
  ImGui::TextColored(colors::kAccent, "What differs in the manifests");
  if (c.manifest_differences.empty()) {
    ImGui::TextColored(colors::kDim, "nothing");
    return;
  }
  if (!ImGui::BeginTable("##manifest_differences", static_cast<int>(c.labels.size()) + 1,
                         ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_RowBg |
                             ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit)) {
    return;
  }
  ImGui::TableSetupScrollFreeze(1, 1);
  const float field_w = 34 * ImGui::CalcTextSize("0").x;
  const float value_w = std::max(120.0f, (ImGui::GetContentRegionAvail().x - field_w - 24) /
                                             static_cast<float>(c.labels.size()));
  ImGui::TableSetupColumn("field", ImGuiTableColumnFlags_WidthFixed, field_w);
  for (size_t s = 0; s < c.labels.size(); ++s) {
    ImGui::TableSetupColumn((std::to_string(s + 1) + ". " + c.labels[s]).c_str(), ImGuiTableColumnFlags_WidthFixed,
                            value_w);
  }
  ImGui::TableHeadersRow();
  for (const ManifestDifference& d : c.manifest_differences) {
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextUnformatted(d.field.c_str());
    for (size_t s = 0; s < d.values.size(); ++s) {
      ImGui::TableSetColumnIndex(static_cast<int>(s) + 1);
      ImGui::TextUnformatted(d.values[s].c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace

void DrawAblationComparison(AppState& state, UiState& ui) {
  // Kept alive for this frame: "close" replaces the state's comparison.
  const std::shared_ptr<const AblationComparison> keep = state.ablation.comparison;
  const AblationComparison* c = keep.get();
  if (c == nullptr) {
    ImGui::TextColored(colors::kDim, "Open another report beside this one (another model, pipeline, machine or passlab "
                                     "build) to read them side by side, as passlab ablate --compare does:");
    ImGui::SetNextItemWidth(420);
    ImGui::InputTextWithHint("##another_inline", "report directory", &ui.ablation_another_input);
    ImGui::SameLine();
    if (ImGui::Button("Open beside")) OpenAnotherAblationReport(state, ui.ablation_another_input);
    return;
  }
  DrawReports(state, *c);
  ImGui::TextColored(colors::kDim, "change when the pass is disabled [95%% CI]; * significant; sign: the significant "
                                   "effects go the same way in every report, or not");
  const float avail = ImGui::GetContentRegionAvail().y;
  DrawVariants(*c, std::max(120.0f, avail * 0.62f));
  DrawManifestDifferences(*c);
}

}  // namespace passlab::gui
