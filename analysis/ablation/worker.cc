#include "analysis/ablation/worker.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "analysis/ablation/compile_cost.h"
#include "analysis/ir_diff.h"
#include "core/backend/compiler.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/codegen/gpu_kernel_compiler.h"
#include "core/eval/arguments.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/pass/module_fingerprint.h"
#include "core/pass/pass_recorder.h"
#include "core/pass/verify_each_observer.h"
#include "core/runtime/chrome_trace.h"
#include "core/ir/status_macros.h"
#include "core/runtime/kernel_summary.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "nlohmann/json.hpp"
#include "passes/autotune/autotune_cache.h"
#include "passes/pipelines/pipelines.h"

namespace passlab {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Names the pass being run in the log, so that a crash inside a pass can be
// attributed to it by the runner (the last "pass" line before the signal).
// Also acts out an injected fault (kAblateFaultEnv) at the first pass.
// The fault kAblateFaultEnv injects into `variant` ("crash", "hang",
// "fail", "vanish"; empty: none).
std::string InjectedFault(const std::string& variant) {
  const char* spec = std::getenv(kAblateFaultEnv);
  if (spec == nullptr || variant.empty()) return "";
  std::string fault;
  for (std::string_view term : SplitAny(spec, ";")) {
    size_t colon = term.find(':');
    if (colon != std::string_view::npos && term.substr(colon + 1) == variant) fault = term.substr(0, colon);
  }
  return fault;
}

class ProgressObserver : public PassObserver {
 public:
  explicit ProgressObserver(const std::string& variant) : fault_(InjectedFault(variant)) {}

  absl::Status BeforePass(const PassRunInfo& info, const HloModule&) override {
    std::fprintf(stderr, "passlab-worker: pass %s (@%lld in %s)\n", info.pass_name.c_str(),
                 static_cast<long long>(info.occurrence_id), info.pipeline_path.c_str());
    std::fflush(stderr);
    current_ = StrCat(info.pass_name, " (@", info.occurrence_id, ")");
    if (fault_ == "crash") std::raise(SIGSEGV);
    if (fault_ == "hang") {
      while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (fault_ == "fail") return absl::InternalError(StrCat("injected fault (", kAblateFaultEnv, ")"));
    return absl::OkStatus();
  }
  // The pass that ran last ("algsimp (@8)"): the one a pipeline error came from.
  const std::string& current() const { return current_; }

 private:
  std::string fault_;
  std::string current_;
};

void Flatten(const Literal& literal, std::vector<const Literal*>& leaves) {
  if (literal.shape().IsTuple()) {
    for (const Literal& e : literal.tuple_elements()) Flatten(e, leaves);
  } else {
    leaves.push_back(&literal);
  }
}

class Channel {
 public:
  Channel(int fd_in, int fd_out) : in_(fdopen(fd_in, "r")), out_(fdopen(fd_out, "w")) {}
  bool ok() const { return in_ != nullptr && out_ != nullptr; }
  void Send(const nlohmann::json& j) {
    std::string line = j.dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), out_);
    std::fflush(out_);
  }
  bool Receive(std::string& line) {
    line.clear();
    for (int c; (c = std::fgetc(in_)) != EOF;) {
      if (c == '\n') return true;
      line.push_back(static_cast<char>(c));
    }
    return !line.empty();
  }

 private:
  FILE* in_;
  FILE* out_;
};

// Writes the unified diff of every changed run of each pass in `passes`.
absl::Status WriteDiffs(const PassRecorder& recorder, const std::vector<std::string>& passes,
                        const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(StrCat("cannot create '", dir, "': ", ec.message()));
  std::map<std::string, std::string> diffs;
  for (const std::string& p : passes) diffs[p];
  for (const PassRunRecord& run : recorder.runs()) {
    auto it = diffs.find(run.info.pass_name);
    if (it == diffs.end() || !run.changed) continue;
    UnifiedDiffOptions options;
    options.before_label = StrCat("before ", run.info.pass_name, " (@", run.info.occurrence_id, " in ",
                                  run.info.pipeline_path, ", iteration ", run.info.iteration, ")");
    options.after_label = StrCat("after ", run.info.pass_name, " (@", run.info.occurrence_id, ")");
    it->second += UnifiedDiff(recorder.Snapshot(run.fingerprint_before), recorder.Snapshot(run.fingerprint_after),
                              options);
  }
  for (const auto& [pass, text] : diffs) {
    std::ofstream out(std::filesystem::path(dir) / (SanitizeFileName(pass) + ".diff"));
    out << (text.empty() ? StrCat("# ", pass, " did not change the module in the baseline compile\n") : text);
    if (!out) return absl::InternalError(StrCat("cannot write a diff into '", dir, "'"));
  }
  return absl::OkStatus();
}

class Worker {
 public:
  explicit Worker(const AblationWorkerOptions& o) : o_(o), channel_(o.fd_in, o.fd_out) {}

  int Run() {
    if (!channel_.ok()) {
      std::fprintf(stderr, "passlab-worker: cannot open the runner's pipes\n");
      return 2;
    }
    absl::Status s = Prepare();
    if (!s.ok()) {
      Fail(s);
      return 0;
    }
    if (!o_.write_reference.empty() || o_.fingerprint_only) return 0;
    // "vanish": gone right after saying it is ready, as when the kernel's OOM
    // killer picks this process; the runner's next command finds no reader.
    if (InjectedFault(o_.variant) == "vanish") std::raise(SIGKILL);
    return Serve();
  }

 private:
  void Fail(const absl::Status& status) {
    std::string message(status.message());
    nlohmann::json j;
    j["status"] = message.find("verifier failed after") != std::string::npos ? "verifier-failure" : "compile-error";
    j["error"] = message;
    if (!failed_pass_.empty()) j["failed_pass"] = failed_pass_;
    if (module_ != nullptr && !o_.snapshot_path.empty()) {
      std::ofstream out(o_.snapshot_path);
      out << PrintModule(*module_);
      if (out) j["snapshot"] = o_.snapshot_path;
    }
    std::fprintf(stderr, "passlab-worker: %s\n", message.c_str());
    channel_.Send(j);
  }

  absl::Status Prepare() {
    std::ifstream in(o_.input, std::ios::binary);
    if (!in) return absl::NotFoundError(StrCat(o_.input, ": cannot open file"));
    std::stringstream text;
    text << in.rdbuf();
    input_text_ = text.str();
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(input_text_, o_.input);
    if (!module.ok()) return module.status();
    module_ = std::move(*module);
    if (!o_.fingerprint_only) {  // the screen runs nothing
      absl::StatusOr<std::vector<Literal>> args =
          ResolveArguments(*module_->entry_computation(), ArgumentSource{.dir = o_.args_dir, .seed = o_.seed});
      if (!args.ok()) return args.status();
      args_ = std::move(*args);
    }

    if (o_.write_reference == "evaluator") {
      std::fprintf(stderr, "passlab-worker: evaluating the reference\n");
      Clock::time_point t = Clock::now();
      absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(*module_, args_);
      if (!expected.ok()) return absl::Status(expected.status().code(), StrCat("evaluator: ", expected.status().message()));
      if (absl::Status s = WriteReference(*expected, o_.reference_dir); !s.ok()) return s;
      channel_.Send({{"status", "ok"}, {"reference", "evaluator"}, {"ms", MsSince(t)}});
      return absl::OkStatus();
    }

    // One session: --device, --threads (OpenBLAS and oneDNN obey them too,
    // or their extra threads spin on busy cores), the kernel cache, the pass
    // options and the sweep's shared autotune cache.
    backend::Session session;
    session.device = o_.device;
    session.threads = o_.threads;
    session.cpu_compile.persistent_cache_dir = session.gpu_compile.persistent_cache_dir = o_.kernel_cache;
    absl::StatusOr<PassOptionOverrides> options = ParsePassOptionOverrides(o_.pass_options);
    if (!options.ok()) return options.status();
    session.pass_options = std::move(*options);
    // On a device the pickers time its libraries' algorithms there (cache
    // keys name it), not OpenBLAS/oneDNN ones on the host.
    if (absl::Status s = backend::UseDeviceAutotuning(session); !s.ok()) {
      return absl::Status(s.code(), StrCat("compile: ", s.message()));
    }
    AutotuneCache& autotune = *session.autotune_cache;
    if (!o_.autotune_cache.empty()) {
      if (absl::Status s = autotune.Load(o_.autotune_cache); !s.ok()) return s;
    }
    absl::StatusOr<std::unique_ptr<backend::Compiler>> compiler = backend::CreateCompiler(std::move(session));
    if (!compiler.ok()) return absl::Status(compiler.status().code(), StrCat("compile: ", compiler.status().message()));
    compiler_ = std::move(*compiler);
    if (o_.control && o_.control_compiled_first) {
      if (absl::Status s = PrepareControl(); !s.ok()) return s;
    }
    Clock::time_point t0 = Clock::now();
    VerifyEachObserver verify;
    ProgressObserver progress(o_.variant);
    PassRecorder recorder(PassRecorderOptions{.snapshots = !o_.diff_dir.empty()});
    absl::Status optimized = compiler_->Optimize(
        *module_, {.pipeline = o_.pipeline,
                   .disable = o_.disable,
                   .enable_only = o_.enable_only,
                   .removed = o_.removed_passes,
                   .observers = {&progress, &verify, &recorder}});
    if (!optimized.ok()) {
      failed_pass_ = progress.current();
      return optimized;
    }
    optimize_ms_ = MsSince(t0);
    compile_cost_ = CompileCostFields(recorder);  // per-pass times, autotuning
    autotune_hits_ = autotune.hits();
    autotune_tuned_ = autotune.misses();
    if (!o_.autotune_cache.empty() && autotune_tuned_ > 0) {
      if (absl::Status s = autotune.Save(o_.autotune_cache); !s.ok()) return s;
    }
    if (!o_.diff_dir.empty()) {
      if (absl::Status s = WriteDiffs(recorder, o_.diff_passes, o_.diff_dir); !s.ok()) return s;
    }
    if (o_.fingerprint_only) {
      channel_.Send({{"status", "ok"},
                     {"program_xxh64", fmt::format("{:016x}", ModuleFingerprint(*module_))},
                     {"instructions", module_->instruction_count()},
                     {"optimize_ms", optimize_ms_}});
      return absl::OkStatus();
    }

    std::fprintf(stderr, "passlab-worker: compiling\n");
    Clock::time_point t1 = Clock::now();
    const int64_t hits_before = CpuKernelCompiler::CacheHits(), misses_before = CpuKernelCompiler::CacheMisses();
    const int64_t loaded_before = CpuKernelCompiler::PersistentCacheHits() + GpuKernelCompiler::PersistentCacheHits();
    const int64_t stored_before =
        CpuKernelCompiler::PersistentCacheMisses() + GpuKernelCompiler::PersistentCacheMisses();
    absl::StatusOr<std::unique_ptr<backend::Executable>> exe = compiler_->Compile(*module_);
    if (!exe.ok()) return absl::Status(exe.status().code(), StrCat("compile: ", exe.status().message()));
    exe_ = std::move(*exe);
    if (o_.device != "cpu") std::fprintf(stderr, "passlab-worker: device %s\n", exe_->DeviceDescription().c_str());
    compile_ms_ = MsSince(t1);
    if (o_.device == "cpu") {
      compile_cost_["kernel_cache"] = {{"hits", CpuKernelCompiler::CacheHits() - hits_before},
                                       {"misses", CpuKernelCompiler::CacheMisses() - misses_before}};
    }
    if (!o_.kernel_cache.empty()) {
      // Of the misses: loaded from the persistent cache (not compiled) or
      // compiled (and stored there).
      compile_cost_["kernel_cache"]["persistent_hits"] =
          CpuKernelCompiler::PersistentCacheHits() + GpuKernelCompiler::PersistentCacheHits() - loaded_before;
      compile_cost_["kernel_cache"]["persistent_misses"] =
          CpuKernelCompiler::PersistentCacheMisses() + GpuKernelCompiler::PersistentCacheMisses() - stored_before;
    }

    nlohmann::json check;
    if (!o_.reference_dir.empty() || o_.write_reference == "compiled") {
      std::fprintf(stderr, "passlab-worker: checking the outputs\n");
      absl::StatusOr<Literal> result = exe_->Run(args_);
      if (!result.ok()) return absl::Status(result.status().code(), StrCat("run: ", result.status().message()));
      if (o_.write_reference == "compiled") {
        if (absl::Status s = WriteReference(*result, o_.reference_dir); !s.ok()) return s;
        channel_.Send({{"status", "ok"}, {"reference", "baseline"}, {"ms", MsSince(t0)}});
        return absl::OkStatus();
      }
      absl::StatusOr<std::vector<Literal>> reference = ReadReference(o_.reference_dir);
      if (!reference.ok()) return reference.status();
      OutputCheck same = CompareWithReference(*reference, *result, o_.tolerance);
      check["ok"] = same.ok;
      check["message"] = same.message;
      if (!same.close_leaves.empty()) check["close_outputs"] = same.close_leaves;
      if (!same.wrong_leaves.empty()) {
        // Per wrong output, its norm-wise error (null: not comparable), so the
        // report can tell a variant's own mismatch from the baseline's.
        nlohmann::json errors = nlohmann::json::object();
        for (size_t i = 0; i < same.wrong_leaves.size(); ++i) {
          double e = same.wrong_norm_errors[i];
          errors[StrCat(same.wrong_leaves[i])] = std::isfinite(e) ? nlohmann::json(e) : nlohmann::json(nullptr);
        }
        check["wrong_norm_errors"] = std::move(errors);
      }
    } else if (!o_.write_reference.empty()) {
      return absl::InvalidArgumentError(StrCat("unknown reference kind '", o_.write_reference, "'"));
    }
    const int64_t kernels_compiled = CpuKernelCompiler::CacheMisses();
    if (o_.control && !o_.control_compiled_first) {
      if (absl::Status s = PrepareControl(); !s.ok()) return s;
    }
    if (control_ != nullptr) {
      // The same parameter buffers and arena for both: identical programs
      // then run on the same pages (at offsets drawn per step, below).
      auto memory = std::make_shared<SharedHostMemory>();
      exe_->ShareHostMemory(memory);
      control_->ShareHostMemory(memory);
    }
    nlohmann::json ready;
    ready["status"] = "ok";
    ready["optimize_ms"] = optimize_ms_;
    ready["compile_ms"] = compile_ms_;
    ready["kernels_compiled"] = kernels_compiled;
    // Library calls whose algorithm came from the shared cache / was tuned here.
    ready["autotune"] = {{"from_cache", autotune_hits_}, {"tuned", autotune_tuned_}};
    ready["instructions"] = module_->instruction_count();
    ready["private_bytes"] = PrivateResidentBytes();  // the runner sizes its blocks by it
    ready.update(compile_cost_);  // pass_times, autotune_ms, kernel_cache
    if (control_ != nullptr) {
      ready["control_compile_ms"] = control_compile_ms_;
      ready["control_compiled_first"] = o_.control_compiled_first;
    }
    if (!check.is_null()) ready["check"] = check;
    channel_.Send(ready);
    return absl::OkStatus();
  }

  int Serve() {
    std::string line;
    while (channel_.Receive(line)) {
      std::istringstream cmd(line);
      std::string verb;
      cmd >> verb;
      if (verb == "warmup" || verb == "run") {
        int n = 1;
        cmd >> n;
        nlohmann::json reply;
        if (absl::Status s = Repeat(verb == "run", n, reply); !s.ok()) {
          std::fprintf(stderr, "passlab-worker: run: %s\n", std::string(s.message()).c_str());
          channel_.Send({{"error", StrCat("run: ", s.message())}});
          return 1;
        }
        channel_.Send(reply);
      } else if (verb == "kernels") {
        nlohmann::json rows = nlohmann::json::array();
        for (const KernelSummaryRow& r : SummarizeRecords(all_, std::max<int64_t>(steps_, 1)).rows) {
          if (r.kind == KernelKind::kControlFlow) continue;
          rows.push_back({{"name", r.name}, {"kind", KernelKindName(r.kind)}, {"detail", r.detail},
                          {"calls", r.calls}, {"ns", steps_ > 0 ? r.total_ns / steps_ : 0}});
        }
        channel_.Send({{"kernels", rows}});
      } else if (verb == "trace") {
        std::string path;
        std::getline(cmd >> std::ws, path);
        std::ofstream out(path);
        out << ChromeTraceJson(last_);
        channel_.Send({{"ok", static_cast<bool>(out)}});
      } else if (verb == "quit") {
        channel_.Send({{"peak_rss_bytes", PeakRssBytes()}, {"private_bytes", PrivateResidentBytes()}});
        return 0;
      } else {
        channel_.Send({{"error", StrCat("unknown command '", line, "'")}});
      }
    }
    return 0;  // the runner went away
  }

  // The control: the unfiltered pipeline's program, built in this process
  // (after the variant, whose kernels it mostly shares through the kernel
  // cache). Its passes already ran, verified, in the baseline worker.
  absl::Status PrepareControl() {
    std::fprintf(stderr, "passlab-worker: compiling the control (the unfiltered pipeline)\n");
    Clock::time_point t = Clock::now();
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(input_text_, o_.input);
    if (!module.ok()) return module.status();
    if (absl::Status s = compiler_->Optimize(**module, {.pipeline = o_.pipeline, .removed = o_.removed_passes});
        !s.ok()) {
      return absl::Status(s.code(), StrCat("control (the unfiltered pipeline): ", s.message()));
    }
    absl::StatusOr<std::unique_ptr<backend::Executable>> exe = compiler_->Compile(**module);
    if (!exe.ok()) return absl::Status(exe.status().code(), StrCat("compile (control): ", exe.status().message()));
    control_module_ = std::move(*module);
    control_ = std::move(*exe);
    control_compile_ms_ = MsSince(t);
    return absl::OkStatus();
  }

  // One program's timed steps.
  struct Samples {
    std::vector<int64_t> kernel_ns, kernel_copy_ns, wall_ns;
    std::vector<int64_t> kernel_cpu_ns;  // the CPU backend's records' cpu_ns summed
    std::vector<bool> first;  // the control: whether it ran before the variant
    // Per kernel name, its time / process CPU time in each step (records.h's
    // kernel_steps_ns, kernel_steps_cpu_ns).
    std::map<std::string, std::vector<int64_t>> kernel_steps_ns, kernel_steps_cpu_ns;
    void AddKernelSteps(const std::vector<KernelRecord>& records) {
      const size_t step = kernel_ns.size() - 1;  // this step's index
      int64_t cpu = 0;
      bool cpu_known = !records.empty();
      for (const KernelRecord& r : records) {
        if (!backend::IsKernelTime(r)) continue;
        if (r.cpu_ns < 0) cpu_known = false;
        cpu += r.cpu_ns;
      }
      auto add = [step](std::map<std::string, std::vector<int64_t>>& rows, const std::string& name, int64_t ns) {
        std::vector<int64_t>& row = rows[name];
        row.resize(step + 1, 0);
        row[step] += ns;
      };
      for (const KernelRecord& r : records) {
        if (!backend::IsKernelTime(r)) continue;
        add(kernel_steps_ns, r.name, r.duration_ns());
        if (cpu_known) add(kernel_steps_cpu_ns, r.name, r.cpu_ns);
      }
      for (auto& [name, row] : kernel_steps_ns) row.resize(step + 1, 0);
      if (cpu_known) {
        kernel_cpu_ns.push_back(cpu);
        for (auto& [name, row] : kernel_steps_cpu_ns) row.resize(kernel_cpu_ns.size(), 0);
      }
    }
    nlohmann::json ToJson() const {
      nlohmann::json j = {{"kernel_ns", kernel_ns}, {"kernel_copy_ns", kernel_copy_ns}, {"wall_ns", wall_ns}};
      if (!first.empty()) j["control_first"] = first;
      if (!kernel_steps_ns.empty()) j["kernel_steps_ns"] = kernel_steps_ns;
      if (!kernel_cpu_ns.empty() && kernel_cpu_ns.size() == kernel_ns.size()) {
        j["kernel_cpu_ns"] = kernel_cpu_ns;
        j["kernel_steps_cpu_ns"] = kernel_steps_cpu_ns;
      }
      return j;
    }
  };

  // One step of `program`; with `out`, timed and recorded (the backend's
  // one step: an untraced run for the wall time where tracing costs host
  // time). `records_out` receives the step's kernel records.
  absl::Status Step(backend::Executable& program, Samples* out, std::vector<KernelRecord>* records_out) {
    backend::StepHooks hooks;
    if (o_.placement_seed != 0) hooks.before = [&] { program.SetArenaOffset(NextArenaOffset()); };
    if (o_.inject_delay > 0 && &program == exe_.get()) {
      hooks.after = [&](std::vector<KernelRecord>* records) { InjectDelay(records); };
    }
    if (out == nullptr) {
      if (hooks.before) hooks.before();
      absl::Status s = program.Execute(args_, nullptr);
      if (s.ok() && hooks.after) hooks.after(nullptr);
      return s;
    }
    ASSIGN_OR_RETURN(backend::StepTiming step, program.TimedStep(args_, hooks));
    out->kernel_ns.push_back(step.kernel_ns);
    out->kernel_copy_ns.push_back(step.kernel_ns + step.copy_ns);
    out->wall_ns.push_back(step.wall_ns);
    out->AddKernelSteps(step.records);
    if (records_out != nullptr) *records_out = std::move(step.records);
    return absl::OkStatus();
  }

  // A 64-byte multiple below kMaxArenaOffsetBytes, from the seeded
  // generator (splitmix64: the same seed gives the same offsets).
  int64_t NextArenaOffset() {
    uint64_t z = (placement_state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<int64_t>(z % (kMaxArenaOffsetBytes / 64)) * 64;
  }

  // The test hook's delay: spins for inject_delay times the step's kernel
  // time (the last traced step's, for an untraced run) and records it.
  void InjectDelay(std::vector<KernelRecord>* records) {
    if (records != nullptr) {
      int64_t k = 0;
      for (const KernelRecord& r : *records) {
        if (backend::IsKernelTime(r)) k += r.duration_ns();
      }
      delay_basis_ns_ = k;
    }
    const int64_t wanted = static_cast<int64_t>(o_.inject_delay * static_cast<double>(delay_basis_ns_));
    const int64_t cpu_start = ProcessCpuTimeNs();
    Clock::time_point start = Clock::now();
    while (std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count() < wanted) {
    }
    if (records == nullptr) return;
    const int64_t cpu_end = ProcessCpuTimeNs();
    KernelRecord r;
    r.name = "injected-delay";
    r.kind = KernelKind::kRuntimeRoutine;
    r.detail = "passlab ablate --test-inject-delay";
    r.device = o_.device;
    r.start_ns = records->empty() ? 0 : records->back().end_ns;
    r.end_ns = r.start_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    // Spinning is CPU time too (the kernel_cpu_ns metric sees the delay).
    if (o_.device == "cpu" && cpu_start >= 0 && cpu_end >= cpu_start) r.cpu_ns = cpu_end - cpu_start;
    records->push_back(std::move(r));
  }

  absl::Status Repeat(bool timed, int n, nlohmann::json& reply) {
    Samples variant, control;
    int64_t kernel_count = 0, bytes = 0;
    auto control_step = [&]() -> absl::Status {
      absl::Status s = Step(*control_, timed ? &control : nullptr, nullptr);
      return s.ok() ? s : absl::Status(s.code(), StrCat("control: ", s.message()));
    };
    for (int i = 0; i < n; ++i) {
      // Variant and control alternate which goes first (ABBA...), so neither
      // always runs in the cache state the other leaves.
      // Which goes first in a process's first step (and so touches its own
      // memory first: library scratch, constants) follows the compile order
      // the runner drew for the process, so that it is not always the variant.
      const bool control_first = control_ != nullptr && (steps_ + i + (o_.control_compiled_first ? 1 : 0)) % 2 == 1;
      if (control_first) {
        if (absl::Status s = control_step(); !s.ok()) return s;
      }
      std::vector<KernelRecord> records;
      if (absl::Status s = Step(*exe_, timed ? &variant : nullptr, &records); !s.ok()) return s;
      if (control_ != nullptr && !control_first) {
        if (absl::Status s = control_step(); !s.ok()) return s;
      }
      if (!timed) continue;
      if (control_ != nullptr) control.first.push_back(control_first);
      kernel_count = bytes = 0;
      for (const KernelRecord& r : records) {
        if (r.kind == KernelKind::kControlFlow) continue;
        bytes += r.bytes_read + r.bytes_written;
        if (backend::IsKernelTime(r)) ++kernel_count;
      }
      all_.insert(all_.end(), records.begin(), records.end());
      last_ = std::move(records);
    }
    if (!timed) {
      reply = {{"ok", true}};
      return absl::OkStatus();
    }
    steps_ += n;
    reply = variant.ToJson();
    reply["kernel_count"] = kernel_count;
    reply["bytes"] = bytes;
    if (control_ != nullptr) reply["control"] = control.ToJson();
    return absl::OkStatus();
  }

  const AblationWorkerOptions& o_;
  Channel channel_;
  std::unique_ptr<HloModule> module_;
  std::vector<Literal> args_;
  std::unique_ptr<backend::Compiler> compiler_;  // the session's: device, threads, caches
  std::unique_ptr<backend::Executable> exe_;
  std::string input_text_;
  std::unique_ptr<HloModule> control_module_;
  std::unique_ptr<backend::Executable> control_;
  std::string failed_pass_;
  double optimize_ms_ = 0, compile_ms_ = 0, control_compile_ms_ = 0;
  nlohmann::json compile_cost_;  // compile_cost.h's record fields
  int64_t autotune_hits_ = 0, autotune_tuned_ = 0;
  std::vector<KernelRecord> all_, last_;
  int64_t steps_ = 0;
  uint64_t placement_state_ = o_.placement_seed;
  int64_t delay_basis_ns_ = 0;
};

}  // namespace

int RunAblationWorker(const AblationWorkerOptions& options) { return Worker(options).Run(); }

absl::Status WriteReference(const Literal& result, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(StrCat("cannot create '", dir, "': ", ec.message()));
  std::vector<const Literal*> leaves;
  Flatten(result, leaves);
  std::string shapes;
  for (size_t i = 0; i < leaves.size(); ++i) {
    shapes += leaves[i]->shape().ToString() + "\n";
    std::ofstream out(std::filesystem::path(dir) / StrCat("leaf_", i, ".bin"), std::ios::binary);
    out.write(reinterpret_cast<const char*>(leaves[i]->untyped_data()), leaves[i]->size_bytes());
    if (!out) return absl::InternalError(StrCat("cannot write the reference into '", dir, "'"));
  }
  // shapes.txt last: its presence marks a complete reference.
  std::string tmp = (std::filesystem::path(dir) / "shapes.txt.tmp").string();
  {
    std::ofstream out(tmp);
    out << shapes;
    if (!out) return absl::InternalError(StrCat("cannot write '", tmp, "'"));
  }
  std::filesystem::rename(tmp, std::filesystem::path(dir) / "shapes.txt", ec);
  if (ec) return absl::InternalError(StrCat("cannot write the reference into '", dir, "': ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Literal>> ReadReference(const std::string& dir) {
  std::ifstream shapes(std::filesystem::path(dir) / "shapes.txt");
  if (!shapes) return absl::NotFoundError(StrCat("no reference outputs in '", dir, "'"));
  std::vector<Literal> leaves;
  std::string line;
  for (size_t i = 0; std::getline(shapes, line); ++i) {
    absl::StatusOr<Shape> shape = ParseShape(line);
    if (!shape.ok()) return absl::DataLossError(StrCat(dir, "/shapes.txt:", i + 1, ": ", shape.status().message()));
    Literal leaf(*shape);
    std::string path = (std::filesystem::path(dir) / StrCat("leaf_", i, ".bin")).string();
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(leaf.untyped_data()), leaf.size_bytes());
    if (!in || in.gcount() != leaf.size_bytes() || in.peek() != EOF) {
      return absl::DataLossError(StrCat("'", path, "' does not hold ", leaf.size_bytes(), " bytes of ", line));
    }
    leaves.push_back(std::move(leaf));
  }
  return leaves;
}

OutputCheck CompareWithReference(const std::vector<Literal>& reference, const Literal& actual, double tolerance) {
  std::vector<const Literal*> expected, leaves;
  for (const Literal& l : reference) expected.push_back(&l);
  FlattenLeaves(actual, leaves);
  return CheckOutputs(expected, leaves, OutputCheckOptions{.tolerance = tolerance});
}

int64_t PrivateResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  int64_t kib = 0;
  std::string rest;
  while (status >> key) {
    if (key == "RssAnon:" && status >> kib) return kib * 1024;
    std::getline(status, rest);
  }
  return 0;
}

int64_t PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace passlab
