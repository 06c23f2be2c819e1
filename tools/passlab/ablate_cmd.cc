// passlab ablate: disable-one / add-one / pair sweeps over a pipeline's
// passes, each variant compiled and timed in its own worker process, with
// statistics, correctness verdicts and reports (analysis/ablation/).
// `passlab ablate-worker` is the worker side (hidden; the runner starts it).
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis/ablation/plan.h"
#include "analysis/ablation/report.h"
#include "analysis/ablation/runner.h"
#include "analysis/ablation/worker.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_printer.h"
#include "passes/pipelines/pipelines.h"
#include "tools/passlab/commands.h"

namespace passlab {
namespace {

struct AblateOptions {
  std::string file;
  std::shared_ptr<ModelSource> source;
  std::string out;
  std::string sweep = "disable-one";
  bool per_occurrence = false;
  int top_k = 0;
  std::string variants_file;
  std::string pipeline = "gpu";
  int repeats = 10;
  int warmup = 2;
  double timeout_s = 600;
  int jobs = 1;
  int block = 8;
  int threads = 1;
  uint64_t seed = 1;
  std::string reference = "evaluator";
  double tolerance = 1e-3;
  std::string metric = "kernel";
  double threshold = 0.01;
  std::string correction = "holm";
  std::vector<std::string> trace_variants;
  bool dry_run = false;
  bool report_only = false;
  std::vector<std::string> argv;
};

std::string SelfExe() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("passlab") : p.string();
}

nlohmann::json ModelJson(const AblateOptions& o) {
  nlohmann::json j;
  if (o.source->model.empty()) {
    j["file"] = o.file;
    return j;
  }
  const ModelSource& s = *o.source;
  j["name"] = s.model;
  nlohmann::json opts = nlohmann::json::object();
  auto add = [&](const char* key, int64_t v) {
    if (v > 0) opts[key] = v;
  };
  add("batch", s.batch);
  add("image_size", s.image_size);
  add("classes", s.classes);
  add("depth", s.depth);
  add("width", s.width);
  add("seq_len", s.seq_len);
  add("heads", s.heads);
  add("vocab", s.vocab);
  if (!s.dtype.empty()) opts["dtype"] = s.dtype;
  if (!s.layout.empty()) opts["layout"] = s.layout;
  if (s.inference) opts["inference"] = true;
  j["options"] = opts;
  return j;
}

absl::StatusOr<std::vector<AblationVariant>> MakePlan(const AblateOptions& o,
                                                      const std::vector<PassOccurrence>& occurrences) {
  if (o.sweep == "disable-one" || o.sweep == "pairs") return PlanDisableOne(occurrences, o.per_occurrence);
  if (o.per_occurrence) return absl::InvalidArgumentError("--per-occurrence applies to --sweep disable-one");
  if (o.sweep == "add-one") return PlanAddOne(occurrences);
  if (o.sweep == "file") {
    if (o.variants_file.empty()) return absl::InvalidArgumentError("--sweep file needs --variants FILE");
    return ReadVariantFile(o.variants_file, occurrences);
  }
  return absl::InvalidArgumentError(StrCat("unknown sweep '", o.sweep, "'"));
}

// report.json/csv/md/html and gbench.json from <out>'s records; prints the
// Markdown headline.
int WriteReports(const AblateOptions& o) {
  absl::StatusOr<std::vector<nlohmann::json>> records = ReadAblationRecords(o.out);
  if (!records.ok()) return ReportError(records.status());
  if (records->empty()) {
    return ReportError(absl::NotFoundError(StrCat("'", o.out, "' holds no results (no results.jsonl records)")));
  }
  std::ifstream in(std::filesystem::path(o.out) / "manifest.json");
  nlohmann::json manifest = nlohmann::json::parse(in, nullptr, false);
  if (manifest.is_discarded()) manifest = nlohmann::json::object();
  ReportOptions options;
  options.metric = o.metric == "wall"          ? AblationMetric::kWallNs
                   : o.metric == "kernel+copy" ? AblationMetric::kKernelCopyNs
                                               : AblationMetric::kKernelNs;
  options.threshold = o.threshold;
  absl::StatusOr<PValueCorrection> correction = ParsePValueCorrection(o.correction);
  if (!correction.ok()) return ReportError(correction.status());
  options.correction = *correction;
  nlohmann::ordered_json report = BuildAblationReport(manifest, *records, options);
  if (absl::Status s = WriteAblationReports(report, o.out); !s.ok()) return ReportError(s);
  fmt::print("{}", RenderAblationMarkdown(report));
  fmt::print("\nreports: {0}/report.html, report.md, report.csv, report.json, gbench.json\n", o.out);
  return 0;
}

int RunAblate(const AblateOptions& o) {
  if (o.report_only) {
    if (o.out.empty()) return ReportError(absl::InvalidArgumentError("--report-only needs --out DIR"));
    return WriteReports(o);
  }
  if (!o.variants_file.empty() && o.sweep != "file") {
    return ReportError(absl::InvalidArgumentError("--variants FILE needs --sweep file"));
  }
  if (o.sweep == "pairs" && o.top_k < 2) {
    return ReportError(absl::InvalidArgumentError("--sweep pairs needs --top-k K (K >= 2)"));
  }
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline = BuildNamedPipeline(o.pipeline);
  if (!pipeline.ok()) return ReportError(pipeline.status());
  const std::vector<PassOccurrence>& occurrences = (*pipeline)->Occurrences();
  absl::StatusOr<std::vector<AblationVariant>> plan = MakePlan(o, occurrences);
  if (!plan.ok()) return ReportError(plan.status());

  if (o.dry_run) {
    int runs = 0;
    fmt::print("{:<44} {:<18} {}\n", "variant", "kind", "filter");
    for (const AblationVariant& v : *plan) {
      std::string filter = v.required ? StrCat("not run: required (", v.required_reason, ")")
                           : v.enable_only.empty() ? StrCat("--disable ", v.disable)
                                                   : StrCat("--enable-only ", v.enable_only);
      fmt::print("{:<44} {:<18} {}\n", v.name, v.kind, filter);
      runs += v.required ? 0 : 1;
    }
    int blocks = (runs + o.block - 1) / std::max(1, o.block);
    fmt::print("\n{} variants to run in {} block(s) of up to {} (+1 baseline each), {} warm-up + {} timed "
               "repetitions each{}\n",
               runs, blocks, o.block, o.warmup, o.repeats,
               o.sweep == "pairs" ? StrCat("; then every pair among the top ", o.top_k, " passes") : "");
    return 0;
  }
  if (o.out.empty()) return ReportError(absl::InvalidArgumentError("ablate: --out DIR is required (or --dry-run)"));
  auto module = LoadModule(o.file, *o.source);
  if (!module.ok()) return ReportError(module.status());

  AblationOptions a;
  a.out_dir = o.out;
  a.input_text = PrintModule(**module);
  a.pipeline = o.pipeline;
  a.plan = std::move(*plan);
  a.pairs_top_k = o.sweep == "pairs" ? o.top_k : 0;
  a.repeats = o.repeats;
  a.warmup = o.warmup;
  a.timeout_s = o.timeout_s;
  a.jobs = o.jobs;
  a.block_size = o.block;
  a.threads = o.threads;
  a.seed = o.seed;
  a.reference = o.reference;
  a.tolerance = o.tolerance;
  a.trace_variants = o.trace_variants;
  a.worker_exe = SelfExe();
  a.progress = isatty(2);
  a.manifest["command"] = Join(o.argv, " ");
  a.manifest["passlab_version"] = "0.1.0";
  a.manifest["sweep"] = o.sweep;
  a.manifest["model"] = ModelJson(o);
  a.manifest["instructions"] = (*module)->instruction_count();
  if (absl::Status s = RunAblation(a); !s.ok()) return ReportError(s);
  return WriteReports(o);
}

}  // namespace

void AddAblateCommand(CLI::App& app, CommandResult& result, int argc, char** argv) {
  auto o = std::make_shared<AblateOptions>();
  o->argv.assign(argv, argv + argc);
  auto* cmd = app.add_subcommand("ablate", "Disable-one-pass sweeps: every variant compiled, checked and timed");
  cmd->add_option("file", o->file, "HLO text file ('-' for stdin)");
  o->source = AddModelSourceOptions(cmd);
  cmd->add_option("--out", o->out, "Output directory (rerun with the same one to resume)");
  cmd->add_option("--sweep", o->sweep, "disable-one | add-one | pairs (needs --top-k) | file (needs --variants)")
      ->check(CLI::IsMember({"disable-one", "add-one", "pairs", "file"}));
  cmd->add_flag("--per-occurrence", o->per_occurrence, "disable-one: one variant per pass occurrence");
  cmd->add_option("--top-k", o->top_k, "pairs: every pair among the K passes that matter most");
  cmd->add_option("--variants", o->variants_file, "file: one 'NAME: FILTERS' or 'NAME: enable-only FILTERS' per line");
  cmd->add_option("--pipeline", o->pipeline, "Pipeline to ablate");
  cmd->add_option("--repeats", o->repeats, "Timed repetitions per variant")->check(CLI::Range(2, 100000));
  cmd->add_option("--warmup", o->warmup, "Untimed runs first")->check(CLI::NonNegativeNumber);
  cmd->add_option("--timeout", o->timeout_s, "Seconds a worker may take for one step (compile, one run)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--jobs", o->jobs, "Variants compiling at once (timing runs never overlap)")->check(CLI::PositiveNumber);
  cmd->add_option("--block", o->block, "Variants timed round-robin together (each holds its program in memory)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--threads", o->threads, "Kernel threads per variant")->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->seed, "Seed of the random inputs");
  cmd->add_option("--reference", o->reference,
                  "Check outputs against: evaluator (the unoptimized input) | baseline (big models) | none")
      ->check(CLI::IsMember({"evaluator", "baseline", "none"}));
  cmd->add_option("--tolerance", o->tolerance, "Absolute and relative tolerance of the output check");
  cmd->add_option("--metric", o->metric, "Statistic to compare: kernel | kernel+copy | wall")
      ->check(CLI::IsMember({"kernel", "kernel+copy", "wall"}));
  cmd->add_option("--threshold", o->threshold, "Smallest relative change that counts (0.01 = 1%)");
  cmd->add_option("--correction", o->correction, "Multiple-testing correction: holm | bh")
      ->check(CLI::IsMember({"holm", "bh"}));
  cmd->add_option("--trace-variant", o->trace_variants, "Also write this variant's Chrome trace (repeatable)");
  cmd->add_flag("--dry-run", o->dry_run, "Print the plan and exit");
  cmd->add_flag("--report-only", o->report_only,
                "Rebuild the reports of --out DIR from its results (e.g. with another --metric or --threshold)");
  cmd->callback([o, &result] { result.exit_code = RunAblate(*o); });

  auto w = std::make_shared<AblationWorkerOptions>();
  auto* worker = app.add_subcommand("ablate-worker", "");  // empty description: hidden
  worker->add_option("--input", w->input)->required();
  worker->add_option("--pipeline", w->pipeline);
  worker->add_option("--disable", w->disable);
  worker->add_option("--enable-only", w->enable_only);
  worker->add_option("--threads", w->threads);
  worker->add_option("--seed", w->seed);
  worker->add_option("--reference-dir", w->reference_dir);
  worker->add_option("--tolerance", w->tolerance);
  worker->add_option("--write-reference", w->write_reference);
  worker->add_option("--diff-dir", w->diff_dir);
  worker->add_option("--diff-passes", w->diff_passes)->delimiter(',');
  worker->add_option("--snapshot", w->snapshot_path);
  worker->add_option("--autotune-cache", w->autotune_cache);
  worker->add_option("--variant", w->variant);
  worker->add_option("--fd-in", w->fd_in);
  worker->add_option("--fd-out", w->fd_out);
  worker->callback([w, &result] { result.exit_code = RunAblationWorker(*w); });
}

}  // namespace passlab
