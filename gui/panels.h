// passlab-gui's panels: one Draw...Panel(AppState&, UiState&) per file, all
// reading the state API (gui/state/app_state.h) and keeping only view state
// (scroll targets, search text, sort order) in UiState. Shared widgets — the
// virtualised HLO/MLIR text view and the diff view — live in text_view.cc.
#ifndef PASSLAB_GUI_PANELS_H_
#define PASSLAB_GUI_PANELS_H_

#include <imgui.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gui/state/app_state.h"

namespace passlab::gui {

enum class Tab { kIr, kKernels, kEmitter, kAblation };
// "ir", "kernels", "emitter", "ablation" (--panel NAME); false when unknown.
bool ParseTab(std::string_view name, Tab& tab);

// The Ablation panel's views of a report.
enum class AblationView { kSlowdowns, kHeatmap, kCompileCost, kCompare };
// "slowdowns", "heatmap", "compile-cost", "compare" (--ablation-view NAME).
bool ParseAblationView(std::string_view name, AblationView& view);

// A virtualised text view: search, line to scroll to, the highlighted line.
struct TextViewState {
  std::string search;
  std::string searched;  // `search` the matches belong to
  const void* searched_model = nullptr;
  std::vector<int64_t> matches;
  int64_t match_index = -1;
  int64_t scroll_to_line = -1;
  int64_t highlight_line = -1;
};

struct DiffViewState {
  bool side_by_side = true;
  int64_t current_change = -1;  // index into the layout's rows/lines
  int64_t scroll_to = -1;
  const void* model = nullptr;  // the diff `current_change` belongs to
};

struct UiState {
  Tab tab = Tab::kIr;
  bool tab_requested = false;  // select `tab` on the next frame
  std::string passlab_binary;  // for ablation sweeps

  // Pipeline panel.
  std::string pipeline_filter;

  // IR panel.
  enum class IrMode { kModule, kDiff } ir_mode = IrMode::kDiff;
  TextViewState ir_text;
  DiffViewState ir_diff;
  bool ir_show_summary = true;

  // Kernels panel.
  std::vector<int64_t> kernel_order;  // sorted rows of the current summary
  const void* kernel_order_for = nullptr;
  float timeline_zoom = 1.0f;    // 1 = the whole step fits
  float timeline_offset = 0.0f;  // fraction of the step at the left edge

  // Emitter panel.
  std::string emitter_filter;
  std::vector<std::string> emitter_candidates;
  const void* emitter_candidates_for = nullptr;  // the PipelineResult they come from
  DiffViewState emitter_diff;
  TextViewState emitter_text;

  // Ablation panel.
  std::string ablation_dir_input;
  std::string ablation_another_input;  // "Open another..." (a report beside this one)
  DiffViewState ablation_diff;
  AblationView ablation_view = AblationView::kSlowdowns;
  bool ablation_view_requested = false;  // select `ablation_view` on the next frame

  // Open dialog.
  bool open_file_popup = false;
  bool open_model_popup = false;
  std::string open_path;
  std::string browse_dir;
  std::string model_name = "mlp";
  int model_batch = 0, model_image_size = 0, model_depth = 0, model_width = 0, model_seq_len = 0;
  bool model_inference = false;

  // Frame times (ms) of the last frames, for the status bar and --frames
  // stats: the whole frame, and building it (panels + ImGui::Render, without
  // the GL rasterization).
  std::vector<float> frame_ms;
  std::vector<float> build_ms;
};

// The whole window: menu, toolbar, pipeline on the left, tabs on the right,
// log at the bottom.
void DrawApp(AppState& state, UiState& ui);

void DrawPipelinePanel(AppState& state, UiState& ui);
void DrawIrPanel(AppState& state, UiState& ui);
void DrawKernelsPanel(AppState& state, UiState& ui);
void DrawEmitterPanel(AppState& state, UiState& ui);
void DrawAblationPanel(AppState& state, UiState& ui);
void DrawLogPanel(AppState& state, UiState& ui);
void DrawOpenPopups(AppState& state, UiState& ui);

// ---- shared widgets (text_view.cc) ----

namespace colors {
inline constexpr ImU32 kAdded = IM_COL32(40, 110, 50, 150);
inline constexpr ImU32 kRemoved = IM_COL32(140, 40, 40, 150);
inline constexpr ImU32 kHighlight = IM_COL32(90, 90, 30, 160);
inline constexpr ImU32 kMatch = IM_COL32(70, 70, 120, 140);
ImVec4 ForToken(TokenKind kind);
inline const ImVec4 kDim(0.55f, 0.57f, 0.62f, 1.0f);
inline const ImVec4 kGood(0.45f, 0.85f, 0.45f, 1.0f);
inline const ImVec4 kBad(1.0f, 0.40f, 0.35f, 1.0f);
inline const ImVec4 kWarn(0.95f, 0.75f, 0.30f, 1.0f);
inline const ImVec4 kAccent(0.45f, 0.70f, 1.0f, 1.0f);
}  // namespace colors

// One line of HLO/MLIR in colour; names with a definition in `model` are
// clickable (sets view.scroll_to_line). Call inside a clipped list.
void DrawCodeLine(std::string_view line, const TextModel* model, TextViewState* view);
// A searchable, virtualised text with line numbers and click-to-definition.
void DrawTextView(const char* id, const TextModel& model, TextViewState& view);
// Unified or side-by-side diff with next/previous change buttons.
void DrawDiffView(const char* id, const DiffModel& diff, DiffViewState& view, const TextModel* after_model,
                  TextViewState* after_view);
// A unified diff ("--- / +++ / @@" hunks) as text, added and removed lines
// shaded (ablation_panel.cc; the report's stored IR diffs).
void DrawUnifiedDiffText(const char* id, const std::string& text);
// "computing…" with a spinner-like elapsed time.
void DrawComputing(const char* what);
// A small coloured badge ("changed", "12.3 ms") on the current line.
void Badge(const char* text, const ImVec4& color);

}  // namespace passlab::gui

#endif  // PASSLAB_GUI_PANELS_H_
