// passlab-gui: the desktop GUI (Dear ImGui + GLFW + OpenGL 3).
//
//   passlab-gui [FILE] [--model NAME] [--device cpu|cuda]
//   passlab-gui --screenshot out.png [--frames N] [--open FILE | --model NAME]
//               [--select-pass ID] [--panel NAME] [--run] [--device cpu|cuda] [--report DIR ...]
//               [--ablation-view NAME] [--heatmap-cell ROW,COLUMN] ...
//
// The screenshot mode renders headless (under Xvfb), waits until every job
// (load, compile, run, diffs) is done, renders N more frames and writes the
// last one as PNG. --scroll-frames N scrolls the IR view N frames and prints
// frame-time statistics (how the 50k-instruction measurement is taken).
#include <CLI/CLI.hpp>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb_image_write.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/ir/str_util.h"
#include "gui/panels.h"
#include "passes/pipelines/pipelines.h"

namespace passlab::gui {
namespace {

std::vector<std::string>& DroppedPaths() {
  static std::vector<std::string> paths;
  return paths;
}

void OnDrop(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) DroppedPaths().emplace_back(paths[i]);
}

std::string SelfDirectory() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

std::string RecentFilesPath() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/passlab/recent_files";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.config/passlab/recent_files";
  }
  return "";
}

void SetUpStyleAndFonts() {
  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0;
  s.ChildRounding = 4;
  s.FrameRounding = 3;
  s.GrabRounding = 3;
  s.TabRounding = 4;
  s.PopupRounding = 4;
  s.FramePadding = ImVec2(6, 3);
  s.ItemSpacing = ImVec2(8, 4);
  s.CellPadding = ImVec2(4, 1);
  s.IndentSpacing = 12;
  ImVec4* c = s.Colors;
  c[ImGuiCol_WindowBg] = ImVec4(0.11f, 0.12f, 0.14f, 1);
  c[ImGuiCol_ChildBg] = ImVec4(0.13f, 0.14f, 0.16f, 1);
  c[ImGuiCol_PopupBg] = ImVec4(0.14f, 0.15f, 0.18f, 0.98f);
  c[ImGuiCol_Border] = ImVec4(0.25f, 0.27f, 0.31f, 1);
  c[ImGuiCol_FrameBg] = ImVec4(0.19f, 0.20f, 0.24f, 1);
  c[ImGuiCol_Header] = ImVec4(0.22f, 0.36f, 0.58f, 0.75f);
  c[ImGuiCol_HeaderHovered] = ImVec4(0.26f, 0.42f, 0.66f, 0.8f);
  c[ImGuiCol_TableRowBgAlt] = ImVec4(1, 1, 1, 0.025f);
  c[ImGuiCol_TableHeaderBg] = ImVec4(0.17f, 0.18f, 0.21f, 1);
  c[ImGuiCol_MenuBarBg] = ImVec4(0.09f, 0.10f, 0.12f, 1);

  ImGuiIO& io = ImGui::GetIO();
  // Latin, Greek (Δ), punctuation (…, —), arrows and geometric shapes.
  static const ImWchar kRanges[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2000, 0x206F, 0x2190, 0x21FF, 0x25A0, 0x25FF, 0};
  for (const char* path : {"/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
                           "/usr/share/fonts/TTF/DejaVuSansMono.ttf"}) {
    if (std::filesystem::exists(path)) {
      io.Fonts->AddFontFromFileTTF(path, 14.0f, nullptr, kRanges);
      return;
    }
  }
  io.Fonts->AddFontDefault();  // without fonts-dejavu-core: ImGui's own font
}

struct Options {
  std::string file;
  std::string open;
  std::string model;
  std::string pipeline = "gpu";
  std::string screenshot;
  int frames = 3;
  std::string select_pass;
  std::string panel;
  bool run = false;
  std::string device = "cpu";
  std::string args_dir;
  bool no_compile = false;
  std::vector<std::string> reports;  // the first opened, the others beside it
  std::string ablation_view;
  std::string heatmap_cell;  // "ROW,COLUMN"
  std::string kernel;
  std::string emitter_pass;
  std::string ir_view = "side";
  std::string search;
  int scroll_frames = 0;
  int width = 1280;
  int height = 800;
  std::vector<std::string> pass_options;  // --pass-option PASS.OPTION=VALUE
  // --model's options, as `passlab --model` takes them (0 / "": default).
  int64_t batch = 0, image_size = 0, classes = 0, depth = 0, model_width = 0, seq_len = 0, heads = 0, vocab = 0;
  std::string dtype, layout;
  bool inference = false;
};

// The model options given, as ModelOptions; whether any was given.
bool ModelOptionsOf(const Options& o, ModelOptions& m) {
  auto set = [](int64_t v, std::optional<int64_t>& field) {
    if (v > 0) field = v;
    return v > 0;
  };
  bool any = set(o.batch, m.batch) | set(o.image_size, m.image_size) | set(o.classes, m.classes) |
             set(o.depth, m.depth) | set(o.model_width, m.width) | set(o.seq_len, m.seq_len) |
             set(o.heads, m.heads) | set(o.vocab, m.vocab);
  if (!o.dtype.empty()) m.dtype = *PrimitiveTypeFromName(o.dtype);
  if (!o.layout.empty()) m.layout = o.layout == "nchw" ? ImageLayout::kNchw : ImageLayout::kNhwc;
  m.inference = o.inference;
  return any || !o.dtype.empty() || !o.layout.empty() || o.inference;
}

// "@12", "12", "algsimp:1", or "algsimp": its first occurrence that ran in
// the last compile (a sub-pipeline may skip itself, e.g. spmd-partitioner
// on one partition), else its first.
int64_t FindOccurrence(const AppState& state, std::string_view text) {
  if (!text.empty() && text[0] == '@') text.remove_prefix(1);
  if (!text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(c); })) {
    return std::stoll(std::string(text));
  }
  std::string_view name = text;
  if (size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    name = text.substr(0, colon);
    const int64_t index = std::stoll(std::string(text.substr(colon + 1)));
    for (const PassOccurrence& o : state.occurrences) {
      if (o.pass_name == name && o.occurrence_index == index) return o.id;
    }
    return -2;
  }
  int64_t first = -2;
  for (const PassOccurrence& o : state.occurrences) {
    if (o.pass_name != name) continue;
    if (first == -2) first = o.id;
    const PipelineResult* r = state.pipeline_result.get();
    if (r != nullptr && o.id < static_cast<int64_t>(r->occurrences.size()) && r->occurrences[o.id].runs > 0) {
      return o.id;
    }
  }
  return first;
}

bool WritePng(const std::string& path, int width, int height) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  stbi_flip_vertically_on_write(1);
  stbi_write_png_compression_level = 9;  // screenshots go into docs/
  return stbi_write_png(path.c_str(), width, height, 3, pixels.data(), width * 3) != 0;
}

void PrintFrameStats(std::vector<float> ms, const char* what) {
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))]; };
  std::printf("frame times (%s, %zu frames): median %.2f ms, p95 %.2f ms, max %.2f ms\n", what, ms.size(), at(0.5),
              at(0.95), ms.back());
}

int Main(int argc, char** argv) {
  Options o;
  CLI::App app{"passlab-gui: toggle passes, read IR diffs, see kernels, run ablations"};
  app.add_option("file", o.file, "HLO text file to open");
  app.add_option("--open", o.open, "HLO text file to open (same as FILE)");
  app.add_option("--model", o.model, "Build this registered model (its options: --batch, --image-size, ...)");
  const char* model_group = "Model options (with --model, as passlab's)";
  app.add_option("--batch", o.batch, "Model: batch size")->group(model_group)->check(CLI::PositiveNumber);
  app.add_option("--image-size", o.image_size, "Model: image height = width (PINN: grid points per side)")
      ->group(model_group)
      ->check(CLI::PositiveNumber);
  app.add_option("--classes", o.classes, "Model: number of classes")->group(model_group)->check(CLI::PositiveNumber);
  app.add_option("--dtype", o.dtype, "Model: element type")->group(model_group)->check(CLI::IsMember({"f32", "bf16", "f64"}));
  app.add_option("--depth", o.depth, "Model: hidden layers (MLP, PINN)")->group(model_group)->check(CLI::PositiveNumber);
  app.add_option("--model-width", o.model_width, "Model: hidden width (ResNet: base width; --width is the window's)")
      ->group(model_group)
      ->check(CLI::PositiveNumber);
  app.add_option("--layout", o.layout, "Model: image layout")->group(model_group)->check(CLI::IsMember({"nhwc", "nchw"}));
  app.add_option("--seq-len", o.seq_len, "Model: sequence length")->group(model_group)->check(CLI::PositiveNumber);
  app.add_option("--heads", o.heads, "Model: attention heads")->group(model_group)->check(CLI::PositiveNumber);
  app.add_option("--vocab", o.vocab, "Model: vocabulary size")->group(model_group)->check(CLI::PositiveNumber);
  app.add_flag("--inference", o.inference, "Model: forward-only variant (ResNet)")->group(model_group);
  app.add_option("--pipeline", o.pipeline, "Pipeline: gpu (today's XLA:GPU, default) or gpu-2021 (seed 003's era)");
  app.add_option("--screenshot", o.screenshot, "Render headless, write the window as PNG and exit");
  app.add_option("--frames", o.frames, "Frames rendered after every job is done (screenshot mode)")->check(CLI::Range(1, 1000000));
  app.add_option("--select-pass", o.select_pass, "Select an occurrence: @ID, ID, NAME:N, or NAME (its first occurrence that ran)");
  app.add_option("--panel", o.panel, "Tab to show: ir, kernels, emitter, ablation");
  app.add_flag("--no-compile", o.no_compile, "Do not compile after loading (auto-compile off)");
  app.add_flag("--run", o.run, "Run the optimized module on --device (Kernels panel)");
  app.add_option("--args", o.args_dir, "Run on real arguments: a directory of .npy files by parameter number (see README)");
  app.add_option("--device", o.device, "Device the Kernels panel runs on: cpu or cuda (the panel's combo starts here)");
  app.add_option("--report,--ablation", o.reports,
                 "Open an ablation report directory (Ablation panel); repeated: the others beside the first "
                 "(Side by side, as passlab ablate --compare)");
  app.add_option("--ablation-view", o.ablation_view, "Ablation view: slowdowns, heatmap, compile-cost, compare")
      ->check(CLI::IsMember({"slowdowns", "heatmap", "compile-cost", "compare"}));
  app.add_option("--heatmap-cell", o.heatmap_cell,
                 "Select the heatmap cell ROW,COLUMN (0-based): its kernel's HLO in the baseline and the variant");
  app.add_option("--kernel", o.kernel, "Kernel to show in the Emitter/Kernels panels (default: the first/slowest)");
  app.add_option("--emitter-pass", o.emitter_pass, "Emitter pass to show (default: the first that changed the MLIR)");
  app.add_option("--ir-view", o.ir_view, "IR panel view: side, unified, module")->check(CLI::IsMember({"side", "unified", "module"}));
  app.add_option("--search", o.search, "Search text in the IR panel's module view");
  app.add_option("--scroll-frames", o.scroll_frames, "Scroll the IR view for N frames and print frame times");
  app.add_option("--pass-option", o.pass_options,
                 "Set a pass's option by XLA's name, PASS.OPTION=VALUE (repeatable), e.g. "
                 "algsimp.enable_dot_strength_reduction=false");
  app.add_option("--width", o.width, "Window width")->check(CLI::Range(320, 8192));
  app.add_option("--height", o.height, "Window height")->check(CLI::Range(240, 8192));
  CLI11_PARSE(app, argc, argv);
  if (!o.file.empty() && !o.open.empty()) {
    std::fprintf(stderr, "passlab-gui: error: give FILE or --open, not both\n");
    return 1;
  }
  if (o.open.empty()) o.open = o.file;
  Tab tab = Tab::kIr;
  if (!o.panel.empty() && !ParseTab(o.panel, tab)) {
    std::fprintf(stderr, "passlab-gui: error: unknown panel '%s' (ir, kernels, emitter, ablation)\n", o.panel.c_str());
    return 1;
  }
  // Checked here rather than by CLI11 so that a wrong device exits 2 with
  // the choices named, before any window opens.
  if (!IsRunDevice(o.device)) {
    std::fprintf(stderr, "passlab-gui: error: unknown device '%s' (cpu, cuda)\n", o.device.c_str());
    return 2;
  }
  // Checked before any window opens, like the device: an unknown pass,
  // option or value exits 2 naming it.
  ModelOptions model_options;
  if (ModelOptionsOf(o, model_options) && o.model.empty()) {
    std::fprintf(stderr, "passlab-gui: error: model options (--batch, --dtype, ...) need --model NAME\n");
    return 2;
  }
  if (absl::StatusOr<std::unique_ptr<HloPassPipeline>> p = BuildNamedPipeline(o.pipeline); !p.ok()) {
    std::fprintf(stderr, "passlab-gui: error: --pipeline: %s\n", std::string(p.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<PassOptionOverrides> pass_options = ParsePassOptionOverrides(o.pass_options);
  if (!pass_options.ok()) {
    std::fprintf(stderr, "passlab-gui: error: --pass-option: %s\n", std::string(pass_options.status().message()).c_str());
    return 2;
  }
  if ((!o.heatmap_cell.empty() || !o.ablation_view.empty()) && o.reports.empty()) {
    std::fprintf(stderr, "passlab-gui: error: --heatmap-cell and --ablation-view need --report DIR\n");
    return 2;
  }
  const bool headless = !o.screenshot.empty();

  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "passlab-gui: GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    std::fprintf(stderr, "passlab-gui: error: cannot initialize GLFW (no display? try xvfb-run -a)\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  GLFWwindow* window = glfwCreateWindow(o.width, o.height, "passlab", nullptr, nullptr);
  if (window == nullptr) {
    std::fprintf(stderr, "passlab-gui: error: cannot create an OpenGL 3.3 window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless ? 0 : 1);
  glfwSetDropCallback(window, OnDrop);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // the layout is fixed
  SetUpStyleAndFonts();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");

  AppState state;
  InitAppState(state, headless ? "" : RecentFilesPath());
  state.auto_compile = !o.no_compile;
  if (o.pipeline != state.pipeline_name) SetPipeline(state, o.pipeline);
  state.pass_options = *pass_options;
  if (!state.pass_options.empty()) {
    Log(state, LogLevel::kInfo, "pipeline", StrCat("pass options: ", FormatPassOptionOverrides(state.pass_options)));
  }
  SetRunDevice(state, o.device);
  state.run_settings.args_dir = o.args_dir;
  UiState ui;
  ui.passlab_binary = SelfDirectory() + "/passlab";
  ui.tab = tab;
  ui.tab_requested = true;
  ui.ir_mode = o.ir_view == "module" ? UiState::IrMode::kModule : UiState::IrMode::kDiff;
  ui.ir_diff.side_by_side = o.ir_view != "unified";
  ui.emitter_diff.side_by_side = o.ir_view != "unified";
  ui.ir_text.search = o.search;
  if (!o.open.empty()) LoadFile(state, o.open);
  if (!o.model.empty()) LoadModel(state, o.model, model_options);
  if (!o.reports.empty()) {
    OpenAblationReport(state, o.reports.front());
    ui.ablation_dir_input = o.reports.front();
    for (size_t i = 1; i < o.reports.size(); ++i) OpenAnotherAblationReport(state, o.reports[i]);
  }
  if (!o.ablation_view.empty()) {
    ParseAblationView(o.ablation_view, ui.ablation_view);
    ui.ablation_view_requested = true;
  }

  auto render = [&]() {
    const auto t0 = std::chrono::steady_clock::now();
    glfwPollEvents();
    Poll(state);
    if (!DroppedPaths().empty()) {
      LoadFile(state, DroppedPaths().front());
      DroppedPaths().clear();
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    DrawApp(state, ui);
    ImGui::Render();
    const auto t_built = std::chrono::steady_clock::now();
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    glViewport(0, 0, w, h);
    glClearColor(0.08f, 0.09f, 0.10f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    glFinish();
    const float ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ui.frame_ms.push_back(ms);
    ui.build_ms.push_back(std::chrono::duration<float, std::milli>(t_built - t0).count());
    if (ui.frame_ms.size() > 600) {
      ui.frame_ms.erase(ui.frame_ms.begin(), ui.frame_ms.begin() + 300);
      ui.build_ms.erase(ui.build_ms.begin(), ui.build_ms.begin() + 300);
    }
  };

  int exit_code = 0;
  if (headless) {
    // Everything the command line asked for, each after what it needs.
    WaitUntilIdle(state);
    if (!o.select_pass.empty()) {
      const int64_t id = FindOccurrence(state, o.select_pass);
      if (id < -1 || id >= static_cast<int64_t>(state.occurrences.size())) {
        std::fprintf(stderr, "passlab-gui: error: no pass occurrence '%s'\n", o.select_pass.c_str());
        exit_code = 1;
      }
      SelectOccurrence(state, id);
    }
    if (o.run) {
      StartRun(state);
      WaitUntilIdle(state);
      if (state.run_result != nullptr) {
        state.selected_kernel = o.kernel.empty() && !state.run_result->profile.summary.rows.empty()
                                    ? state.run_result->profile.summary.rows.front().name
                                    : o.kernel;
      }
    }
    if (tab == Tab::kEmitter) {
      std::vector<std::string> candidates = EmitterCandidates(state);
      std::string kernel = o.kernel;
      if (kernel.empty()) {
        // The candidate with the most emitter work: prefer fusions and reduces.
        for (const std::string& c : candidates) {
          if (c.find("fusion") != std::string::npos || c.find("reduce") != std::string::npos) {
            kernel = c;
            break;
          }
        }
        if (kernel.empty() && !candidates.empty()) kernel = candidates.front();
      }
      if (!kernel.empty()) {
        StartEmitter(state, kernel);
        WaitUntilIdle(state);
        // Show the first pass that changed the MLIR.
        if (state.emitter_result != nullptr) {
          const auto& passes = state.emitter_result->passes;
          for (size_t i = 0; i < passes.size(); ++i) {
            if (o.emitter_pass.empty() ? passes[i].before != passes[i].after : passes[i].pass_name == o.emitter_pass) {
              state.selected_emitter_pass = static_cast<int64_t>(i);
              break;
            }
          }
        }
      }
    }
    if (!o.reports.empty() && state.ablation.report != nullptr) {
      // The largest slowdown that has an IR diff (else the largest).
      const AblationReport& report = *state.ablation.report;
      std::vector<int64_t> order = VariantsBySlowdown(report);
      auto with_diff = std::find_if(order.begin(), order.end(),
                                    [&](int64_t i) { return !report.variants[i].ir_diff_path.empty(); });
      if (!order.empty()) SelectAblationVariant(state, with_diff != order.end() ? *with_diff : order.front());
      if (!o.heatmap_cell.empty()) {
        long long row = -1, column = -1;
        char rest = 0;
        if (std::sscanf(o.heatmap_cell.c_str(), "%lld,%lld%c", &row, &column, &rest) != 2 || row < 0 ||
            row >= static_cast<long long>(report.heatmap.rows.size()) || column < 0 ||
            column >= static_cast<long long>(report.heatmap.columns.size())) {
          std::fprintf(stderr, "passlab-gui: error: --heatmap-cell '%s': not ROW,COLUMN of the heatmap (%zu x %zu)\n",
                       o.heatmap_cell.c_str(), report.heatmap.rows.size(), report.heatmap.columns.size());
          exit_code = 1;
        } else {
          SelectAblationHeatmapCell(state, row, column);
          WaitUntilIdle(state);
        }
      }
    }
    // Render until the panels' own jobs (texts, diffs) are done, then N frames.
    int stable = 0;
    for (int rendered = 0; rendered < 2000 && stable < o.frames; ++rendered) {
      WaitUntilIdle(state);
      render();
      stable = Busy(state) ? 0 : stable + 1;
      if (stable < o.frames) glfwSwapBuffers(window);
    }
    std::vector<float> settle(ui.frame_ms.end() - std::min<size_t>(ui.frame_ms.size(), o.frames), ui.frame_ms.end());
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    if (!WritePng(o.screenshot, w, h)) {
      std::fprintf(stderr, "passlab-gui: error: cannot write '%s'\n", o.screenshot.c_str());
      exit_code = 1;
    } else {
      std::printf("wrote %s (%dx%d)\n", o.screenshot.c_str(), w, h);
    }
    glfwSwapBuffers(window);
    if (o.scroll_frames > 0) {
      // Scroll the IR view through the module: every frame jumps ~1/N of it.
      ui.frame_ms.clear();
      ui.build_ms.clear();
      std::shared_ptr<const TextModel> model;
      for (const auto& [fp, job] : state.cache.texts) {
        if (job->done() && job->result().ok() && (model == nullptr || (*job->result())->lines.size() > model->lines.size())) {
          model = *job->result();
        }
      }
      const int64_t lines = model != nullptr ? static_cast<int64_t>(model->lines.size()) : 0;
      for (int i = 0; i < o.scroll_frames; ++i) {
        if (lines > 0) ui.ir_text.scroll_to_line = (i * 7919) % lines;
        render();
        glfwSwapBuffers(window);
      }
      PrintFrameStats(ui.frame_ms, "IR view scrolling, whole frame");
      PrintFrameStats(ui.build_ms, "IR view scrolling, building the frame without GL");
    }
    PrintFrameStats(settle, "settled");
    for (const LogEntry& e : state.log) {
      std::printf("[%s] %s: %s\n", e.level == LogLevel::kError ? "error" : e.level == LogLevel::kWarning ? "warn" : "info",
                  e.where.c_str(), e.message.c_str());
    }
  } else {
    while (!glfwWindowShouldClose(window)) {
      render();
      glfwSwapBuffers(window);
      // Idle without work: wait for events (but wake up to poll jobs).
      if (!Busy(state)) glfwWaitEventsTimeout(0.25);
    }
  }
  // Jobs hold modules and compiled code: let them finish before tearing down.
  if (state.compile_job != nullptr) state.compile_job->Cancel();
  CancelAblationSweep(state);
  WaitForAllJobs(std::chrono::seconds(30));
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace
}  // namespace passlab::gui

int main(int argc, char** argv) { return passlab::gui::Main(argc, argv); }
