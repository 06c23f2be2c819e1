// The GUI's state in plain structs, and the state API the panels call and the
// tests drive without a window: load a file or a model, toggle passes and
// occurrences, compile (run the pipeline with a recorder), select an
// occurrence, run the optimized module on the CPU or CUDA backend, compile one
// kernel's emitter pipeline, open an ablation report or start a sweep.
//
// Heavy work runs on Jobs (worker threads publishing immutable results);
// Poll() — called once per frame on the UI thread — moves finished results
// into the state and logs errors with their location. Nothing here includes
// ImGui.
#ifndef PASSLAB_GUI_STATE_APP_STATE_H_
#define PASSLAB_GUI_STATE_APP_STATE_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "analysis/median.h"
#include "core/backend/executable.h"
#include "core/backend/session.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/ir/hlo_module.h"
#include "core/pass/hlo_pass_interface.h"
#include "core/pass/pass_recorder.h"
#include "gui/state/ablation.h"
#include "gui/state/job.h"
#include "gui/state/text_model.h"
#include "models/model_options.h"
#include "passes/registry.h"

namespace passlab::gui {

// ---- log ------------------------------------------------------------------

enum class LogLevel { kInfo, kWarning, kError };

struct LogEntry {
  LogLevel level = LogLevel::kInfo;
  std::string where;    // "pipeline @12 algsimp", "load model.hlo:3:7", "run"
  std::string message;
  double time_s = 0;    // since the state was created
};

// ---- input ----------------------------------------------------------------

struct SourceState {
  enum class Kind { kNone, kFile, kModel } kind = Kind::kNone;
  std::string path;   // kFile
  std::string model;  // kModel
  ModelOptions model_options;
  std::string label;  // "gelu.hlo", "resnet18 (batch 8)"
};

struct LoadedModule {
  SourceState source;
  std::shared_ptr<const HloModule> module;
  std::shared_ptr<const std::string> text;  // canonical text
  uint64_t fingerprint = 0;                 // ModuleFingerprint (the text cache key)
  int64_t instruction_count = 0;
};

// ---- pipeline -------------------------------------------------------------

// A sub-pipeline in the tree: its items are sub-pipelines and occurrences
// in pipeline order.
struct PipelineGroup {
  std::string name;
  std::string path;  // "gpu/optimization"
  int64_t parent = -1;
  struct Item {
    bool is_group = false;
    int64_t index = 0;  // group index or occurrence id
  };
  std::vector<Item> items;
};

// One run of an occurrence (inside a fixed point an occurrence runs once per
// iteration).
struct OccurrenceRun {
  int64_t iteration = 0;
  bool changed = false;
  double wall_ms = 0;
  uint64_t fingerprint_before = 0;
  uint64_t fingerprint_after = 0;
};

// What one occurrence did in the last compile (all its runs together).
struct OccurrenceResult {
  std::vector<OccurrenceRun> run_list;  // the runs that ran, in order
  int64_t runs = 0;  // > 1 inside fixed points
  int64_t changed_runs = 0;
  int64_t skipped_runs = 0;
  double total_ms = 0;
  int64_t delta_instructions = 0;
  std::map<std::string, int64_t> opcode_delta;
  std::map<std::string, int64_t> counters;
  bool failed = false;
  bool verifier_failed = false;
  std::string error;
  // The module before its first run and after its last (or, when it never
  // ran, the module at its position); other passes of a fixed point run in
  // between, so a diff of one run uses run_list.
  uint64_t fingerprint_before = 0;
  uint64_t fingerprint_after = 0;
  bool changed() const { return changed_runs > 0; }
  // The first run that changed the module (the run list's first run when
  // none did); -1 when it never ran.
  int64_t FirstChangedRun() const;
};

struct PipelineResult {
  std::shared_ptr<const PassRecorder> recorder;  // owns the snapshots
  std::vector<OccurrenceResult> occurrences;     // by occurrence id
  std::vector<FixedPointRecord> fixed_points;
  uint64_t input_fingerprint = 0;
  uint64_t output_fingerprint = 0;
  int64_t instructions_before = 0;
  int64_t instructions_after = 0;
  double total_ms = 0;
  std::string disable_filter;  // the CLI's --disable for this configuration
  absl::Status status;         // the failure, if any (results up to it are kept)
  std::shared_ptr<const HloModule> optimized;  // null when the pipeline failed
  // The snapshot text of a fingerprint (shared with the recorder's storage).
  std::shared_ptr<const std::string> Text(uint64_t fingerprint) const;
};

// ---- run (Kernels panel) ----------------------------------------------------

// The devices a run can target: the CPU backend, or the CUDA runtime with
// the GPU code generator's kernels, timed through CUPTI.
inline constexpr std::array<std::string_view, 2> kRunDevices = {"cpu", "cuda"};
bool IsRunDevice(std::string_view device);

struct RunSettings {
  std::string device = "cpu";  // one of kRunDevices
  int warmup = 1;
  int repeats = 5;
  int threads = 0;  // cpu only
  uint64_t seed = 1;
  // Real arguments: .npy files matched to parameters by number
  // (core/eval/arguments.h); empty: random ones from `seed`.
  std::string args_dir;
};

struct RunResult {
  std::shared_ptr<const HloModule> module;  // the optimized module that ran
  std::string device = "cpu";               // RunSettings::device of the run
  std::string device_description = "cpu";   // "cuda:0 (NVIDIA H100 ...)" on cuda
  // On cuda: records from CUPTI, kernel_ms the sum of device kernels per
  // step, memory.arena_bytes the device arena (the rest of memory is 0).
  backend::ProfileResult profile;
  double kernel_ms_median = 0;
  double wall_ms_median = 0;         // on cuda: of untraced steps
  double traced_wall_ms_median = 0;  // cuda: of the CUPTI-traced steps
  std::string cost_model;            // the device whose estimates the rows carry
};

// ---- emitter panel ----------------------------------------------------------

struct EmitterResult {
  std::string kernel;  // instruction name
  std::string hlo;     // the instruction (and its fused computation)
  std::vector<EmitterPassSnapshot> passes;  // with text, in order
};

// ---- ablation panel ---------------------------------------------------------

// A heatmap cell's kernel in the baseline and in the cell's variant: the HLO
// of each (the fused computation, then the fusion), from their modules
// compiled again from the sweep's manifest.
struct AblationKernelHlo {
  std::string variant;  // the variant's name
  std::string kernel;
  std::string baseline_hlo;  // "" when the module lacks it or did not compile
  std::string variant_hlo;
  std::string baseline_note;  // why one is empty ("removed in ...", a compile error)
  std::string variant_note;
};

struct AblationState {
  std::string report_dir;
  std::shared_ptr<const AblationReport> report;
  int64_t selected_variant = -1;
  std::string selected_ir_diff;  // text of the selected variant's IR diff
  std::string selected_kernel;   // a baseline kernel picked in the heatmap ("" none)
  float heatmap_cell = 16;       // the heatmap's cell size in pixels (the wheel zooms)
  // The selected kernel's HLO in the baseline and the variant; null while
  // their modules compile (or nothing is selected).
  std::shared_ptr<const AblationKernelHlo> kernel_hlo;
  // The sweep's modules compiled again, by "DIR\nVARIANT" ("DIR\n" the
  // baseline's); kept, so another cell of the same row is immediate.
  std::map<std::string, JobPtr<std::shared_ptr<const HloModule>>> recompiled;
  // Reports beside this one (the side-by-side view), and their comparison
  // with it (report_dir first); null with none.
  std::vector<std::string> compared_dirs;
  std::shared_ptr<const AblationComparison> comparison;
  std::unique_ptr<AblationSweep> sweep;
  std::string sweep_args = "--model mlp --repeats 3";  // what the panel's "Start" passes
  std::string sweep_out_dir = "/tmp/passlab-ablation";
};

// ---- caches -----------------------------------------------------------------

// Text and diff models by fingerprint(s), computed on jobs; the panels ask
// every frame and draw "computing..." until the job is done.
struct ViewCache {
  std::map<uint64_t, JobPtr<std::shared_ptr<const TextModel>>> texts;
  std::map<std::pair<uint64_t, uint64_t>, JobPtr<std::shared_ptr<const DiffModel>>> diffs;
};

// ---- the whole state --------------------------------------------------------

struct AppState {
  // Input.
  SourceState source;
  std::shared_ptr<const LoadedModule> loaded;
  JobPtr<std::shared_ptr<const LoadedModule>> load_job;
  std::vector<std::string> recent_files;  // most recent first
  std::string recent_files_path;          // where they persist ("" = nowhere)

  // Pipeline.
  std::string pipeline_name = "gpu";
  // --pass-option settings (XLA's option names), applied to every compile.
  PassOptionOverrides pass_options;
  std::vector<PassOccurrence> occurrences;  // by id
  std::vector<PipelineGroup> groups;        // groups[0] is the root
  std::vector<char> enabled;                // by occurrence id
  bool auto_compile = true;                 // compile after every load/toggle
  bool verify_each = true;                  // verifier after every changed run
  JobPtr<std::shared_ptr<const PipelineResult>> compile_job;
  std::shared_ptr<const PipelineResult> pipeline_result;
  int64_t selected_occurrence = -1;  // -1: the input module
  // Which run of the selected occurrence the IR panel diffs (index into its
  // run_list; -1: from before its first run to after its last).
  int64_t selected_run = -1;

  // Run.
  RunSettings run_settings;
  JobPtr<std::shared_ptr<const RunResult>> run_job;
  std::shared_ptr<const RunResult> run_result;  // the last run that succeeded
  absl::Status run_status;                      // of the last finished run
  // The backend session's autotuning settings, shared by every compile and
  // run of this window (never the process's): the algorithm pickers' cache,
  // and where they time (SetRunDevice; empty: on the host CPU).
  std::shared_ptr<AutotuneCache> autotune_cache = std::make_shared<AutotuneCache>();
  std::optional<AlgorithmTimer> autotune_timer;
  std::string selected_kernel;

  // Emitter.
  std::string emitter_kernel;
  JobPtr<std::shared_ptr<const EmitterResult>> emitter_job;
  std::shared_ptr<const EmitterResult> emitter_result;
  int64_t selected_emitter_pass = 0;

  AblationState ablation;
  ViewCache cache;
  std::vector<LogEntry> log;
  double start_time_s = 0;
};

// Sets up the pipeline tree (all passes enabled) and the log clock.
void InitAppState(AppState& state, std::string recent_files_path = "");

void Log(AppState& state, LogLevel level, std::string where, std::string message);

// Switches the pipeline the Pipeline panel shows and compiles with ("gpu",
// today's XLA:GPU; "gpu-2021", the seed era's; or a sub-pipeline): every
// occurrence enabled again, the selection cleared, a loaded module
// recompiled when auto-compile is on. An unknown name is logged and
// changes nothing; returns whether it switched.
bool SetPipeline(AppState& state, const std::string& name);

// Starts loading (on a job); the result lands on the next Poll after it is
// done, and then (with auto_compile) a compile starts.
void LoadFile(AppState& state, const std::string& path);
void LoadModel(AppState& state, const std::string& name, const ModelOptions& options);

// Toggles: one occurrence, every occurrence of a pass, or a preset.
void SetOccurrenceEnabled(AppState& state, int64_t id, bool enabled);
void SetPassEnabled(AppState& state, std::string_view pass_name, bool enabled);
enum class PassPreset { kAll, kNone, kRequiredOnly };
void ApplyPreset(AppState& state, PassPreset preset);
// The CLI's --disable list for the current toggles ("" when all are on):
// pass names that are off everywhere, @ids for single occurrences.
std::string DisableFilter(const AppState& state);
// Whether the pass (by name) is on in every / no occurrence.
bool PassFullyEnabled(const AppState& state, std::string_view pass_name);

// Runs the pipeline on the loaded module with the current toggles.
void StartCompile(AppState& state);
// -1 selects the input module. Selects the occurrence's first run that
// changed the module.
void SelectOccurrence(AppState& state, int64_t id);
// A run of the selected occurrence (-1: all its runs as one span).
void SelectRun(AppState& state, int64_t run);
// The module before and after what the selection shows (the selected run,
// or the occurrence's span); {0, 0} when nothing ran.
std::pair<uint64_t, uint64_t> SelectedFingerprints(const AppState& state);
// Chooses the Kernels panel's device. The algorithm pickers then time where
// the program will run, as `passlab run --device` does: cuda installs the
// device's timer (backend::UseDeviceAutotuning; without a device the reason is logged
// and they keep timing on the CPU), cpu the CPU's. When that changes the
// timer, the loaded module is recompiled, so that the optimized module's
// algorithm choices are the device's (a oneDNN choice is no cuDNN choice).
void SetRunDevice(AppState& state, const std::string& device);
// Compiles the optimized module for run_settings.device and times it. A
// device that cannot run (no CUDA driver or device, the cuda backend not
// built) fails the job with that message in the log.
void StartRun(AppState& state);
// Compiles one instruction of the optimized module, keeping its MLIR after
// every emitter pass.
void StartEmitter(AppState& state, const std::string& instruction_name);
// Instructions of the optimized module the CPU code generator compiles.
std::vector<std::string> EmitterCandidates(const AppState& state);

// Ablation: open a report directory or run `passlab ablate` next to `passlab`.
void OpenAblationReport(AppState& state, const std::string& directory);
void SelectAblationVariant(AppState& state, int64_t index);
// A heatmap cell (report->heatmap's row and column): selects its variant and
// kernel; out of range selects nothing.
// The cell's kernel HLO in the baseline and the variant is then computed
// (state.ablation.kernel_hlo; Busy until it is).
void SelectAblationHeatmapCell(AppState& state, int64_t row, int64_t column);
// Puts another report directory beside the open one (an error is logged and
// nothing changes); closes one of them again (index into compared_dirs).
void OpenAnotherAblationReport(AppState& state, const std::string& directory);
void CloseComparedAblationReport(AppState& state, int64_t index);
void StartAblationSweep(AppState& state, const std::string& passlab_binary);
void CancelAblationSweep(AppState& state);

// Moves finished jobs' results into the state; call once per frame.
void Poll(AppState& state);
// Whether any of the state's jobs is running.
bool Busy(const AppState& state);
// For tests and the screenshot mode: Poll until nothing is running (and the
// follow-up jobs, like auto-compile after load, are done too).
void WaitUntilIdle(AppState& state);

// The text model of a snapshot / the diff of two snapshots, started on first
// use; null until computed.
std::shared_ptr<const TextModel> TextFor(AppState& state, uint64_t fingerprint,
                                         std::shared_ptr<const std::string> text);
std::shared_ptr<const DiffModel> DiffFor(AppState& state, uint64_t before_fp, uint64_t after_fp,
                                         std::shared_ptr<const std::string> before,
                                         std::shared_ptr<const std::string> after, bool parse_hlo);

// The HLO of a kernel in the module that ran (the instruction, and its fused
// computation for fusions); empty when not found.
std::string KernelHlo(const RunResult& run, const std::string& instruction, const std::string& computation);

}  // namespace passlab::gui

#endif  // PASSLAB_GUI_STATE_APP_STATE_H_
