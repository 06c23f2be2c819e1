// passlab run: optimize a module with a pipeline (any pass filters), compile
// it for the CPU (emitted kernels through MLIR/LLVM, library calls on
// OpenBLAS/oneDNN, runtime routines), run it, and report every kernel:
// a per-kernel table (calls, total, median, share), kernel time and wall
// time per step, peak memory and compile time. --check compares the outputs
// with the reference evaluator on the unoptimized module.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/cuda_profile.h"
#include "analysis/profile_run.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/npy.h"
#include "core/eval/output_check.h"
#include "core/runtime/library_threads.h"
#include "core/eval/random_inputs.h"
#include "core/codegen/gpu_kernel_compiler.h"
#include "core/ir/str_util.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/runtime/chrome_trace.h"
#include "core/runtime/kernel_summary.h"
#include "passes/pipelines/pipelines.h"
#include "tools/passlab/commands.h"
#include "tools/passlab/emitter_dump.h"

namespace passlab {
namespace {

struct RunOptions {
  std::string file;
  std::shared_ptr<ModelSource> source;
  std::string pipeline = "default";
  std::string disable;
  std::string device = "cpu";
  int warmup = 1;
  int repeats = 5;
  bool check = false;
  double tolerance = 1e-3;
  uint64_t seed = 1;
  std::string trace;
  std::string output_dir;  // each output leaf as DIR/output_<i>.npy
  std::string format = "text";
  int threads = 0;
  int64_t max_rows = 25;
  std::string emitter_dump;     // directory for MLIR after every emitter pass
  std::string emitter_disable;  // emitter passes to skip
};

absl::Status Optimize(HloModule& module, const RunOptions& o) {
  if (o.pipeline == "none") {
    if (!o.disable.empty()) return absl::InvalidArgumentError("--disable needs a pipeline (not --pipeline none)");
    return absl::OkStatus();
  }
  absl::StatusOr<FilteredPipeline> pipeline = BuildFilteredPipeline(o.pipeline, o.disable);
  if (!pipeline.ok()) return pipeline.status();
  return pipeline->pipeline->Run(module).status();
}

// --device cuda: the CUDA runtime, timed through CUPTI. `kernels` is the GPU
// code generator (null: ops that need an emitted kernel run on the host,
// shown as "host: ..." routines in the table).
int RunOnCuda(const RunOptions& o, const GpuKernelProvider& kernels) {
  auto module = LoadModule(o.file, *o.source);
  if (!module.ok()) return ReportError(module.status());
  std::vector<Literal> args = MakeRandomArguments(*(*module)->entry_computation(), o.seed);
  absl::StatusOr<Literal> expected = absl::UnknownError("not evaluated");
  if (o.check) expected = HloEvaluator().Evaluate(**module, args);
  if (o.check && !expected.ok()) {
    return ReportError(absl::Status(expected.status().code(),
                                    StrCat("--check: the evaluator cannot run the input: ", expected.status().message())));
  }
  // The algorithm pickers time cuBLASLt/cuDNN algorithms on the device.
  if (absl::Status s = UseCudaAutotuning(); !s.ok()) {
    return ReportError(absl::Status(s.code(), StrCat("--device cuda: compile: ", s.message())));
  }
  if (absl::Status s = Optimize(**module, o); !s.ok()) return ReportError(s);
  CudaProfileOptions popts;
  popts.warmup = o.warmup;
  popts.repeats = o.repeats;
  popts.want_result = o.check;
  absl::StatusOr<CudaProfile> profile = ProfileOnCuda(**module, args, kernels, popts);
  if (!profile.ok()) return ReportError(absl::Status(profile.status().code(), StrCat("--device cuda: ", profile.status().message())));
  std::string check_message;
  bool check_ok = true;
  if (o.check) {
    std::vector<const Literal*> leaves, expected_leaves;
    FlattenLeaves(profile->result, leaves);
    FlattenLeaves(*expected, expected_leaves);
    OutputCheck same = CheckOutputs(expected_leaves, leaves, OutputCheckOptions{.tolerance = o.tolerance});
    check_ok = same.ok;
    check_message = same.message;
  }
  if (!o.trace.empty()) {
    std::ofstream out(o.trace);
    out << ChromeTraceJson(profile->last_step);
    if (!out) return ReportError(absl::InternalError(StrCat("cannot write trace '", o.trace, "'")));
  }
  const KernelSummary& summary = profile->summary;
  fmt::print("device             {}\n", profile->device);
  fmt::print("{}", FormatKernelTable(summary, o.max_rows));
  fmt::print("\nsteps              {} (after {} warm-up)\n", o.repeats, o.warmup);
  fmt::print("kernel time/step   {:.3f} ms (median sum of device kernels, CUPTI)\n", Median(profile->kernel_ms));
  fmt::print("kernel envelope    {:.3f} ms (median first start to last end)\n", Median(profile->envelope_ms));
  fmt::print("wall time/step     {:.3f} ms (median)\n", Median(profile->wall_ms));
  fmt::print("compile time       {:.1f} ms\n", profile->compile_ms);
  if (!profile->host_fallbacks.empty()) {
    // Ops without a GPU implementation run on the host between copies: their
    // copies are timed, their host work is not kernel time.
    const std::vector<std::string>& h = profile->host_fallbacks;
    fmt::print("host fallbacks     {} op{} run on the host: {}{}\n", h.size(), h.size() == 1 ? "" : "s",
               Join(std::vector<std::string>(h.begin(), h.begin() + std::min<size_t>(h.size(), 3)), "; "),
               h.size() > 3 ? StrCat("; ... ", h.size() - 3, " more") : "");
  }
  if (o.check) fmt::print("check              {}\n", check_ok ? StrCat("ok: ", check_message) : std::string("FAILED"));
  if (!check_ok) {
    fmt::print(stderr, "passlab: error: --check: outputs differ from the evaluator: {}\n", check_message);
    return 1;
  }
  return 0;
}

int RunRun(const RunOptions& o) {
  if (o.device == "cuda") {
    // The GPU code generator (core/codegen's NVPTX target, sm_90 by default)
    // provides the kernels; an op it cannot compile runs on the host, shown
    // as a "host: ..." routine.
    GpuKernelCompiler compiler(GpuCompileOptionsForDevice());
    return RunOnCuda(o, GpuCodegenKernels(compiler));
  }
  auto module = LoadModule(o.file, *o.source);
  if (!module.ok()) return ReportError(module.status());
  // The CPU backend runs one device: a replicated or partitioned program
  // would run as one participant and compute something else.
  const HloModuleConfig& config = (*module)->config();
  if (config.replica_count * config.num_partitions > 1) {
    std::string devices = config.replica_count > 1 ? StrCat(config.replica_count, " replicas") : "";
    if (config.num_partitions > 1) {
      devices += StrCat(devices.empty() ? "" : " x ", config.num_partitions, " partitions");
    }
    return ReportError(absl::UnimplementedError(
        StrCat("passlab run: module has ", devices, "; the CPU backend runs one device")));
  }
  std::vector<Literal> args = MakeRandomArguments(*(*module)->entry_computation(), o.seed);
  // The oracle runs on the module as given, before any pass touched it.
  absl::StatusOr<Literal> expected = absl::UnknownError("not evaluated");
  if (o.check) expected = HloEvaluator().Evaluate(**module, args);
  if (o.check && !expected.ok()) {
    return ReportError(absl::Status(expected.status().code(),
                                    StrCat("--check: the evaluator cannot run the input: ", expected.status().message())));
  }

  // Library calls obey --threads from the start (the algorithm pickers time them).
  SetLibraryCallThreads(o.threads);
  auto t0 = std::chrono::steady_clock::now();
  if (absl::Status s = Optimize(**module, o); !s.ok()) return ReportError(s);
  auto t1 = std::chrono::steady_clock::now();
  CpuCompileOptions copts;
  copts.num_threads = o.threads;
  for (std::string_view name : SplitAny(o.emitter_disable, ",")) {
    if (!name.empty()) copts.disabled_passes.emplace_back(name);
  }
  // --emitter-dump DIR: every kernel's MLIR after every emitter pass.
  EmitterDump emitter_dump(o.emitter_dump);
  if (!o.emitter_dump.empty()) emitter_dump.Attach(copts);
  ProfileOptions popts;
  popts.warmup = o.warmup;
  popts.repeats = o.repeats;
  popts.want_result = o.check || !o.output_dir.empty();  // one more, untimed run
  popts.compile = std::move(copts);
  absl::StatusOr<ProfileResult> profile = CompileAndProfile(**module, args, popts);
  if (!profile.ok()) return ReportError(profile.status());
  if (absl::Status s = emitter_dump.Finish(); !s.ok()) return ReportError(s);
  const std::vector<double>& wall_ms = profile->wall_ms;
  const std::vector<double>& kernel_ms = profile->kernel_ms;
  Literal& result = profile->result;

  std::vector<const Literal*> leaves;
  FlattenLeaves(result, leaves);
  if (!o.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.output_dir, ec);
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (absl::Status s = WriteNpy(*leaves[i], StrCat(o.output_dir, "/output_", i, ".npy")); !s.ok()) {
        return ReportError(s);
      }
    }
  }
  std::string check_message;
  bool check_ok = true;
  if (o.check) {
    std::vector<const Literal*> expected_leaves;
    FlattenLeaves(*expected, expected_leaves);
    OutputCheck same = CheckOutputs(expected_leaves, leaves, OutputCheckOptions{.tolerance = o.tolerance});
    check_ok = same.ok;
    check_message = same.message;
  }
  if (!o.trace.empty()) {
    std::ofstream out(o.trace);
    out << ChromeTraceJson(profile->last_step);
    if (!out) return ReportError(absl::InternalError(StrCat("cannot write trace '", o.trace, "'")));
  }

  const double optimize_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double compile_ms = profile->compile_ms;
  const ExecutableMemory& mem = profile->memory;
  const KernelSummary& summary = profile->summary;
  if (o.format == "json") {
    nlohmann::json j;
    j["device"] = o.device;
    j["pipeline"] = o.pipeline;
    j["repeats"] = o.repeats;
    j["optimize_ms"] = optimize_ms;
    j["compile_ms"] = compile_ms;
    j["kernel_ms_median"] = Median(kernel_ms);
    j["wall_ms_median"] = Median(wall_ms);
    j["kernel_ms"] = kernel_ms;
    j["wall_ms"] = wall_ms;
    j["peak_bytes"] = mem.peak_bytes();
    j["arena_bytes"] = mem.arena_bytes;
    j["kernel_cache_hits"] = CpuKernelCompiler::CacheHits();
    j["kernel_cache_misses"] = CpuKernelCompiler::CacheMisses();
    nlohmann::json rows = nlohmann::json::array();
    for (const KernelSummaryRow& r : summary.rows) {
      rows.push_back({{"name", r.name}, {"computation", r.computation}, {"kind", KernelKindName(r.kind)},
                      {"detail", r.detail}, {"calls", r.calls}, {"total_ns", r.total_ns},
                      {"median_ns", r.median_ns}, {"share", r.share}, {"bytes", r.bytes}, {"flops", r.flops}});
    }
    j["kernels"] = rows;
    if (o.check) {
      j["check"] = {{"ok", check_ok}, {"message", check_message}};
    }
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}", FormatKernelTable(summary, o.max_rows));
    fmt::print("\nsteps              {} (after {} warm-up)\n", o.repeats, o.warmup);
    fmt::print("kernel time/step   {:.3f} ms (median)\n", Median(kernel_ms));
    fmt::print("wall time/step     {:.3f} ms (median)\n", Median(wall_ms));
    fmt::print("peak memory        {:.1f} MiB (arena {:.1f} MiB)\n", mem.peak_bytes() / 1048576.0,
               mem.arena_bytes / 1048576.0);
    fmt::print("optimize time      {:.1f} ms (pipeline '{}')\n", optimize_ms, o.pipeline);
    fmt::print("compile time       {:.1f} ms ({} kernels compiled, {} cache hits)\n", compile_ms,
               CpuKernelCompiler::CacheMisses(), CpuKernelCompiler::CacheHits());
    if (o.check) fmt::print("check              {}\n", check_ok ? StrCat("ok: ", check_message) : std::string("FAILED"));
    if (!o.trace.empty()) fmt::print("trace              {} (Chrome trace JSON; open in Perfetto)\n", o.trace);
    if (!o.emitter_dump.empty()) {
      fmt::print("emitter dumps      {} kernels in {}/\n", emitter_dump.kernels(), o.emitter_dump);
    }
  }
  if (!check_ok) {
    fmt::print(stderr, "passlab: error: --check: outputs differ from the evaluator: {}\n", check_message);
    return 1;
  }
  return 0;
}

}  // namespace

void AddRunCommand(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Optimize, compile and run a module; time every kernel");
  cmd->add_option("file", o->file, "HLO text file ('-' for stdin)");
  o->source = AddModelSourceOptions(cmd);
  cmd->add_option("--pipeline", o->pipeline, "Pipeline before compiling ('none' to compile the input as is)");
  cmd->add_option("--disable", o->disable, "Pass filters to skip: name, name:N, pipe/name, @ID, regex");
  cmd->add_option("--device", o->device, "Backend")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--warmup", o->warmup, "Untimed runs first")->check(CLI::NonNegativeNumber);
  cmd->add_option("--repeats", o->repeats, "Timed runs")->check(CLI::PositiveNumber);
  cmd->add_flag("--check", o->check, "Compare the outputs with the evaluator (fails with the worst mismatch)");
  cmd->add_option("--tolerance", o->tolerance, "Absolute and relative tolerance of --check");
  cmd->add_option("--seed", o->seed, "Seed of the random inputs");
  cmd->add_option("--output-dir", o->output_dir, "Write each output leaf as DIR/output_<i>.npy (as `passlab eval` does)");
  cmd->add_option("--trace", o->trace, "Write the last run as Chrome trace JSON");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--threads", o->threads, "Kernel threads (0 = all cores, 1 = calling thread only)");
  cmd->add_option("--max-rows", o->max_rows, "Kernel table rows (0 = all)");
  cmd->add_option("--emitter-dump", o->emitter_dump, "Write each kernel's MLIR after every emitter pass to DIR/<kernel>/");
  cmd->add_option("--emitter-disable", o->emitter_disable, "Emitter passes to skip (comma-separated, e.g. vectorize,unroll)");
  cmd->callback([o, &result] { result.exit_code = RunRun(*o); });
}

}  // namespace passlab
