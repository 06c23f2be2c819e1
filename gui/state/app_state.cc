#include "gui/state/app_state.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/strings/str_format.h"
#include "core/backend/compiler.h"
#include "core/eval/arguments.h"
#include "core/eval/random_inputs.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/pass/module_fingerprint.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"
#include "core/verify/shape_inference.h"
#include "models/model_registry.h"
#include "passes/autotune/library_call_autotuner.h"
#include "analysis/kernel_estimates.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"

namespace passlab::gui {
namespace {

constexpr size_t kMaxRecentFiles = 10;

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Counts runs for the progress bar and stops the pipeline when cancelled.
class ProgressObserver : public PassObserver {
 public:
  explicit ProgressObserver(JobProgress& progress) : progress_(progress) {}
  absl::Status BeforePass(const PassRunInfo& info, const HloModule&) override {
    if (progress_.cancel) return absl::CancelledError("compile cancelled");
    progress_.SetStage(StrCat(info.pass_name, " (@", info.occurrence_id, ")"));
    return absl::OkStatus();
  }
  absl::Status AfterPass(const PassRunInfo&, const HloModule&, bool, uint64_t, uint64_t,
                         const PassCounters&) override {
    ++progress_.done;
    return absl::OkStatus();
  }
  void PassSkipped(const PassRunInfo&) override { ++progress_.done; }

 private:
  JobProgress& progress_;
};

// Verifies the module after every run that changed it; the first failure
// stops the pipeline and is blamed on that occurrence.
class VerifyObserver : public PassObserver {
 public:
  absl::Status AfterPass(const PassRunInfo& info, const HloModule& module, bool, uint64_t before,
                         uint64_t after, const PassCounters&) override {
    if (before == after) return absl::OkStatus();
    absl::Status s = VerifyModule(module);
    if (s.ok()) return s;
    failed_occurrence = info.occurrence_id;
    return absl::FailedPreconditionError(StrCat("verifier failed after ", info.pass_name, " (@",
                                                info.occurrence_id, " in ", info.pipeline_path,
                                                "): ", s.message()));
  }
  int64_t failed_occurrence = -1;
};

std::string ModelLabel(const std::string& name, const ModelOptions& o) {
  std::vector<std::string> parts;
  if (o.batch) parts.push_back(StrCat("batch ", *o.batch));
  if (o.image_size) parts.push_back(StrCat("image ", *o.image_size));
  if (o.depth) parts.push_back(StrCat("depth ", *o.depth));
  if (o.width) parts.push_back(StrCat("width ", *o.width));
  if (o.seq_len) parts.push_back(StrCat("seq ", *o.seq_len));
  if (o.inference) parts.push_back("inference");
  return parts.empty() ? name : StrCat(name, " (", Join(parts, ", "), ")");
}

absl::StatusOr<std::shared_ptr<const LoadedModule>> Finish(SourceState source, std::unique_ptr<HloModule> module) {
  auto loaded = std::make_shared<LoadedModule>();
  loaded->source = std::move(source);
  loaded->text = std::make_shared<const std::string>(PrintModule(*module));
  loaded->instruction_count = module->instruction_count();
  loaded->fingerprint = ModuleFingerprint(*module);
  loaded->module = std::move(module);
  return std::shared_ptr<const LoadedModule>(std::move(loaded));
}

void LoadRecentFiles(AppState& state) {
  if (state.recent_files_path.empty()) return;
  std::ifstream in(state.recent_files_path);
  std::string line;
  while (std::getline(in, line) && state.recent_files.size() < kMaxRecentFiles) {
    if (!line.empty()) state.recent_files.push_back(line);
  }
}

void RememberRecentFile(AppState& state, const std::string& path) {
  std::error_code ec;
  std::string absolute = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) absolute = path;
  auto& r = state.recent_files;
  r.erase(std::remove(r.begin(), r.end(), absolute), r.end());
  r.insert(r.begin(), absolute);
  if (r.size() > kMaxRecentFiles) r.resize(kMaxRecentFiles);
  if (state.recent_files_path.empty()) return;
  std::filesystem::create_directories(std::filesystem::path(state.recent_files_path).parent_path(), ec);
  std::ofstream out(state.recent_files_path);
  for (const std::string& f : r) out << f << "\n";
}

void BuildGroups(AppState& state, std::string_view root_name) {
  state.groups.clear();
  state.groups.push_back({std::string(root_name), std::string(root_name), -1, {}});
  std::map<std::string, int64_t> by_path = {{std::string(root_name), 0}};
  for (const PassOccurrence& occ : state.occurrences) {
    int64_t parent = 0;
    std::string path;
    for (std::string_view part : SplitAny(occ.pipeline_path, "/")) {
      path = path.empty() ? std::string(part) : StrCat(path, "/", part);
      auto it = by_path.find(path);
      if (it == by_path.end()) {
        int64_t index = static_cast<int64_t>(state.groups.size());
        state.groups.push_back({std::string(part), path, parent, {}});
        state.groups[parent].items.push_back({true, index});
        it = by_path.emplace(path, index).first;
      }
      parent = it->second;
    }
    state.groups[parent].items.push_back({false, occ.id});
  }
}

std::shared_ptr<const PipelineResult> Summarize(std::shared_ptr<PassRecorder> recorder, size_t occurrence_count,
                                                uint64_t input_fingerprint, int64_t verifier_failed_id) {
  auto result = std::make_shared<PipelineResult>();
  result->occurrences.resize(occurrence_count);
  std::vector<char> seen(occurrence_count, 0);
  uint64_t current = input_fingerprint;
  for (const PassRunRecord& run : recorder->runs()) {
    const int64_t id = run.info.occurrence_id;
    if (id < 0 || id >= static_cast<int64_t>(occurrence_count)) continue;
    OccurrenceResult& o = result->occurrences[id];
    if (!seen[id]) {
      seen[id] = 1;
      o.fingerprint_before = current;
    }
    switch (run.outcome) {
      case PassRunRecord::Outcome::kRan:
        ++o.runs;
        o.total_ms += run.wall_ms;
        if (run.changed) ++o.changed_runs;
        o.delta_instructions += run.instructions_after - run.instructions_before;
        for (const auto& [op, d] : run.opcode_delta) o.opcode_delta[op] += d;
        for (const auto& [c, n] : run.counters) o.counters[c] += n;
        o.run_list.push_back({run.info.iteration, run.changed, run.wall_ms,
                              run.fingerprint_before != 0 ? run.fingerprint_before : current,
                              run.fingerprint_after != 0 ? run.fingerprint_after : current});
        if (run.fingerprint_after != 0) current = run.fingerprint_after;
        result->total_ms += run.wall_ms;
        break;
      case PassRunRecord::Outcome::kSkipped:
        ++o.skipped_runs;
        break;
      case PassRunRecord::Outcome::kFailed:
        o.failed = true;
        o.error = run.error;
        break;
    }
    o.fingerprint_after = current;
  }
  for (auto it = result->occurrences.begin(); it != result->occurrences.end(); ++it) {
    std::erase_if(it->opcode_delta, [](const auto& kv) { return kv.second == 0; });
  }
  if (verifier_failed_id >= 0 && verifier_failed_id < static_cast<int64_t>(occurrence_count)) {
    result->occurrences[verifier_failed_id].verifier_failed = true;
  }
  result->fixed_points = recorder->fixed_points();
  result->input_fingerprint = input_fingerprint;
  result->output_fingerprint = current;
  result->recorder = std::move(recorder);
  return result;
}

template <typename T>
bool Running(const JobPtr<T>& job) {
  return job != nullptr && !job->done();
}

// The backend session of a compile or a run: the run device and threads,
// the pass options, and the window's autotune cache and timer.
backend::Session SessionFor(const AppState& state) {
  backend::Session session;
  session.device = state.run_settings.device;
  session.threads = state.run_settings.threads;
  session.pass_options = state.pass_options;
  session.autotune_cache = state.autotune_cache;
  session.autotune_timer = state.autotune_timer;
  return session;
}

}  // namespace

int64_t OccurrenceResult::FirstChangedRun() const {
  for (size_t i = 0; i < run_list.size(); ++i) {
    if (run_list[i].fingerprint_before != run_list[i].fingerprint_after) return static_cast<int64_t>(i);
  }
  return run_list.empty() ? -1 : 0;
}

std::shared_ptr<const std::string> PipelineResult::Text(uint64_t fingerprint) const {
  if (recorder == nullptr) return nullptr;
  const std::string& text = recorder->Snapshot(fingerprint);
  if (text.empty()) return nullptr;
  // Aliases the recorder: the text lives as long as any holder.
  return std::shared_ptr<const std::string>(recorder, &text);
}

void InitAppState(AppState& state, std::string recent_files_path) {
  state.start_time_s = NowSeconds();
  state.recent_files_path = std::move(recent_files_path);
  LoadRecentFiles(state);
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline = BuildNamedPipeline(state.pipeline_name);
  if (!pipeline.ok()) {
    Log(state, LogLevel::kError, "pipeline", std::string(pipeline.status().message()));
    return;
  }
  state.occurrences = (*pipeline)->Occurrences();
  state.enabled.assign(state.occurrences.size(), 1);
  BuildGroups(state, (*pipeline)->name());
}

bool SetPipeline(AppState& state, const std::string& name) {
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline = BuildNamedPipeline(name);
  if (!pipeline.ok()) {
    Log(state, LogLevel::kError, "pipeline", std::string(pipeline.status().message()));
    return false;
  }
  if (Running(state.compile_job)) state.compile_job->Cancel();
  state.pipeline_name = name;
  state.occurrences = (*pipeline)->Occurrences();
  state.enabled.assign(state.occurrences.size(), 1);
  BuildGroups(state, (*pipeline)->name());
  state.pipeline_result = nullptr;
  state.selected_occurrence = -1;
  state.selected_run = -1;
  Log(state, LogLevel::kInfo, "pipeline",
      StrCat("'", (*pipeline)->name(), "': ", state.occurrences.size(), " occurrences"));
  if (state.auto_compile) StartCompile(state);
  return true;
}

void Log(AppState& state, LogLevel level, std::string where, std::string message) {
  state.log.push_back({level, std::move(where), std::move(message), NowSeconds() - state.start_time_s});
}

void LoadFile(AppState& state, const std::string& path) {
  SourceState source;
  source.kind = SourceState::Kind::kFile;
  source.path = path;
  source.label = std::filesystem::path(path).filename().string();
  state.source = source;
  state.load_job = Job<std::shared_ptr<const LoadedModule>>::Start(
      StrCat("load ", path), [source](JobProgress& p) -> absl::StatusOr<std::shared_ptr<const LoadedModule>> {
        p.SetStage(StrCat("reading ", source.path));
        std::ifstream in(source.path, std::ios::binary);
        if (!in) return absl::NotFoundError(StrCat(source.path, ": cannot open file"));
        std::stringstream ss;
        ss << in.rdbuf();
        p.SetStage(StrCat("parsing ", source.path));
        ParseOptions options;
        options.infer_shape = InferInstructionShape;  // XLA lets instructions omit shapes
        ASSIGN_OR_RETURN(std::unique_ptr<HloModule> m, ParseHloModule(ss.str(), source.path, options));
        return Finish(source, std::move(m));
      });
  RememberRecentFile(state, path);
}

void LoadModel(AppState& state, const std::string& name, const ModelOptions& options) {
  SourceState source;
  source.kind = SourceState::Kind::kModel;
  source.model = name;
  source.model_options = options;
  source.label = ModelLabel(name, options);
  state.source = source;
  state.load_job = Job<std::shared_ptr<const LoadedModule>>::Start(
      StrCat("build ", name), [source](JobProgress& p) -> absl::StatusOr<std::shared_ptr<const LoadedModule>> {
        p.SetStage(StrCat("building model ", source.label));
        ASSIGN_OR_RETURN(std::unique_ptr<HloModule> m, BuildModel(source.model, source.model_options));
        return Finish(source, std::move(m));
      });
}

void SetOccurrenceEnabled(AppState& state, int64_t id, bool enabled) {
  if (id < 0 || id >= static_cast<int64_t>(state.enabled.size())) return;
  if (static_cast<bool>(state.enabled[id]) == enabled) return;
  state.enabled[id] = enabled;
  if (state.auto_compile) StartCompile(state);
}

void SetPassEnabled(AppState& state, std::string_view pass_name, bool enabled) {
  bool any = false;
  for (const PassOccurrence& o : state.occurrences) {
    if (o.pass_name == pass_name && static_cast<bool>(state.enabled[o.id]) != enabled) {
      state.enabled[o.id] = enabled;
      any = true;
    }
  }
  if (any && state.auto_compile) StartCompile(state);
}

void ApplyPreset(AppState& state, PassPreset preset) {
  for (const PassOccurrence& o : state.occurrences) {
    const PassRegistryEntry* e = FindRegisteredPass(o.pass_name);
    switch (preset) {
      case PassPreset::kAll: state.enabled[o.id] = 1; break;
      case PassPreset::kNone: state.enabled[o.id] = 0; break;
      case PassPreset::kRequiredOnly: state.enabled[o.id] = e != nullptr && e->required; break;
    }
  }
  if (state.auto_compile) StartCompile(state);
}

bool PassFullyEnabled(const AppState& state, std::string_view pass_name) {
  for (const PassOccurrence& o : state.occurrences) {
    if (o.pass_name == pass_name && !state.enabled[o.id]) return false;
  }
  return true;
}

std::string DisableFilter(const AppState& state) {
  // Pass names in first-occurrence order; a name when every occurrence is
  // off, else the ids of the ones that are.
  std::vector<std::string> names;
  std::map<std::string, std::pair<int64_t, int64_t>> counts;  // name -> (off, total)
  for (const PassOccurrence& o : state.occurrences) {
    auto [it, inserted] = counts.try_emplace(o.pass_name, 0, 0);
    if (inserted) names.push_back(o.pass_name);
    ++it->second.second;
    if (!state.enabled[o.id]) ++it->second.first;
  }
  std::vector<std::string> terms;
  for (const std::string& name : names) {
    auto [off, total] = counts[name];
    if (off == 0) continue;
    if (off == total) {
      terms.push_back(name);
      continue;
    }
    for (const PassOccurrence& o : state.occurrences) {
      if (o.pass_name == name && !state.enabled[o.id]) terms.push_back(StrCat("@", o.id));
    }
  }
  return Join(terms, ",");
}

void StartCompile(AppState& state) {
  if (state.loaded == nullptr) return;
  if (Running(state.compile_job)) state.compile_job->Cancel();
  std::shared_ptr<const LoadedModule> loaded = state.loaded;
  const std::string pipeline_name = state.pipeline_name;
  const std::string disable = DisableFilter(state);
  const bool verify_each = state.verify_each;
  const backend::Session session = SessionFor(state);
  const size_t occurrence_count = state.occurrences.size();
  state.compile_job = Job<std::shared_ptr<const PipelineResult>>::Start(
      "compile", [=](JobProgress& p) -> absl::StatusOr<std::shared_ptr<const PipelineResult>> {
        p.SetStage("cloning the module");
        p.total = static_cast<int64_t>(occurrence_count);
        std::shared_ptr<HloModule> module = loaded->module->Clone();
        ASSIGN_OR_RETURN(std::unique_ptr<backend::Compiler> compiler, backend::CreateCompiler(session));
        auto recorder = std::make_shared<PassRecorder>();
        VerifyObserver verify;
        ProgressObserver progress(p);
        backend::OptimizeOptions options{.pipeline = pipeline_name, .disable = disable};
        options.observers.push_back(recorder.get());
        if (verify_each) options.observers.push_back(&verify);
        options.observers.push_back(&progress);
        const uint64_t input_fingerprint = ModuleFingerprint(*module);
        const int64_t instructions_before = module->instruction_count();
        absl::Status ran = compiler->Optimize(*module, options);
        auto result = std::const_pointer_cast<PipelineResult>(
            Summarize(recorder, occurrence_count, input_fingerprint, verify.failed_occurrence));
        result->instructions_before = instructions_before;
        result->instructions_after = module->instruction_count();
        result->disable_filter = disable;
        result->status = ran;
        if (ran.ok()) result->optimized = std::move(module);
        return std::shared_ptr<const PipelineResult>(result);
      });
}

void SelectOccurrence(AppState& state, int64_t id) {
  if (id < -1 || id >= static_cast<int64_t>(state.occurrences.size())) return;
  state.selected_occurrence = id;
  state.selected_run = -1;
  if (id >= 0 && state.pipeline_result != nullptr) {
    state.selected_run = state.pipeline_result->occurrences[id].FirstChangedRun();
  }
}

void SelectRun(AppState& state, int64_t run) {
  if (state.selected_occurrence < 0 || state.pipeline_result == nullptr) return;
  const OccurrenceResult& o = state.pipeline_result->occurrences[state.selected_occurrence];
  if (run < -1 || run >= static_cast<int64_t>(o.run_list.size())) return;
  state.selected_run = run;
}

std::pair<uint64_t, uint64_t> SelectedFingerprints(const AppState& state) {
  if (state.selected_occurrence < 0 || state.pipeline_result == nullptr) return {0, 0};
  const OccurrenceResult& o = state.pipeline_result->occurrences[state.selected_occurrence];
  if (state.selected_run >= 0 && state.selected_run < static_cast<int64_t>(o.run_list.size())) {
    const OccurrenceRun& r = o.run_list[state.selected_run];
    return {r.fingerprint_before, r.fingerprint_after};
  }
  return {o.fingerprint_before, o.fingerprint_after};
}

bool IsRunDevice(std::string_view device) {
  return std::find(kRunDevices.begin(), kRunDevices.end(), device) != kRunDevices.end();
}

void SetRunDevice(AppState& state, const std::string& device) {
  if (!IsRunDevice(device)) {
    Log(state, LogLevel::kError, "run", StrCat("unknown device '", device, "' (expected cpu or cuda)"));
    return;
  }
  state.run_settings.device = device;
  auto timer_device = [&state] {
    return state.autotune_timer.has_value() ? state.autotune_timer->device : std::string("cpu");
  };
  const std::string before = timer_device();
  backend::Session session = SessionFor(state);
  if (absl::Status s = backend::UseDeviceAutotuning(session); !s.ok()) {
    Log(state, LogLevel::kWarning, "autotune",
        StrCat("the algorithm pickers keep timing on ", before, ": ", s.message()));
  } else {
    state.autotune_timer = std::move(session.autotune_timer);
  }
  const std::string after = timer_device();
  if (after == before) return;
  Log(state, LogLevel::kInfo, "autotune",
      StrCat("the algorithm pickers now time on ", after, state.loaded != nullptr ? "; recompiling" : ""));
  StartCompile(state);
}

void StartRun(AppState& state) {
  if (state.pipeline_result == nullptr || state.pipeline_result->optimized == nullptr) {
    Log(state, LogLevel::kWarning, "run", "nothing to run: compile a module first (the last compile failed or none ran)");
    return;
  }
  if (!IsRunDevice(state.run_settings.device)) {
    Log(state, LogLevel::kError, "run", StrCat("unknown device '", state.run_settings.device, "' (expected cpu or cuda)"));
    return;
  }
  if (Running(state.run_job)) return;
  std::shared_ptr<const HloModule> module = state.pipeline_result->optimized;
  const RunSettings settings = state.run_settings;
  const backend::Session session = SessionFor(state);
  state.run_job = Job<std::shared_ptr<const RunResult>>::Start(
      "run", [module, settings, session](JobProgress& p) -> absl::StatusOr<std::shared_ptr<const RunResult>> {
        p.SetStage("making inputs");
        ASSIGN_OR_RETURN(std::vector<Literal> args, ResolveArguments(
            *module->entry_computation(), ArgumentSource{.dir = settings.args_dir, .seed = settings.seed}));
        auto r = std::make_shared<RunResult>();
        r->module = module;
        r->device = settings.device;
        const bool cuda = settings.device != "cpu";
        p.SetStage(cuda ? "compiling kernels and running on cuda" : "compiling kernels and running");
        ASSIGN_OR_RETURN(std::unique_ptr<backend::Compiler> compiler, backend::CreateCompiler(session));
        absl::StatusOr<backend::ProfileResult> profile = backend::CompileAndProfile(
            *compiler, *module, args, {.warmup = settings.warmup, .steps = settings.repeats});
        if (!profile.ok()) {
          // Errors name the device ("cuda: compile: no CUDA driver ...").
          if (!cuda) return profile.status();
          return absl::Status(profile.status().code(), StrCat(settings.device, ": ", profile.status().message()));
        }
        r->device_description = profile->device;
        if (cuda) r->traced_wall_ms_median = Median(profile->traced_wall_ms);
        r->kernel_ms_median = Median(profile->kernel_ms);
        r->wall_ms_median = Median(profile->wall_ms);
        r->profile = std::move(*profile);
        // Priority fusion's cost model beside each measured kernel.
        absl::StatusOr<std::optional<DeviceDescription>> cost =
            CostModelDevice("auto", settings.device == "cuda" ? r->device_description : "");
        if (cost.ok() && cost->has_value()) {
          AddCostModelEstimates(*module, **cost, r->profile.summary);
          r->cost_model = (*cost)->name;
        }
        return std::shared_ptr<const RunResult>(r);
      });
}

std::vector<std::string> EmitterCandidates(const AppState& state) {
  std::vector<std::string> out;
  if (state.pipeline_result == nullptr || state.pipeline_result->optimized == nullptr) return out;
  for (const HloComputation* c : state.pipeline_result->optimized->MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (const HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() == HloOpcode::kParameter || inst->opcode() == HloOpcode::kConstant) continue;
      if (CpuKernelCompiler::CanCompile(*inst)) out.push_back(inst->name());
    }
  }
  return out;
}

void StartEmitter(AppState& state, const std::string& instruction_name) {
  if (state.pipeline_result == nullptr || state.pipeline_result->optimized == nullptr) return;
  std::shared_ptr<const HloModule> module = state.pipeline_result->optimized;
  const HloInstruction* inst = nullptr;
  for (const HloComputation* c : module->computations()) {
    if (c->IsFusionComputation()) continue;
    if ((inst = c->GetInstructionWithName(instruction_name)) != nullptr) break;
  }
  if (inst == nullptr) {
    Log(state, LogLevel::kError, "emitter", StrCat("no instruction '", instruction_name, "' in the optimized module"));
    return;
  }
  state.emitter_kernel = instruction_name;
  state.selected_emitter_pass = 0;
  state.emitter_job = Job<std::shared_ptr<const EmitterResult>>::Start(
      StrCat("emit ", instruction_name),
      [module, inst](JobProgress& p) -> absl::StatusOr<std::shared_ptr<const EmitterResult>> {
        auto r = std::make_shared<EmitterResult>();
        r->kernel = inst->name();
        r->hlo = PrintInstruction(*inst);
        if (inst->opcode() == HloOpcode::kFusion) {
          r->hlo = StrCat(PrintComputation(*inst->fused_instructions_computation()), "\n\n", r->hlo);
        }
        p.SetStage(StrCat("compiling ", inst->name()));
        CpuCompileOptions options;
        options.use_cache = false;  // the emitter pipeline must run to be observed
        options.observer_wants_text = true;
        options.observer = [&](const EmitterPassSnapshot& s) { r->passes.push_back(s); };
        absl::StatusOr<std::unique_ptr<CompiledKernel>> k = CpuKernelCompiler(options).Compile(*inst);
        if (!k.ok()) {
          return absl::Status(k.status().code(), StrCat("emitter for ", inst->name(), ": ", k.status().message()));
        }
        return std::shared_ptr<const EmitterResult>(r);
      });
}

namespace {

// Compares the open report with compared_dirs (none: no comparison); an
// error is logged and returns false.
bool UpdateAblationComparison(AppState& state) {
  AblationState& a = state.ablation;
  if (a.report == nullptr || a.compared_dirs.empty()) {
    a.comparison = nullptr;
    return true;
  }
  std::vector<std::string> dirs = {a.report_dir};
  dirs.insert(dirs.end(), a.compared_dirs.begin(), a.compared_dirs.end());
  absl::StatusOr<AblationComparison> c = LoadAblationComparison(dirs);
  if (!c.ok()) {
    Log(state, LogLevel::kError, "ablation compare", std::string(c.status().message()));
    a.comparison = nullptr;
    return false;
  }
  a.comparison = std::make_shared<const AblationComparison>(std::move(*c));
  return true;
}

// The job compiling the open report's baseline (null) or a variant again,
// started on first use.
const JobPtr<std::shared_ptr<const HloModule>>& RecompiledSweepModule(AppState& state,
                                                                      const AblationVariant* variant) {
  AblationState& a = state.ablation;
  auto& job = a.recompiled[StrCat(a.report_dir, "\n", variant == nullptr ? "" : variant->name)];
  if (job == nullptr) {
    std::shared_ptr<const AblationReport> report = a.report;
    std::optional<AblationVariant> v;
    if (variant != nullptr) v = *variant;
    job = Job<std::shared_ptr<const HloModule>>::Start(
        StrCat("recompile ", variant == nullptr ? "baseline" : variant->name),
        [report, v](JobProgress& p) { return RecompileSweepModule(*report, v ? &*v : nullptr, &p); });
  }
  return job;
}

// Fills kernel_hlo once both modules of the selection are compiled.
void UpdateAblationKernelHlo(AppState& state) {
  AblationState& a = state.ablation;
  if (a.report == nullptr || a.selected_kernel.empty() || a.selected_variant < 0) return;
  const AblationVariant& variant = a.report->variants[a.selected_variant];
  if (a.kernel_hlo != nullptr && a.kernel_hlo->variant == variant.name && a.kernel_hlo->kernel == a.selected_kernel) {
    return;
  }
  const auto& base_job = RecompiledSweepModule(state, nullptr);
  const auto& variant_job = RecompiledSweepModule(state, &variant);
  if (!base_job->done() || !variant_job->done()) return;
  auto k = std::make_shared<AblationKernelHlo>();
  k->variant = variant.name;
  k->kernel = a.selected_kernel;
  auto fill = [&](const JobPtr<std::shared_ptr<const HloModule>>& job, std::string& hlo, std::string& note,
                  const std::string& which) {
    if (!job->result().ok()) {
      note = std::string(job->result().status().message());
      return;
    }
    hlo = KernelHloText(**job->result(), k->kernel);
    if (hlo.empty()) note = StrCat("no kernel '", k->kernel, "' in ", which, "'s optimized module");
  };
  fill(base_job, k->baseline_hlo, k->baseline_note, "the baseline");
  fill(variant_job, k->variant_hlo, k->variant_note, StrCat("'", variant.name, "'"));
  for (const std::string* note : {&k->baseline_note, &k->variant_note}) {
    if (!note->empty() && note->find("no kernel") != 0) Log(state, LogLevel::kError, "ablation kernel HLO", *note);
  }
  auto lines = [](const std::string& text) { return std::count(text.begin(), text.end(), '\n') + 1; };
  Log(state, LogLevel::kInfo, "ablation",
      StrCat("kernel HLO of '", k->kernel, "': baseline ",
             k->baseline_hlo.empty() ? std::string("none") : StrCat(lines(k->baseline_hlo), " lines"), ", '",
             k->variant, "' ", k->variant_hlo.empty() ? std::string("none") : StrCat(lines(k->variant_hlo), " lines")));
  a.kernel_hlo = std::move(k);
}

}  // namespace

void OpenAblationReport(AppState& state, const std::string& directory) {
  absl::StatusOr<AblationReport> r = LoadAblationReport(directory);
  if (!r.ok()) {
    Log(state, LogLevel::kError, StrCat("ablation ", directory), std::string(r.status().message()));
    return;
  }
  state.ablation.report_dir = directory;
  state.ablation.report = std::make_shared<const AblationReport>(std::move(*r));
  state.ablation.selected_variant = -1;
  state.ablation.selected_ir_diff.clear();
  state.ablation.selected_kernel.clear();
  state.ablation.kernel_hlo = nullptr;
  state.ablation.recompiled.clear();  // the directory may hold another sweep now
  Log(state, LogLevel::kInfo, "ablation",
      StrCat("opened ", directory, ": ", state.ablation.report->variants.size(), " variants"));
  UpdateAblationComparison(state);
}

void OpenAnotherAblationReport(AppState& state, const std::string& directory) {
  AblationState& a = state.ablation;
  if (a.report == nullptr) {
    OpenAblationReport(state, directory);
    return;
  }
  if (directory == a.report_dir ||
      std::find(a.compared_dirs.begin(), a.compared_dirs.end(), directory) != a.compared_dirs.end()) {
    Log(state, LogLevel::kWarning, StrCat("ablation ", directory), "already open");
    return;
  }
  a.compared_dirs.push_back(directory);
  if (!UpdateAblationComparison(state)) {
    a.compared_dirs.pop_back();
    UpdateAblationComparison(state);
    return;
  }
  Log(state, LogLevel::kInfo, "ablation",
      StrCat("comparing ", a.compared_dirs.size() + 1, " reports: ", Join(a.comparison->labels, " | ")));
}

void CloseComparedAblationReport(AppState& state, int64_t index) {
  AblationState& a = state.ablation;
  if (index < 0 || index >= static_cast<int64_t>(a.compared_dirs.size())) return;
  a.compared_dirs.erase(a.compared_dirs.begin() + index);
  UpdateAblationComparison(state);
}

void SelectAblationVariant(AppState& state, int64_t index) {
  const AblationReport* report = state.ablation.report.get();
  if (report == nullptr || index < 0 || index >= static_cast<int64_t>(report->variants.size())) return;
  state.ablation.selected_variant = index;
  absl::StatusOr<std::string> diff = ReadVariantIrDiff(*report, report->variants[index]);
  if (!diff.ok()) {
    state.ablation.selected_ir_diff.clear();
    Log(state, LogLevel::kError, StrCat("ablation variant '", report->variants[index].name, "'"),
        std::string(diff.status().message()));
    return;
  }
  state.ablation.selected_ir_diff = std::move(*diff);
}

void SelectAblationHeatmapCell(AppState& state, int64_t row, int64_t column) {
  const AblationReport* report = state.ablation.report.get();
  if (report == nullptr || column < 0 || column >= static_cast<int64_t>(report->heatmap.columns.size())) return;
  const int64_t variant = HeatmapRowVariant(*report, row);
  if (variant < 0) return;
  SelectAblationVariant(state, variant);
  state.ablation.selected_kernel = report->heatmap.columns[column].kernel;
  state.ablation.kernel_hlo = nullptr;
  RecompiledSweepModule(state, nullptr);
  RecompiledSweepModule(state, &report->variants[variant]);
  UpdateAblationKernelHlo(state);
}

void StartAblationSweep(AppState& state, const std::string& passlab_binary) {
  AblationState& a = state.ablation;
  if (a.sweep != nullptr && a.sweep->running()) return;
  std::vector<std::string> args;
  for (std::string_view s : SplitAny(a.sweep_args, " ")) {
    if (!s.empty()) args.emplace_back(s);
  }
  a.sweep = std::make_unique<AblationSweep>();
  if (absl::Status s = a.sweep->Start(passlab_binary, args, a.sweep_out_dir); !s.ok()) {
    Log(state, LogLevel::kError, "ablation sweep", std::string(s.message()));
    a.sweep.reset();
    return;
  }
  Log(state, LogLevel::kInfo, "ablation sweep", StrCat("started: ", a.sweep->command_line()));
}

void CancelAblationSweep(AppState& state) {
  if (state.ablation.sweep == nullptr || !state.ablation.sweep->running()) return;
  state.ablation.sweep->Cancel();
  Log(state, LogLevel::kWarning, "ablation sweep", "cancelled");
}

void Poll(AppState& state) {
  if (state.load_job != nullptr && state.load_job->done()) {
    auto job = std::move(state.load_job);
    state.load_job = nullptr;
    if (!job->result().ok()) {
      Log(state, LogLevel::kError, StrCat("load ", state.source.label), std::string(job->result().status().message()));
    } else {
      state.loaded = *job->result();
      state.pipeline_result = nullptr;
      state.run_result = nullptr;
      state.run_status = absl::OkStatus();
      state.emitter_result = nullptr;
      state.selected_occurrence = -1;
      state.selected_kernel.clear();
      Log(state, LogLevel::kInfo, "load",
          StrCat(state.loaded->source.label, ": ", state.loaded->instruction_count, " instructions (",
                 absl::StrFormat("%.0f", job->seconds() * 1000), " ms)"));
      if (state.auto_compile) StartCompile(state);
    }
  }
  if (state.compile_job != nullptr && state.compile_job->done()) {
    auto job = std::move(state.compile_job);
    state.compile_job = nullptr;
    if (!job->result().ok()) {
      Log(state, LogLevel::kError, "pipeline", std::string(job->result().status().message()));
    } else {
      state.pipeline_result = *job->result();
      SelectOccurrence(state, state.selected_occurrence);  // its runs are new
      const PipelineResult& r = *state.pipeline_result;
      if (!r.status.ok() && !absl::IsCancelled(r.status)) {
        std::string where = "pipeline";
        for (size_t id = 0; id < r.occurrences.size(); ++id) {
          if (r.occurrences[id].failed || r.occurrences[id].verifier_failed) {
            where = StrCat("pipeline @", id, " ", state.occurrences[id].pass_name, " (",
                           state.occurrences[id].pipeline_path, ")");
            if (state.selected_occurrence < 0) SelectOccurrence(state, static_cast<int64_t>(id));
            break;
          }
        }
        Log(state, LogLevel::kError, where, std::string(r.status.message()));
      } else if (r.status.ok()) {
        int64_t changed = 0;
        for (const OccurrenceResult& o : r.occurrences) changed += o.changed() ? 1 : 0;
        Log(state, LogLevel::kInfo, "pipeline",
            StrCat(r.recorder->runs().size(), " runs, ", changed, " occurrences changed the module, ",
                   r.instructions_before, " -> ", r.instructions_after, " instructions, ",
                   absl::StrFormat("%.1f", r.total_ms), " ms",
                   r.disable_filter.empty() ? "" : StrCat(" (--disable ", r.disable_filter, ")")));
      }
    }
  }
  if (state.run_job != nullptr && state.run_job->done()) {
    auto job = std::move(state.run_job);
    state.run_job = nullptr;
    state.run_status = job->result().status();
    if (!job->result().ok()) {
      Log(state, LogLevel::kError, "run", std::string(job->result().status().message()));
    } else {
      state.run_result = *job->result();
      const RunResult& r = *state.run_result;
      Log(state, LogLevel::kInfo, "run",
          StrCat(r.device_description, ": ", r.profile.summary.rows.size(), " kernels; kernel time ",
                 absl::StrFormat("%.3f", r.kernel_ms_median), " ms/step, wall ",
                 absl::StrFormat("%.3f", r.wall_ms_median), " ms/step, compile ",
                 absl::StrFormat("%.0f", r.profile.compile_ms), " ms"));
    }
  }
  if (state.emitter_job != nullptr && state.emitter_job->done()) {
    auto job = std::move(state.emitter_job);
    state.emitter_job = nullptr;
    if (!job->result().ok()) {
      Log(state, LogLevel::kError, "emitter", std::string(job->result().status().message()));
    } else {
      state.emitter_result = *job->result();
    }
  }
  AblationState& a = state.ablation;
  UpdateAblationKernelHlo(state);
  if (a.sweep != nullptr) {
    const bool was_running = a.sweep->running();
    a.sweep->Poll();
    if (was_running && a.sweep->finished()) {
      if (a.sweep->exit_code() == 0) {
        Log(state, LogLevel::kInfo, "ablation sweep", StrCat("finished: ", a.sweep->out_dir()));
        OpenAblationReport(state, a.sweep->out_dir());
      } else {
        Log(state, LogLevel::kError, "ablation sweep",
            StrCat("exit code ", a.sweep->exit_code(), ": ", a.sweep->LogTail(600)));
      }
    }
  }
}

bool Busy(const AppState& state) {
  // A finished job counts until Poll has taken its result.
  if (state.load_job != nullptr || state.compile_job != nullptr || state.run_job != nullptr ||
      state.emitter_job != nullptr) {
    return true;
  }
  if (state.ablation.sweep != nullptr && state.ablation.sweep->running()) return true;
  for (const auto& [key, job] : state.ablation.recompiled) {
    if (Running(job)) return true;
  }
  for (const auto& [fp, job] : state.cache.texts) {
    if (Running(job)) return true;
  }
  for (const auto& [fps, job] : state.cache.diffs) {
    if (Running(job)) return true;
  }
  return false;
}

void WaitUntilIdle(AppState& state) {
  while (true) {
    Poll(state);
    if (!Busy(state)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::shared_ptr<const TextModel> TextFor(AppState& state, uint64_t fingerprint,
                                         std::shared_ptr<const std::string> text) {
  auto& job = state.cache.texts[fingerprint];
  if (job == nullptr) {
    if (text == nullptr) return nullptr;
    job = Job<std::shared_ptr<const TextModel>>::Start(
        "text", [text](JobProgress&) -> absl::StatusOr<std::shared_ptr<const TextModel>> {
          return BuildTextModel(text);
        });
  }
  return job->done() ? *job->result() : nullptr;
}

std::shared_ptr<const DiffModel> DiffFor(AppState& state, uint64_t before_fp, uint64_t after_fp,
                                         std::shared_ptr<const std::string> before,
                                         std::shared_ptr<const std::string> after, bool parse_hlo) {
  auto& job = state.cache.diffs[{before_fp, after_fp}];
  if (job == nullptr) {
    if (before == nullptr || after == nullptr) return nullptr;
    job = Job<std::shared_ptr<const DiffModel>>::Start(
        "diff", [before, after, parse_hlo](JobProgress&) -> absl::StatusOr<std::shared_ptr<const DiffModel>> {
          return BuildDiffModel(before, after, parse_hlo);
        });
  }
  return job->done() ? *job->result() : nullptr;
}

std::string KernelHlo(const RunResult& run, const std::string& instruction, const std::string& computation) {
  if (run.module == nullptr) return "";
  const HloComputation* c = run.module->GetComputationWithName(computation);
  std::vector<const HloComputation*> search;
  if (c != nullptr) search.push_back(c);
  for (const HloComputation* other : run.module->computations()) search.push_back(other);
  for (const HloComputation* comp : search) {
    const HloInstruction* inst = comp->GetInstructionWithName(instruction);
    if (inst == nullptr) continue;
    std::string text = PrintInstruction(*inst);
    if (inst->opcode() == HloOpcode::kFusion) {
      text = StrCat(PrintComputation(*inst->fused_instructions_computation()), "\n\n", text);
    }
    return text;
  }
  return "";
}

}  // namespace passlab::gui
