// passlab opt: run a pipeline (or a list of passes) with XLA-style filters and
// LLVM/MLIR-style instrumentation; passlab diff: diff two HLO files.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/ir_diff.h"
#include "core/ir/file_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/pass/pass_filter.h"
#include "core/pass/verify_each_observer.h"
#include "core/pass/pass_recorder.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/codegen/gpu_kernel_compiler.h"
#include "core/backends/cpu/executable.h"
#include "tools/passlab/commands.h"
#include "tools/passlab/emitter_dump.h"
#include "tools/passlab/xla_flags.h"

namespace passlab {
namespace {

struct OptOptions {
  std::string file;
  std::shared_ptr<ModelSource> source;  // --model NAME instead of FILE
  std::string pipeline;
  std::string passes;
  std::string disable;
  std::string enable_only;
  bool disable_all = false;
  std::string print_changed;  // quiet|full|diff|cdiff
  std::string print_before;
  std::string print_after;
  std::string dump_to;
  std::string emitter_dump;     // after the pipeline: every kernel's MLIR after every emitter pass
  std::string emitter_disable;  // emitter passes to skip
  std::string emit_ptx;         // after the pipeline: every kernel's PTX (GPU code generator)
  bool time_passes = false;
  bool stats = false;
  bool verify_each = false;
  int64_t bisect_limit = -1;
  std::string output;
  bool list_passes = false;
  std::string format = "text";
  std::vector<std::string> pass_options;  // --pass-option PASS.OPTION=VALUE
  XlaFlags xla;                           // --xla_* (and XLA_FLAGS)
};

// LLVM's -opt-bisect-limit: runs passes up to the limit, skips the rest,
// and says which run was last.
class BisectObserver : public PassObserver {
 public:
  explicit BisectObserver(int64_t limit) : limit_(limit) {}
  bool ShouldRun(const PassRunInfo& info) override {
    bool run = count_ < limit_;
    std::fprintf(stderr, "BISECT: %s pass (%lld) %s (@%lld in %s)\n", run ? "running" : "NOT running",
                 static_cast<long long>(count_ + 1), info.pass_name.c_str(),
                 static_cast<long long>(info.occurrence_id), info.pipeline_path.c_str());
    ++count_;
    return run;
  }

 private:
  int64_t limit_;
  int64_t count_ = 0;
};

// --print-changed / --print-before / --print-after, printing to stdout as
// LLVM's -print-changed and MLIR's --mlir-print-ir-after-change do.
class PrintObserver : public PassObserver {
 public:
  PrintObserver(std::string mode, std::vector<PassFilterTerm> before, std::vector<PassFilterTerm> after)
      : mode_(std::move(mode)), before_(std::move(before)), after_(std::move(after)) {}
  absl::Status BeforePass(const PassRunInfo& info, const HloModule& module) override {
    text_before_ = PrintModule(module);
    for (const PassFilterTerm& t : before_) {
      if (t.Matches(info)) {
        fmt::print("*** IR dump before {} (@{} in {}, iteration {}) ***\n{}\n", info.pass_name,
                   info.occurrence_id, info.pipeline_path, info.iteration, text_before_);
        break;
      }
    }
    return absl::OkStatus();
  }
  absl::Status AfterPass(const PassRunInfo& info, const HloModule& module, bool, uint64_t before,
                         uint64_t after, const PassCounters&) override {
    std::string header = fmt::format("{} (@{} in {}, iteration {})", info.pass_name,
                                     info.occurrence_id, info.pipeline_path, info.iteration);
    for (const PassFilterTerm& t : after_) {
      if (t.Matches(info)) {
        fmt::print("*** IR dump after {} ***\n{}\n", header, PrintModule(module));
        break;
      }
    }
    if (mode_.empty()) return absl::OkStatus();
    if (before == after) {
      if (mode_ != "quiet") fmt::print("*** IR dump after {} omitted because no change ***\n", header);
      return absl::OkStatus();
    }
    std::string now = PrintModule(module);
    if (mode_ == "full" || mode_ == "quiet") {
      fmt::print("*** IR dump after {} ***\n{}\n", header, now);
    } else {
      UnifiedDiffOptions o;
      o.color = mode_ == "cdiff";
      o.before_label = "before " + info.pass_name;
      o.after_label = "after " + info.pass_name;
      fmt::print("*** IR diff after {} ***\n{}", header, UnifiedDiff(text_before_, now, o));
    }
    return absl::OkStatus();
  }

 private:
  std::string mode_;
  std::vector<PassFilterTerm> before_, after_;
  std::string text_before_;
};

absl::StatusOr<std::unique_ptr<HloPassPipeline>> BuildPipeline(const OptOptions& o) {
  ASSIGN_OR_RETURN(PassOptionOverrides overrides, ParsePassOptionOverrides(o.pass_options));
  if (!o.passes.empty()) {
    auto pipeline = std::make_unique<HloPassPipeline>("passes");
    for (std::string_view name : SplitAny(o.passes, ",")) {
      const PassRegistryEntry* e = FindRegisteredPass(name);
      if (e == nullptr) {
        std::vector<std::string> names;
        for (const PassRegistryEntry& r : PassRegistry()) names.emplace_back(r.name);
        return absl::InvalidArgumentError(StrCat("unknown pass '", name, "'; known passes: ",
                                                 Join(names, ", ")));
      }
      auto it = overrides.find(std::string(name));
      pipeline->AddPass<HloPassFixBase>(it == overrides.end() ? e->factory() : e->Create(it->second), 1);
    }
    std::vector<std::string_view> listed = SplitAny(o.passes, ",");
    for (const auto& [pass, values] : overrides) {
      if (std::find(listed.begin(), listed.end(), pass) == listed.end()) {
        return absl::InvalidArgumentError(StrCat("--pass-option: --passes does not run pass '", pass, "'"));
      }
    }
    return pipeline;
  }
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
      BuildNamedPipeline(o.pipeline.empty() ? "default" : o.pipeline);
  if (!pipeline.ok()) return pipeline.status();
  RETURN_IF_ERROR(ApplyPassOptions(**pipeline, overrides));
  return pipeline;
}

int ListPasses(const OptOptions& o) {
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline =
      BuildNamedPipeline(o.pipeline.empty() ? "default" : o.pipeline);
  if (!pipeline.ok()) return ReportError(pipeline.status());
  const std::vector<PassOccurrence>& occurrences = (*pipeline)->Occurrences();
  // XLA's passes passlab does not run, in their place in today's pipeline.
  std::vector<NotModelledPass> not_modelled;
  if ((*pipeline)->name() == "gpu") not_modelled = NotModelledPasses();
  if (o.format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const PassRegistryEntry& e : PassRegistry()) {
      nlohmann::ordered_json j;
      j["name"] = e.name;
      j["class"] = e.class_name;
      j["group"] = e.group;
      j["required"] = e.required;
      if (e.required) j["required_reason"] = e.required_reason;
      j["description"] = e.description;
      nlohmann::ordered_json opts = nlohmann::ordered_json::array();
      for (const PassOptionSpec& spec : e.options) {
        opts.push_back({{"name", spec.name},
                        {"type", PassOptionTypeName(spec.type)},
                        {"default", spec.default_value},
                        {"description", spec.description}});
      }
      j["options"] = opts;
      nlohmann::ordered_json occ = nlohmann::ordered_json::array();
      for (const PassOccurrence& p : occurrences) {
        if (p.pass_name != e.name) continue;
        occ.push_back({{"id", p.id}, {"pipeline", p.pipeline_path}, {"index", p.index_in_pipeline},
                       {"occurrence", p.occurrence_index}, {"fixed_point", p.in_fixed_point}});
      }
      j["occurrences"] = occ;
      j["modelled"] = true;
      out.push_back(j);
    }
    for (const NotModelledPass& n : not_modelled) {
      out.push_back({{"name", n.xla_name},
                     {"modelled", false},
                     {"reason", n.reason},
                     {"occurrences", nlohmann::ordered_json::array({{{"pipeline", n.pipeline_path},
                                                                     {"after", n.after}}})}});
    }
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("{} passes in the registry; pipeline '{}' has {} pass occurrences\n\n",
             PassRegistry().size(), (*pipeline)->name(), occurrences.size());
  // Column widths from the data: names like cudnn-fused-convolution-rewriter
  // are long. Each pass also shows where it runs (its sub-pipelines, by
  // their last path component) and how many occurrences the pipeline has.
  size_t name_w = 4, group_w = 5, where_w = 13, path_w = 8;
  std::map<std::string, std::vector<std::string>> where;
  for (const PassOccurrence& p : occurrences) {
    std::string_view path = p.pipeline_path;
    std::string leaf(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
    std::vector<std::string>& w = where[p.pass_name];
    if (std::find(w.begin(), w.end(), leaf) == w.end()) w.push_back(leaf);
    path_w = std::max(path_w, p.pipeline_path.size());
  }
  std::map<std::string, size_t> count;
  for (const PassOccurrence& p : occurrences) ++count[p.pass_name];
  for (const PassRegistryEntry& e : PassRegistry()) {
    name_w = std::max(name_w, e.name.size());
    group_w = std::max(group_w, e.group.size());
    where_w = std::max(where_w, Join(where[std::string(e.name)], ",").size());
  }
  fmt::print("{:<{}}  {:<{}}  {:<8}  {:>4}  {:<{}}  {}\n", "pass", name_w, "group", group_w, "required", "runs",
             "sub-pipelines", where_w, "description");
  for (const PassRegistryEntry& e : PassRegistry()) {
    fmt::print("{:<{}}  {:<{}}  {:<8}  {:>4}  {:<{}}  {}\n", e.name, name_w, e.group, group_w,
               e.required ? "yes" : "no", count[std::string(e.name)], Join(where[std::string(e.name)], ","), where_w, e.description);
  }
  // Each not-modelled pass goes after the first occurrence of the pass it
  // follows in its sub-pipeline (or before the sub-pipeline's first pass).
  std::map<size_t, std::vector<const NotModelledPass*>> before_row;
  for (const NotModelledPass& n : not_modelled) {
    size_t row = occurrences.size();
    for (size_t i = 0; i < occurrences.size(); ++i) {
      const PassOccurrence& p = occurrences[i];
      if (p.pipeline_path.rfind(n.pipeline_path, 0) != 0) continue;
      if (n.after.empty()) {
        row = i;
        break;
      }
      if (p.pass_name == n.after) {
        row = i + 1;
        break;
      }
    }
    before_row[row].push_back(&n);
  }
  auto print_not_modelled = [&](size_t row) {
    for (const NotModelledPass* n : before_row[row]) {
      fmt::print("{:>4}  {:<{}}  {:<{}}  not modelled: {}\n", "--", n->pipeline_path, path_w, n->xla_name, name_w,
                 n->reason);
    }
  };
  fmt::print("\n{:>4}  {:<{}}  {:<{}}  {}\n", "id", "pipeline", path_w, "pass", name_w, "occurrence");
  for (size_t i = 0; i < occurrences.size(); ++i) {
    print_not_modelled(i);
    const PassOccurrence& p = occurrences[i];
    fmt::print("{:>4}  {:<{}}  {:<{}}  {}{}\n", StrCat("@", p.id), p.pipeline_path, path_w, p.pass_name, name_w,
               p.occurrence_index, p.in_fixed_point ? " (fixed point)" : "");
  }
  print_not_modelled(occurrences.size());
  if (!not_modelled.empty()) {
    fmt::print("\n{} of XLA's passes on this path are not modelled (--, with the reason)\n", not_modelled.size());
  }
  return 0;
}

absl::Status DumpEmitterPasses(const HloModule& module, const OptOptions& o) {
  CpuCompileOptions copts;
  for (std::string_view name : SplitAny(o.emitter_disable, ",")) {
    if (!name.empty()) copts.disabled_passes.emplace_back(name);
  }
  EmitterDump dump(o.emitter_dump);
  dump.Attach(copts);
  CpuKernelCompiler compiler(copts);
  absl::StatusOr<std::unique_ptr<Executable>> exe =
      Executable::Create(module, [&](const HloInstruction& inst) { return compiler.Compile(inst); });
  if (!exe.ok()) return absl::Status(exe.status().code(), StrCat("--emitter-dump: compile: ", exe.status().message()));
  RETURN_IF_ERROR(dump.Finish());
  std::fprintf(stderr, "passlab opt: emitter passes of %zu kernels in %s/ (index.txt)\n", dump.kernels(),
               o.emitter_dump.c_str());
  return absl::OkStatus();
}

// --emit-ptx DIR: every kernel of the optimized module (those the CPU
// backend compiles) through the GPU code generator: DIR/<entry>.ptx and
// DIR/index.tsv (instruction, entry, emitter, grid, block, buffers).
absl::Status EmitPtx(const HloModule& module, const OptOptions& o) {
  std::error_code ec;
  std::filesystem::create_directories(o.emit_ptx, ec);
  if (ec) return absl::InvalidArgumentError(StrCat("--emit-ptx: cannot create ", o.emit_ptx, ": ", ec.message()));
  GpuCompileOptions gopts;
  gopts.use_cache = false;  // one file per kernel, even where two share code
  for (std::string_view name : SplitAny(o.emitter_disable, ",")) {
    if (!name.empty()) gopts.disabled_passes.emplace_back(name);
  }
  GpuKernelCompiler gpu(gopts);
  CpuCompileOptions copts;
  copts.num_threads = 1;
  CpuKernelCompiler cpu(copts);
  std::string index = "instruction\tentry\temitter\tgrid\tblock\tbuffers\n";
  absl::Status status;
  int kernels = 0;
  absl::StatusOr<std::unique_ptr<Executable>> exe =
      Executable::Create(module, [&](const HloInstruction& inst) -> absl::StatusOr<std::unique_ptr<CompiledKernel>> {
        ASSIGN_OR_RETURN(GpuKernel k, gpu.Compile(inst));
        std::ofstream out(std::filesystem::path(o.emit_ptx) / (k.entry + ".ptx"));
        out << k.ptx;
        if (!out && status.ok()) status = absl::InternalError(StrCat("--emit-ptx: cannot write ", k.entry, ".ptx"));
        index += StrCat(k.name, "\t", k.entry, "\t", EmitterKindName(k.emitter_kind), "\t", k.launch.grid_x, ",",
                        k.launch.grid_y, ",", k.launch.grid_z, "\t", k.launch.block_x, ",", k.launch.block_y, ",",
                        k.launch.block_z, "\t", k.num_buffers, "\n");
        ++kernels;
        return cpu.Compile(inst);
      });
  if (!exe.ok()) return absl::Status(exe.status().code(), StrCat("--emit-ptx: ", exe.status().message()));
  std::ofstream out(std::filesystem::path(o.emit_ptx) / "index.tsv");
  out << index;
  if (!out && status.ok()) status = absl::InternalError("--emit-ptx: cannot write index.tsv");
  if (!status.ok()) return status;
  std::fprintf(stderr, "passlab opt: PTX of %d kernels in %s/ (index.tsv)\n", kernels, o.emit_ptx.c_str());
  return absl::OkStatus();
}

int RunOpt(OptOptions o) {
  if (o.list_passes) return ListPasses(o);
  absl::StatusOr<XlaFlags> xla = ResolveXlaFlags(o.xla, o.disable, o.enable_only);
  if (!xla.ok()) return ReportError(xla.status());
  if (o.file.empty() && o.source->model.empty()) return ReportError(absl::InvalidArgumentError("opt: no input file"));
  if (!o.pipeline.empty() && !o.passes.empty()) {
    return ReportError(absl::InvalidArgumentError("--pipeline and --passes cannot be used together"));
  }
  // opt transforms shapes and allocates no array: no memory budget.
  auto module = LoadVerifiedModule(o.file, *o.source, ArrayUse::kShapesOnly);
  if (!module.ok()) return ReportError(module.status());
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline = BuildPipeline(o);
  if (!pipeline.ok()) return ReportError(pipeline.status());
  const std::vector<PassOccurrence>& occurrences = (*pipeline)->Occurrences();

  std::vector<std::unique_ptr<PassObserver>> observers;
  if (!o.disable.empty() || !o.enable_only.empty() || o.disable_all) {
    auto filter = PassFilterObserver::Create(o.disable, o.enable_only, o.disable_all, occurrences);
    if (!filter.ok()) return ReportError(filter.status());
    observers.push_back(std::move(*filter));
  }
  if (o.bisect_limit >= 0) observers.push_back(std::make_unique<BisectObserver>(o.bisect_limit));
  auto recorder = std::make_unique<PassRecorder>(PassRecorderOptions{.snapshots = !o.dump_to.empty()});
  PassRecorder* rec = recorder.get();
  observers.push_back(std::move(recorder));
  if (o.verify_each) observers.push_back(std::make_unique<VerifyEachObserver>());
  if (!o.print_changed.empty() || !o.print_before.empty() || !o.print_after.empty()) {
    auto before = ParsePassFilterList(o.print_before);
    auto after = ParsePassFilterList(o.print_after);
    if (!before.ok()) return ReportError(before.status());
    if (!after.ok()) return ReportError(after.status());
    if (absl::Status s = ValidatePassFilters(*before, occurrences); !s.ok()) return ReportError(s);
    if (absl::Status s = ValidatePassFilters(*after, occurrences); !s.ok()) return ReportError(s);
    observers.push_back(std::make_unique<PrintObserver>(o.print_changed, std::move(*before), std::move(*after)));
  }
  XlaDumpObserver* xla_dump = nullptr;
  if (!xla->dump_to.empty()) {
    absl::StatusOr<std::unique_ptr<XlaDumpObserver>> d = XlaDumpObserver::Create(*xla);
    if (!d.ok()) return ReportError(d.status());
    xla_dump = d->get();
    if (absl::Status s = xla_dump->WriteBefore(**module); !s.ok()) return ReportError(s);
    observers.push_back(std::move(*d));
  }
  for (auto& obs : observers) (*pipeline)->AddObserver(obs.get());

  absl::StatusOr<bool> changed = (*pipeline)->Run(**module);
  int exit_code = 0;
  if (!changed.ok()) exit_code = ReportError(changed.status());
  if (exit_code == 0 && xla_dump != nullptr) {
    if (absl::Status s = xla_dump->WriteAfter(**module); !s.ok()) exit_code = ReportError(s);
  }
  if (!o.dump_to.empty()) {
    if (absl::Status s = WritePassDump(*rec, o.dump_to); !s.ok()) exit_code = ReportError(s);
  }
  if (exit_code == 0 && !o.emitter_dump.empty()) {
    // The backend's half of the pipeline: compile every kernel of the
    // optimized module (nothing runs) and dump each emitter pass.
    if (absl::Status s = DumpEmitterPasses(**module, o); !s.ok()) exit_code = ReportError(s);
  }
  if (exit_code == 0 && !o.emit_ptx.empty()) {
    if (absl::Status s = EmitPtx(**module, o); !s.ok()) exit_code = ReportError(s);
  }
  if (o.time_passes) {
    // LLVM -time-passes style, to stderr so stdout stays the module.
    double total = 0;
    for (const auto& t : rec->TotalsByPass()) total += t.total_ms;
    std::fprintf(stderr, "===-------------------------------------------------===\n");
    std::fprintf(stderr, "                 passlab pass timing report\n");
    std::fprintf(stderr, "===-------------------------------------------------===\n");
    std::fprintf(stderr, "  Total: %.3f ms over %zu runs\n\n", total, rec->runs().size());
    std::fprintf(stderr, "  %10s %7s %6s %8s  %s\n", "wall ms", "%", "runs", "changed", "pass");
    for (const auto& t : rec->TotalsByPass()) {
      std::fprintf(stderr, "  %10.3f %6.1f%% %6lld %8lld  %s\n", t.total_ms,
                   total > 0 ? 100.0 * t.total_ms / total : 0.0, static_cast<long long>(t.runs),
                   static_cast<long long>(t.changed), t.pass_name.c_str());
    }
    // What watching cost: the canonical texts behind fingerprints and
    // snapshots (outside the pass times above).
    const PipelineRunStats& inst = (*pipeline)->last_run_stats();
    std::fprintf(stderr, "\n  instrumentation: %.3f ms for %lld module texts (%lld instruction lines printed)\n",
                 inst.seconds * 1e3, static_cast<long long>(inst.texts), static_cast<long long>(inst.lines_printed));
  }
  if (o.stats) {
    std::fprintf(stderr, "\n  %-5s %-40s %-4s %8s %8s  %s\n", "run", "pass (@id/iteration)", "chg",
                 "instrs", "delta", "counters / opcode delta");
    for (const PassRunRecord& r : rec->runs()) {
      if (r.outcome == PassRunRecord::Outcome::kSkipped) {
        std::fprintf(stderr, "  %-5lld %-40s skipped\n", static_cast<long long>(r.info.run_index),
                     StrCat(r.info.pass_name, " (@", r.info.occurrence_id, ")").c_str());
        continue;
      }
      std::string details;
      for (const auto& [k, v] : r.counters) StrAppend(&details, details.empty() ? "" : ", ", k, ": ", v);
      for (const auto& [k, v] : r.opcode_delta) {
        StrAppend(&details, details.empty() ? "" : ", ", k, v > 0 ? " +" : " ", v);
      }
      std::fprintf(stderr, "  %-5lld %-40s %-4s %8lld %+8lld  %s\n", static_cast<long long>(r.info.run_index),
                   StrCat(r.info.pass_name, " (@", r.info.occurrence_id, "/", r.info.iteration, ")").c_str(),
                   r.changed ? "yes" : "no", static_cast<long long>(r.instructions_after),
                   static_cast<long long>(r.instructions_after - r.instructions_before), details.c_str());
    }
    for (const FixedPointRecord& f : rec->fixed_points()) {
      std::fprintf(stderr, "  fixed point %s: %lld iteration(s)%s%s\n", f.path.c_str(),
                   static_cast<long long>(f.iterations), f.hit_limit ? ", HIT THE ITERATION LIMIT" : "",
                   f.cycled ? ", stopped: the module cycled" : "");
    }
  }
  std::fflush(stderr);
  if (exit_code != 0) return exit_code;
  std::string text = PrintModule(**module);
  if (o.output == "-") {  // stdout, as FILE "-" is stdin
    fmt::print("{}", text);
  } else if (o.output.empty()) {
    if (o.print_changed.empty() && o.print_after.empty()) fmt::print("{}", text);
  } else {
    if (absl::Status s = WriteStringToFile(o.output, text); !s.ok()) return ReportError(s);
  }
  return 0;
}

}  // namespace

void AddOptCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("opt", "Run HLO passes with filters, diffs, timers and dumps");
  auto o = std::make_shared<OptOptions>();
  cmd->add_option("FILE", o->file, "HLO text file ('-' for stdin)");
  o->source = AddModelSourceOptions(cmd);
  cmd->add_option("--pipeline", o->pipeline, "Named pipeline: gpu (today's XLA:GPU, the default), gpu-2021 (seed 003's era), or a sub-pipeline (see --list-passes)");
  cmd->add_option("--passes", o->passes, "Comma-separated passes to run instead of a pipeline");
  cmd->add_option("--disable", o->disable, "Pass filters to skip: name, name:N, pipe/name, @ID, regex");
  cmd->add_option("--enable-only", o->enable_only, "Run only passes matching these filters");
  cmd->add_flag("--disable-all", o->disable_all, "Skip every pass (pipelines are still entered)");
  cmd->add_option("--print-changed", o->print_changed, "Print IR after passes that change it")
      ->check(CLI::IsMember({"quiet", "full", "diff", "cdiff"}));
  cmd->add_option("--print-before", o->print_before, "Print IR before passes matching these filters");
  cmd->add_option("--print-after", o->print_after, "Print IR after passes matching these filters");
  cmd->add_option("--dump-to", o->dump_to, "Write before/after snapshots and index.json here");
  cmd->add_option("--emitter-dump", o->emitter_dump,
                  "Compile the result's kernels and write each one's MLIR (and diff) after every emitter pass to DIR/<kernel>/");
  cmd->add_option("--emitter-disable", o->emitter_disable,
                  "Emitter passes to skip with --emitter-dump/--emit-ptx (comma-separated)");
  cmd->add_option("--emit-ptx", o->emit_ptx,
                  "Compile the result's kernels for the GPU (sm_90) and write DIR/<entry>.ptx and DIR/index.tsv");
  cmd->add_flag("--time-passes", o->time_passes, "Report wall time per pass (stderr)");
  cmd->add_flag("--stats", o->stats, "Report every run: changed, size delta, counters (stderr)");
  cmd->add_flag("--verify-each", o->verify_each, "Run the verifier after every pass that changed the module");
  cmd->add_option("--bisect-limit", o->bisect_limit, "Run only the first N pass runs (like -opt-bisect-limit)");
  cmd->add_option("-o,--output", o->output, "Write the optimized module here ('-': stdout)");
  cmd->add_flag("--list-passes", o->list_passes, "List registered passes and pipeline occurrences");
  cmd->add_option("--format", o->format, "Output format of --list-passes")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--pass-option", o->pass_options,
                  "PASS.OPTION=VALUE by XLA's option names (repeatable; see --list-passes --format json)");
  AddXlaFlagOptions(cmd, o->xla);
  cmd->callback([o, &result] { result.exit_code = RunOpt(*o); });
}

void AddDiffCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("diff", "Diff two HLO modules (canonical text, or structurally)");
  auto a = std::make_shared<std::string>();
  auto b = std::make_shared<std::string>();
  auto side = std::make_shared<bool>(false);
  auto structural = std::make_shared<bool>(false);
  auto width = std::make_shared<int>(90);
  cmd->add_option("A", *a, "First HLO file")->required();
  cmd->add_option("B", *b, "Second HLO file")->required();
  cmd->add_flag("--side-by-side", *side, "Two columns instead of a unified diff");
  cmd->add_flag("--structural", *structural, "Added/removed/changed instructions by name");
  cmd->add_option("--width", *width, "Column width for --side-by-side");
  cmd->callback([=, &result] {
    auto ma = LoadHloFile(*a);
    if (!ma.ok()) {
      result.exit_code = ReportError(ma.status());
      return;
    }
    auto mb = LoadHloFile(*b);
    if (!mb.ok()) {
      result.exit_code = ReportError(mb.status());
      return;
    }
    if (*structural) {
      fmt::print("{}", DiffModules(**ma, **mb).ToString());
      return;
    }
    std::string ta = PrintModule(**ma), tb = PrintModule(**mb);
    if (*side) {
      fmt::print("{}", SideBySideDiff(ta, tb, *width));
    } else {
      fmt::print("{}", UnifiedDiff(ta, tb, {.before_label = *a, .after_label = *b}));
    }
  });
}

}  // namespace passlab
