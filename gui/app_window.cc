// The window layout: menu bar, toolbar with the jobs' progress, the Pipeline
// panel on the left, IR / Kernels / Emitter / Ablation tabs on the right,
// the log at the bottom; plus the open-file and build-model popups.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <filesystem>

#include "gui/panels.h"
#include "models/model_registry.h"

namespace passlab::gui {
namespace {

template <typename T>
void JobStatus(const char* label, const JobPtr<T>& job, bool& any) {
  if (job == nullptr) return;
  if (any) ImGui::SameLine(0, 16);
  any = true;
  JobProgress& p = job->progress();
  const int64_t total = p.total.load(), done = p.done.load();
  ImGui::TextColored(colors::kWarn, "%s", label);
  ImGui::SameLine();
  if (total > 0) {
    char overlay[64];
    std::snprintf(overlay, sizeof(overlay), "%lld/%lld", static_cast<long long>(done), static_cast<long long>(total));
    ImGui::ProgressBar(std::min(1.0f, static_cast<float>(done) / static_cast<float>(total)), ImVec2(110, 0), overlay);
    ImGui::SameLine();
  }
  ImGui::TextColored(colors::kDim, "%s %.1fs", p.stage().c_str(), job->seconds());
}

void DrawToolbar(AppState& state, UiState& ui) {
  if (state.loaded != nullptr) {
    ImGui::TextColored(colors::kAccent, "%s", state.loaded->source.label.c_str());
    ImGui::SameLine();
    ImGui::TextColored(colors::kDim, "%lld instructions", static_cast<long long>(state.loaded->instruction_count));
  } else {
    ImGui::TextColored(colors::kDim, "no module");
  }
  ImGui::SameLine(0, 20);
  if (ImGui::Button("Open...")) ui.open_file_popup = true;
  ImGui::SameLine();
  if (ImGui::Button("Model...")) ui.open_model_popup = true;
  ImGui::SameLine();
  ImGui::BeginDisabled(state.loaded == nullptr);
  if (ImGui::Button("Compile")) StartCompile(state);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(state.pipeline_result == nullptr || state.pipeline_result->optimized == nullptr ||
                       state.run_job != nullptr);
  if (ImGui::Button("Run")) {
    StartRun(state);
    ui.tab = Tab::kKernels;
    ui.tab_requested = true;
  }
  ImGui::EndDisabled();
  ImGui::SameLine(0, 20);
  bool any = false;
  JobStatus("loading", state.load_job, any);
  JobStatus("compiling", state.compile_job, any);
  JobStatus("running", state.run_job, any);
  JobStatus("emitting", state.emitter_job, any);
  if (!any && state.pipeline_result != nullptr) {
    const PipelineResult& r = *state.pipeline_result;
    if (r.status.ok()) {
      ImGui::TextColored(colors::kGood, "compiled");
      ImGui::SameLine();
      ImGui::TextColored(colors::kDim, "%lld -> %lld instructions in %.1f ms",
                         static_cast<long long>(r.instructions_before), static_cast<long long>(r.instructions_after),
                         r.total_ms);
    } else {
      ImGui::TextColored(colors::kBad, "pipeline failed (see log)");
    }
  }
  if (!ui.frame_ms.empty()) {
    const float ms = ui.frame_ms.back();
    const char* text = "00.0 ms/frame";
    ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(text).x - 16);
    ImGui::TextColored(colors::kDim, "%4.1f ms/frame", ms);
  }
}

void TabItem(UiState& ui, const char* label, Tab tab, void (*draw)(AppState&, UiState&), AppState& state) {
  ImGuiTabItemFlags flags = ui.tab_requested && ui.tab == tab ? ImGuiTabItemFlags_SetSelected : 0;
  if (ImGui::BeginTabItem(label, nullptr, flags)) {
    if (!ui.tab_requested) ui.tab = tab;
    draw(state, ui);
    ImGui::EndTabItem();
  }
}

}  // namespace

bool ParseTab(std::string_view name, Tab& tab) {
  if (name == "ir" || name == "pipeline") tab = Tab::kIr;
  else if (name == "kernels") tab = Tab::kKernels;
  else if (name == "emitter") tab = Tab::kEmitter;
  else if (name == "ablation") tab = Tab::kAblation;
  else return false;
  return true;
}

void DrawLogPanel(AppState& state, UiState& ui) {
  ImGui::TextColored(colors::kAccent, "Log");
  ImGui::SameLine();
  if (ImGui::SmallButton("clear")) state.log.clear();
  ImGui::SameLine();
  if (ImGui::SmallButton("copy")) {
    std::string all;
    for (const LogEntry& e : state.log) all += e.where + ": " + e.message + "\n";
    ImGui::SetClipboardText(all.c_str());
  }
  ImGui::BeginChild("##log", ImVec2(0, 0), false);
  for (const LogEntry& e : state.log) {
    const ImVec4 c = e.level == LogLevel::kError ? colors::kBad : e.level == LogLevel::kWarning ? colors::kWarn : colors::kDim;
    ImGui::TextColored(colors::kDim, "%7.2fs", e.time_s);
    ImGui::SameLine();
    ImGui::TextColored(c, "%s", e.level == LogLevel::kError ? "error" : e.level == LogLevel::kWarning ? "warn " : "info ");
    ImGui::SameLine();
    ImGui::TextColored(colors::kAccent, "%s:", e.where.c_str());
    ImGui::SameLine();
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(e.message.c_str());
    ImGui::PopTextWrapPos();
  }
  if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - 4) ImGui::SetScrollHereY(1.0f);
  ImGui::EndChild();
}

void DrawOpenPopups(AppState& state, UiState& ui) {
  if (ui.open_file_popup) {
    ImGui::OpenPopup("Open HLO file");
    ui.open_file_popup = false;
    if (ui.browse_dir.empty()) ui.browse_dir = std::filesystem::current_path().string();
  }
  if (ui.open_model_popup) {
    ImGui::OpenPopup("Build a model");
    ui.open_model_popup = false;
  }
  ImGui::SetNextWindowSize(ImVec2(640, 480), ImGuiCond_Appearing);
  if (ImGui::BeginPopupModal("Open HLO file")) {
    ImGui::SetNextItemWidth(-90);
    const bool enter = ImGui::InputTextWithHint("##path", "path to an HLO text file", &ui.open_path,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if ((ImGui::Button("Open") || enter) && !ui.open_path.empty()) {
      LoadFile(state, ui.open_path);
      ImGui::CloseCurrentPopup();
    }
    if (!state.recent_files.empty()) {
      ImGui::TextColored(colors::kDim, "recent");
      for (const std::string& f : state.recent_files) {
        if (ImGui::Selectable(f.c_str())) ui.open_path = f;
        if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(0)) {
          LoadFile(state, f);
          ImGui::CloseCurrentPopup();
        }
      }
      ImGui::Separator();
    }
    ImGui::TextColored(colors::kDim, "%s", ui.browse_dir.c_str());
    ImGui::BeginChild("##browse", ImVec2(0, -ImGui::GetFrameHeightWithSpacing()), true);
    std::error_code ec;
    std::filesystem::path dir(ui.browse_dir);
    if (ImGui::Selectable("../")) ui.browse_dir = dir.parent_path().string();
    std::vector<std::filesystem::directory_entry> entries;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) entries.push_back(e);
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      if (a.is_directory() != b.is_directory()) return a.is_directory();
      return a.path().filename() < b.path().filename();
    });
    for (const auto& e : entries) {
      const std::string name = e.path().filename().string();
      if (name.starts_with(".")) continue;
      if (e.is_directory(ec)) {
        if (ImGui::Selectable((name + "/").c_str())) ui.browse_dir = e.path().string();
      } else if (e.path().extension() == ".hlo" || e.path().extension() == ".txt") {
        if (ImGui::Selectable(name.c_str(), ui.open_path == e.path().string())) ui.open_path = e.path().string();
        if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(0)) {
          LoadFile(state, e.path().string());
          ImGui::CloseCurrentPopup();
        }
      }
    }
    ImGui::EndChild();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  if (ImGui::BeginPopupModal("Build a model", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    const ModelInfo* info = FindModel(ui.model_name);
    if (ImGui::BeginCombo("model", ui.model_name.c_str())) {
      for (const ModelInfo& m : ModelRegistry()) {
        if (ImGui::Selectable(m.name.c_str(), m.name == ui.model_name)) ui.model_name = m.name;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", m.description.c_str());
      }
      ImGui::EndCombo();
    }
    if (info != nullptr) {
      ImGui::PushTextWrapPos(520);
      ImGui::TextColored(colors::kDim, "%s", info->description.c_str());
      ImGui::TextColored(colors::kDim, "defaults: %s", info->defaults.c_str());
      ImGui::PopTextWrapPos();
    }
    ImGui::TextColored(colors::kDim, "0 = the model's default");
    auto takes = [&](const char* option) {
      return info != nullptr && std::find(info->options.begin(), info->options.end(), option) != info->options.end();
    };
    auto field = [&](const char* option, const char* label, int& value) {
      if (!takes(option)) return;
      ImGui::SetNextItemWidth(160);
      ImGui::InputInt(label, &value);
      value = std::max(value, 0);
    };
    field("batch", "batch", ui.model_batch);
    field("image-size", "image size", ui.model_image_size);
    field("depth", "depth", ui.model_depth);
    field("width", "width", ui.model_width);
    field("seq-len", "sequence length", ui.model_seq_len);
    if (takes("inference")) ImGui::Checkbox("inference", &ui.model_inference);
    if (ImGui::Button("Build")) {
      ModelOptions o;
      if (takes("batch") && ui.model_batch > 0) o.batch = ui.model_batch;
      if (takes("image-size") && ui.model_image_size > 0) o.image_size = ui.model_image_size;
      if (takes("depth") && ui.model_depth > 0) o.depth = ui.model_depth;
      if (takes("width") && ui.model_width > 0) o.width = ui.model_width;
      if (takes("seq-len") && ui.model_seq_len > 0) o.seq_len = ui.model_seq_len;
      o.inference = takes("inference") && ui.model_inference;
      LoadModel(state, ui.model_name, o);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

void DrawApp(AppState& state, UiState& ui) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoSavedSettings;
  ImGui::Begin("passlab", nullptr, flags);
  if (ImGui::BeginMenuBar()) {
    if (ImGui::BeginMenu("File")) {
      if (ImGui::MenuItem("Open HLO file...")) ui.open_file_popup = true;
      if (ImGui::MenuItem("Build a model...")) ui.open_model_popup = true;
      if (ImGui::BeginMenu("Recent files", !state.recent_files.empty())) {
        for (const std::string& f : state.recent_files) {
          if (ImGui::MenuItem(f.c_str())) LoadFile(state, f);
        }
        ImGui::EndMenu();
      }
      if (ImGui::MenuItem("Open ablation report...")) {
        ui.tab = Tab::kAblation;
        ui.tab_requested = true;
      }
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
      const std::pair<const char*, Tab> tabs[] = {
          {"IR", Tab::kIr}, {"Kernels", Tab::kKernels}, {"Emitter", Tab::kEmitter}, {"Ablation", Tab::kAblation}};
      for (const auto& [label, tab] : tabs) {
        if (ImGui::MenuItem(label, nullptr, ui.tab == tab)) {
          ui.tab = tab;
          ui.tab_requested = true;
        }
      }
      ImGui::EndMenu();
    }
    ImGui::TextColored(colors::kDim, "  passlab — toggle passes, read diffs, see kernels, run ablations");
    ImGui::EndMenuBar();
  }
  DrawToolbar(state, ui);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float log_h = std::max(96.0f, avail.y * 0.13f);
  const float left_w = std::clamp(avail.x * 0.33f, 360.0f, 560.0f);
  ImGui::BeginChild("##left", ImVec2(left_w, avail.y - log_h), true);
  DrawPipelinePanel(state, ui);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##right", ImVec2(0, avail.y - log_h), true);
  if (ImGui::BeginTabBar("##tabs")) {
    TabItem(ui, "IR", Tab::kIr, DrawIrPanel, state);
    TabItem(ui, "Kernels", Tab::kKernels, DrawKernelsPanel, state);
    TabItem(ui, "Emitter", Tab::kEmitter, DrawEmitterPanel, state);
    TabItem(ui, "Ablation", Tab::kAblation, DrawAblationPanel, state);
    ImGui::EndTabBar();
  }
  ui.tab_requested = false;
  ImGui::EndChild();
  ImGui::BeginChild("##log_area", ImVec2(0, 0), true);
  DrawLogPanel(state, ui);
  ImGui::EndChild();
  DrawOpenPopups(state, ui);
  ImGui::End();
}

}  // namespace passlab::gui
