// passlab run: optimize a module with a pipeline (any pass filters), compile
// it for the CPU (emitted kernels through MLIR/LLVM, library calls on
// OpenBLAS/oneDNN, runtime routines) or with --device cuda for the GPU
// (PTX kernels, cuBLASLt/cuDNN calls, timed through CUPTI), run it, and
// report every kernel: a per-kernel table (calls, total, median, share),
// kernel time and wall time per step, memory and compile time. --check
// compares the outputs with the reference evaluator on the unoptimized
// module. Every option but the CPU's kernel cache counters applies to both
// devices.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/kernel_estimates.h"
#include "analysis/median.h"
#include "analysis/run_report.h"
#include "core/backend/compiler.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/eval/arguments.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/npy.h"
#include "core/eval/output_check.h"
#include "core/eval/random_inputs.h"
#include "core/codegen/gpu_kernel_compiler.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/runtime/chrome_trace.h"
#include "core/runtime/kernel_summary.h"
#include "passes/autotune/autotune_cache.h"
#include "passes/pipelines/pipelines.h"
#include "tools/passlab/commands.h"
#include "tools/passlab/emitter_dump.h"
#include "tools/passlab/xla_flags.h"

namespace passlab {
namespace {

struct RunOptions {
  std::string file;
  std::shared_ptr<ModelSource> source;
  std::string pipeline = "gpu";
  std::string disable;
  std::string enable_only;                // from --xla_enable_hlo_passes_only
  std::vector<std::string> pass_options;  // --pass-option PASS.OPTION=VALUE
  XlaFlags xla;                           // --xla_* (and XLA_FLAGS)
  std::string device = "cpu";
  int warmup = 1;
  int repeats = 5;
  bool check = false;
  double tolerance = 1e-3;
  uint64_t seed = 1;
  std::string args_dir;    // --args DIR: the real arguments (core/eval/arguments.h)
  std::string expect_dir;  // --expect DIR: output_<i>.npy to compare with
  std::string trace;
  std::string output_dir;  // each output leaf as DIR/output_<i>.npy
  std::string format = "text";
  int threads = 0;
  int64_t max_rows = 25;
  // The cost model whose estimate of each kernel is shown beside its time:
  // "auto" (the CPU entry on --device cpu, the GPU's on cuda), a device name
  // of passes/fusion/gpu_performance_model.h, or "none".
  std::string cost_model = "auto";
  std::string emitter_dump;     // directory for MLIR after every emitter pass
  std::string emitter_disable;  // emitter passes to skip
  std::string kernel_cache;     // persistent compiled-kernel cache directory
  std::string autotune_cache;   // the algorithm pickers' choices, loaded and saved (JSON)
};

absl::Status Optimize(const backend::Compiler& compiler, HloModule& module, const RunOptions& o) {
  if (o.pipeline == "none") {
    if (!o.disable.empty() || !o.enable_only.empty() || !o.pass_options.empty()) {
      return absl::InvalidArgumentError("--disable, --pass-option and XLA's pass flags need a pipeline (not --pipeline none)");
    }
    return absl::OkStatus();
  }
  backend::OptimizeOptions options{.pipeline = o.pipeline, .disable = o.disable, .enable_only = o.enable_only};
  std::unique_ptr<XlaDumpObserver> dump;
  if (!o.xla.dump_to.empty()) {
    ASSIGN_OR_RETURN(std::unique_ptr<XlaDumpObserver> d, XlaDumpObserver::Create(o.xla));
    dump = std::move(d);
    RETURN_IF_ERROR(dump->WriteBefore(module));
    options.observers.push_back(dump.get());
  }
  RETURN_IF_ERROR(compiler.Optimize(module, options));
  return dump != nullptr ? dump->WriteAfter(module) : absl::OkStatus();
}

// What a run produced on either backend (`cuda`: the same profile as a
// CudaProfile, with --device cuda): writes --output-dir and --trace,
// checks, and prints the table and the per-step figures (text or JSON).
// The exit code: 1 when --check fails.
// --check's norm-wise tolerance when library calls computed f32 on TF32.
constexpr double kTf32NormTolerance = 0.05;

// Where the arguments came from and what the outputs are checked against.
struct RunInputs {
  std::string origin;  // "random arguments (seed 1)", "arguments from DIR", ...
  bool random = true;
  const Literal* expected = nullptr;                   // --check: the evaluator's outputs
  const std::vector<Literal>* expected_files = nullptr;  // --expect DIR
};

int Report(const RunOptions& o, const HloModule& module, const backend::ProfileResult& profile,
           const backend::ProfileResult* cuda,
           double optimize_ms, const RunInputs& inputs, const EmitterDump& emitter_dump) {
  const Literal* expected = inputs.expected;
  std::vector<const Literal*> leaves;
  FlattenLeaves(profile.result, leaves);
  if (!o.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.output_dir, ec);
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (absl::Status s = WriteNpy(*leaves[i], StrCat(o.output_dir, "/output_", i, ".npy")); !s.ok()) {
        return ReportError(s);
      }
    }
  }
  std::string check_message, check_verdict;
  bool check_ok = true;
  if (expected != nullptr) {
    std::vector<const Literal*> expected_leaves;
    FlattenLeaves(*expected, expected_leaves);
    OutputCheckOptions copts{.tolerance = o.tolerance, .random_inputs = inputs.random};
    // TF32 products keep 10 mantissa bits: a training step's outputs then
    // differ from the evaluator's f32 by about 1% norm-wise (an MLP step on
    // an H100: 1.13%), as XLA's do with its default precision.
    const int64_t tf32 = cuda != nullptr ? cuda->tf32_library_calls : 0;
    if (tf32 > 0) copts.norm_tolerance = std::max(copts.norm_tolerance, kTf32NormTolerance);
    OutputCheck same = CheckOutputs(expected_leaves, leaves, copts);
    check_ok = same.ok;
    check_message = same.message;
    check_verdict = same.Verdict();
    if (tf32 > 0) {
      check_verdict += StrCat(" (TF32 in ", tf32, " library calls: norm-wise tolerance ", kTf32NormTolerance * 100,
                              "%; NVIDIA_TF32_OVERRIDE=0 checks in full f32)");
    }
    if (!same.degenerate.empty()) {
      // Name the places in the compiled program where a cancellation can
      // produce the NaNs.
      std::vector<std::string> sites = FindCancellationSites(module);
      if (!sites.empty()) check_verdict += StrCat(" [cancellation sites: ", Join(sites, "; "), "]");
    }
  }
  std::string expect_verdict;
  bool expect_ok = true;
  if (inputs.expected_files != nullptr) {
    std::vector<const Literal*> files;
    for (const Literal& l : *inputs.expected_files) files.push_back(&l);
    OutputCheck same = CheckOutputs(files, leaves, OutputCheckOptions{.tolerance = o.tolerance});
    expect_ok = same.ok;
    expect_verdict = same.Verdict();
  }
  if (!o.trace.empty()) {
    std::ofstream out(o.trace);
    out << ChromeTraceJson(profile.last_step);
    if (!out) return ReportError(absl::InternalError(StrCat("cannot write trace '", o.trace, "'")));
  }
  const ExecutableMemory& mem = profile.memory;
  KernelSummary summary = profile.summary;
  absl::StatusOr<std::optional<DeviceDescription>> cost_device =
      CostModelDevice(o.cost_model, cuda != nullptr ? cuda->device : "");
  if (!cost_device.ok()) return ReportError(cost_device.status());
  if (cost_device->has_value()) AddCostModelEstimates(module, **cost_device, summary);
  if (o.format == "json") {
    RunReport report;
    report.device = o.device;
    if (cuda != nullptr) report.device_description = cuda->device;
    report.pipeline = o.pipeline;
    report.repeats = o.repeats;
    report.optimize_ms = optimize_ms;
    report.compile_ms = profile.compile_ms;
    report.kernel_ms_median = Median(profile.kernel_ms);
    report.wall_ms_median = Median(profile.wall_ms);
    report.kernel_ms = profile.kernel_ms;
    report.wall_ms = profile.wall_ms;
    if (cuda != nullptr) {
      report.kernel_envelope_ms = cuda->envelope_ms;
      report.traced_wall_ms = cuda->traced_wall_ms;
      report.host_fallbacks = cuda->host_fallbacks;
      report.command_buffer = cuda->command_buffer;
      report.tf32_library_calls = cuda->tf32_library_calls;
    } else {
      report.peak_bytes = mem.peak_bytes();
      report.kernel_cache_hits = CpuKernelCompiler::CacheHits();
      report.kernel_cache_misses = CpuKernelCompiler::CacheMisses();
    }
    if (!o.kernel_cache.empty()) {
      report.kernel_cache_dir = o.kernel_cache;
      report.persistent_cache_hits =
          cuda != nullptr ? GpuKernelCompiler::PersistentCacheHits() : CpuKernelCompiler::PersistentCacheHits();
      report.persistent_cache_misses =
          cuda != nullptr ? GpuKernelCompiler::PersistentCacheMisses() : CpuKernelCompiler::PersistentCacheMisses();
    }
    report.arena_bytes = mem.arena_bytes;
    for (const KernelSummaryRow& r : summary.rows) {
      report.kernels.push_back({.name = r.name, .computation = r.computation, .kind = KernelKindName(r.kind),
                                .detail = r.detail, .calls = r.calls, .total_ns = r.total_ns,
                                .median_ns = r.median_ns, .share = r.share, .bytes = r.bytes, .flops = r.flops,
                                .estimate_ns = r.estimate_ns});
    }
    if (cost_device->has_value()) report.cost_model = (*cost_device)->name;
    report.inputs = inputs.origin;
    if (expected != nullptr) report.check = RunReportCheck{check_ok, check_message, check_verdict};
    if (inputs.expected_files != nullptr) report.expect = RunReportCheck{expect_ok, std::nullopt, expect_verdict};
    fmt::print("{}\n", nlohmann::json(report).dump(2));
  } else {
    if (cuda != nullptr) fmt::print("device             {}\n", cuda->device);
    fmt::print("{}", FormatKernelTable(summary, o.max_rows));
    if (cost_device->has_value()) {
      fmt::print("estimate: the '{}' cost model's time for one call (priority fusion's model)\n",
                 (*cost_device)->name);
    }
    fmt::print("\nsteps              {} (after {} warm-up)\n", o.repeats, o.warmup);
    if (cuda != nullptr) {
      fmt::print("kernel time/step   {:.3f} ms (median sum of device kernels, CUPTI)\n", Median(profile.kernel_ms));
      fmt::print("kernel envelope    {:.3f} ms (median first start to last end)\n", Median(cuda->envelope_ms));
      fmt::print("wall time/step     {:.3f} ms (median of untraced steps)\n", Median(profile.wall_ms));
      fmt::print("traced step        {:.3f} ms (median wall time with CUPTI tracing)\n", Median(cuda->traced_wall_ms));
      fmt::print("command buffer     {}\n", cuda->command_buffer);
      fmt::print("TF32               {} library calls (f32 at DEFAULT or HIGH precision, as XLA)\n",
                 cuda->tf32_library_calls);
      fmt::print("device arena       {:.1f} MiB\n", mem.arena_bytes / 1048576.0);
    } else {
      fmt::print("kernel time/step   {:.3f} ms (median)\n", Median(profile.kernel_ms));
      fmt::print("wall time/step     {:.3f} ms (median)\n", Median(profile.wall_ms));
      fmt::print("peak memory        {:.1f} MiB (arena {:.1f} MiB)\n", mem.peak_bytes() / 1048576.0,
                 mem.arena_bytes / 1048576.0);
    }
    fmt::print("optimize time      {:.1f} ms (pipeline '{}')\n", optimize_ms, o.pipeline);
    if (!o.kernel_cache.empty()) {
      const int64_t hits =
          cuda != nullptr ? GpuKernelCompiler::PersistentCacheHits() : CpuKernelCompiler::PersistentCacheHits();
      const int64_t misses =
          cuda != nullptr ? GpuKernelCompiler::PersistentCacheMisses() : CpuKernelCompiler::PersistentCacheMisses();
      fmt::print("compile time       {:.1f} ms ({} kernels compiled, {} loaded from the kernel cache, {} in-process "
                 "cache hits)\n",
                 profile.compile_ms, misses, hits,
                 cuda != nullptr ? GpuKernelCompiler::CacheHits() : CpuKernelCompiler::CacheHits());
      fmt::print("kernel cache       {} ({} hits, {} misses)\n", o.kernel_cache, hits, misses);
    } else if (cuda != nullptr) {
      fmt::print("compile time       {:.1f} ms\n", profile.compile_ms);
    } else {
      fmt::print("compile time       {:.1f} ms ({} kernels compiled, {} cache hits)\n", profile.compile_ms,
                 CpuKernelCompiler::CacheMisses(), CpuKernelCompiler::CacheHits());
    }
    if (cuda != nullptr && !cuda->host_fallbacks.empty()) {
      // Ops without a GPU implementation run on the host between copies:
      // their copies are timed, their host work is not kernel time.
      const std::vector<std::string>& h = cuda->host_fallbacks;
      fmt::print("host fallbacks     {} op{} run on the host: {}{}\n", h.size(), h.size() == 1 ? "" : "s",
                 Join(std::vector<std::string>(h.begin(), h.begin() + std::min<size_t>(h.size(), 3)), "; "),
                 h.size() > 3 ? StrCat("; ... ", h.size() - 3, " more") : "");
    }
    fmt::print("inputs             {}\n", inputs.origin);
    if (expected != nullptr) fmt::print("check              {}\n", check_verdict);
    if (inputs.expected_files != nullptr) {
      fmt::print("expect             {} (against {}/output_<i>.npy)\n", expect_verdict, o.expect_dir);
    }
    if (!o.trace.empty()) fmt::print("trace              {} (Chrome trace JSON; open in Perfetto)\n", o.trace);
    if (!o.emitter_dump.empty()) {
      fmt::print("emitter dumps      {} kernels in {}/\n", emitter_dump.kernels(), o.emitter_dump);
    }
  }
  if (!check_ok) {
    fmt::print(stderr, "passlab: error: --check: outputs differ from the evaluator: {}\n", check_verdict);
    return 1;
  }
  if (!expect_ok) {
    fmt::print(stderr, "passlab: error: --expect: outputs differ from {}: {}\n", o.expect_dir, expect_verdict);
    return 1;
  }
  return 0;
}

int RunRun(const RunOptions& o) {
  auto module = LoadVerifiedModule(o.file, *o.source);
  if (!module.ok()) return ReportError(module.status());
  // Both backends run one device: a replicated or partitioned program
  // would run as one participant and compute something else.
  const HloModuleConfig& config = (*module)->config();
  if (config.replica_count * config.num_partitions > 1) {
    std::string devices = config.replica_count > 1 ? StrCat(config.replica_count, " replicas") : "";
    if (config.num_partitions > 1) {
      devices += StrCat(devices.empty() ? "" : " x ", config.num_partitions, " partitions");
    }
    return ReportError(absl::UnimplementedError(
        StrCat("passlab run: module has ", devices, "; the ", o.device == "cuda" ? "CUDA" : "CPU",
               " backend runs one device")));
  }
  absl::StatusOr<std::optional<std::vector<Literal>>> embedded = EmbeddedArguments(o.file);
  if (!embedded.ok()) return ReportError(embedded.status());
  RunInputs inputs;
  absl::StatusOr<std::vector<Literal>> resolved = ResolveArguments(
      *(*module)->entry_computation(),
      ArgumentSource{.dir = o.args_dir, .embedded = embedded->has_value() ? &**embedded : nullptr, .seed = o.seed},
      &inputs.origin);
  if (!resolved.ok()) return ReportError(resolved.status());
  std::vector<Literal> args = std::move(*resolved);
  inputs.random = o.args_dir.empty() && !embedded->has_value();
  std::optional<std::vector<Literal>> expected_files;
  if (!o.expect_dir.empty()) {
    absl::StatusOr<std::vector<Literal>> read =
        ReadExpectedOutputs((*module)->entry_computation()->root_instruction()->shape(), o.expect_dir);
    if (!read.ok()) return ReportError(read.status());
    expected_files = std::move(*read);
    inputs.expected_files = &*expected_files;
  }
  // The oracle runs on the module as given, before any pass touched it.
  absl::StatusOr<Literal> expected = absl::UnknownError("not evaluated");
  if (o.check) expected = HloEvaluator().Evaluate(**module, args);
  if (o.check && !expected.ok()) {
    return ReportError(absl::Status(expected.status().code(),
                                    StrCat("--check: the evaluator cannot run the input: ", expected.status().message())));
  }
  if (o.check) inputs.expected = &*expected;
  std::vector<std::string> emitter_disabled;
  for (std::string_view name : SplitAny(o.emitter_disable, ",")) {
    if (!name.empty()) emitter_disabled.emplace_back(name);
  }
  // --emitter-dump DIR: every kernel's MLIR after every emitter pass.
  EmitterDump emitter_dump(o.emitter_dump);
  // One session carries --device, --threads, --pass-option and the kernel
  // compilers' options; the backend applies them (library threads before
  // the pipeline, whose algorithm pickers time library calls, and before
  // every run).
  backend::Session session;
  session.device = o.device;
  session.threads = o.threads;
  if (o.pipeline != "none") {
    absl::StatusOr<PassOptionOverrides> pass_options = ParsePassOptionOverrides(o.pass_options);
    if (!pass_options.ok()) return ReportError(pass_options.status());
    session.pass_options = std::move(*pass_options);
  }
  session.cpu_compile.disabled_passes = session.gpu_compile.disabled_passes = emitter_disabled;
  session.cpu_compile.persistent_cache_dir = session.gpu_compile.persistent_cache_dir = o.kernel_cache;
  if (!o.emitter_dump.empty()) {
    emitter_dump.Attach(session.cpu_compile);
    emitter_dump.Attach(session.gpu_compile);
  }
  session.cuda.command_buffer = !o.xla.command_buffer.has_value() || !o.xla.command_buffer->empty();
  // On CUDA the algorithm pickers time cuBLASLt/cuDNN algorithms on the
  // device.
  if (absl::Status s = backend::UseDeviceAutotuning(session); !s.ok()) {
    return ReportError(absl::Status(s.code(), StrCat("--device ", o.device, ": compile: ", s.message())));
  }
  // --autotune-cache FILE: the pickers start from the choices in FILE (a
  // sweep's autotune.json, another run's) and add theirs to it, so that runs
  // and sweeps time the same programs: each process autotuning for itself
  // chose differently enough to move the ResNet-50 step by 8% on an H200.
  std::shared_ptr<AutotuneCache> autotune = session.autotune_cache;
  if (!o.autotune_cache.empty()) {
    if (absl::Status s = autotune->Load(o.autotune_cache); !s.ok()) {
      return ReportError(absl::Status(s.code(), StrCat("--autotune-cache: ", s.message())));
    }
  }
  absl::StatusOr<std::unique_ptr<backend::Compiler>> compiler = backend::CreateCompiler(std::move(session));
  if (!compiler.ok()) return ReportError(compiler.status());
  auto t0 = std::chrono::steady_clock::now();
  if (absl::Status s = Optimize(**compiler, **module, o); !s.ok()) return ReportError(s);
  if (!o.autotune_cache.empty()) {
    if (absl::Status s = autotune->Save(o.autotune_cache); !s.ok()) {
      return ReportError(absl::Status(s.code(), StrCat("--autotune-cache: ", s.message())));
    }
  }
  const double optimize_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  // On CUDA, the GPU code generator (the device's sm_XX) provides the
  // kernels; an op it cannot compile runs on the host, shown as a
  // "host: ..." routine.
  backend::ProfileOptions popts{.warmup = o.warmup,
                                .steps = o.repeats,
                                // one more, untimed run
                                .want_result = o.check || !o.output_dir.empty() || !o.expect_dir.empty()};
  absl::StatusOr<backend::ProfileResult> profile = backend::CompileAndProfile(**compiler, **module, args, popts);
  const bool cuda = o.device == "cuda";
  if (!profile.ok()) {
    if (!cuda) return ReportError(profile.status());
    return ReportError(absl::Status(profile.status().code(), StrCat("--device cuda: ", profile.status().message())));
  }
  if (absl::Status s = emitter_dump.Finish(); !s.ok()) return ReportError(s);
  return Report(o, **module, *profile, cuda ? &*profile : nullptr, optimize_ms, inputs, emitter_dump);
}

}  // namespace

void AddRunCommand(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Optimize, compile and run a module; time every kernel");
  cmd->add_option("file", o->file, "HLO text or XLA protobuf (.pb: HloSnapshot, HloProto, HloModuleProto) file ('-' for stdin)");
  o->source = AddModelSourceOptions(cmd);
  cmd->add_option("--pipeline", o->pipeline, "Pipeline before compiling: gpu (today's XLA:GPU, the default), gpu-2021 (seed 003's era), a sub-pipeline, or 'none' to compile the input as is");
  cmd->add_option("--disable", o->disable, "Pass filters to skip: name, name:N, pipe/name, @ID, regex");
  cmd->add_option("--device", o->device, "Backend")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--warmup", o->warmup, "Untimed runs first")->check(NonNegative());
  cmd->add_option("--repeats", o->repeats, "Timed runs")->check(Positive());
  cmd->add_flag("--check", o->check, "Compare the outputs with the evaluator (fails with the worst mismatch)");
  cmd->add_option("--tolerance", o->tolerance, "Absolute and relative tolerance of --check");
  cmd->add_option("--seed", o->seed, "Seed of the random inputs");
  cmd->add_option("--args", o->args_dir,
                  "The real arguments: a directory of .npy files matched to parameters by number (0.npy, arg1.npy, ...; "
                  "see README)");
  cmd->add_option("--expect", o->expect_dir,
                  "Compare the compiled run's outputs with DIR/output_<i>.npy (e.g. written beside --args)");
  cmd->add_option("--output-dir", o->output_dir, "Write each output leaf as DIR/output_<i>.npy (as `passlab eval` does)");
  cmd->add_option("--trace", o->trace, "Write the last run as Chrome trace JSON");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--threads", o->threads, "Kernel threads (0 = all cores, 1 = calling thread only)");
  cmd->add_option("--max-rows", o->max_rows, "Kernel table rows (0 = all)");
  cmd->add_option("--cost-model", o->cost_model,
                  "Show each kernel's estimate under this cost model: auto (cpu, or the CUDA device's GPU), "
                  "H100, H200, A100, A6000, cpu, or none");
  cmd->add_option("--emitter-dump", o->emitter_dump, "Write each kernel's MLIR after every emitter pass to DIR/<kernel>/");
  cmd->add_option("--autotune-cache", o->autotune_cache,
                  "JSON file of the algorithm pickers' choices: loaded before the pipeline, saved after (a sweep's "
                  "autotune.json times the sweep's programs)");
  cmd->add_option("--kernel-cache", o->kernel_cache,
                  "Persistent compiled-kernel cache directory (created if missing): kernels found there are loaded, "
                  "not compiled; new ones are stored, for later runs and other processes");
  cmd->add_option("--emitter-disable", o->emitter_disable, "Emitter passes to skip (comma-separated, e.g. vectorize,unroll)");
  cmd->add_option("--pass-option", o->pass_options, "PASS.OPTION=VALUE by XLA's option names (repeatable)");
  AddXlaFlagOptions(cmd, o->xla);
  cmd->callback([o, &result] {
    RunOptions resolved = *o;
    absl::StatusOr<XlaFlags> xla = ResolveXlaFlags(o->xla, resolved.disable, resolved.enable_only);
    if (!xla.ok()) {
      result.exit_code = ReportError(xla.status());
      return;
    }
    resolved.xla = *xla;
    // Reports name the pipeline itself ("default" is today's "gpu").
    if (resolved.pipeline == "default") resolved.pipeline = "gpu";
    result.exit_code = RunRun(resolved);
  });
}

}  // namespace passlab
