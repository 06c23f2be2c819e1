// passlab ablate: disable-one / add-one / pair sweeps over a pipeline's
// passes, each variant compiled and timed in its own worker process, with
// statistics, correctness verdicts and reports (analysis/ablation/).
// `passlab ablate-worker` is the worker side (hidden; the runner starts it).
// `--executor slurm` runs the same sweep as a Slurm job array (slurm.h):
// `--run-task K` is an array task, `--merge DIR` the dependent merge job,
// `--status DIR` and `--resubmit-missing DIR` the user's follow-ups.
#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "analysis/ablation/aa_calibration.h"
#include "analysis/ablation/environment.h"
#include "analysis/ablation/plan.h"
#include "analysis/ablation/report.h"
#include "analysis/ablation/runner.h"
#include "analysis/ablation/slurm.h"
#include "analysis/ablation/worker.h"
#include "core/eval/arguments.h"
#include "core/eval/npy.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_printer.h"
#include "analysis/ablation/compare.h"
#include "passes/pipelines/pipelines.h"
#include "tools/passlab/commands.h"
#include "tools/passlab/xla_flags.h"

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
  std::vector<std::string> pass_options;  // --pass-option PASS.OPTION=VALUE
  XlaFlags xla;                           // --xla_* (and XLA_FLAGS)
  std::vector<std::string> removed;       // --xla_disable_hlo_passes: out of the pipeline
  int repeats = 10;
  int warmup = 2;
  double timeout_s = 600;
  int jobs = 1;
  int block = 8;
  int threads = 1;
  bool no_control = false;
  double target_ci_pct = 0;
  int max_repeats = 0;
  bool sequential = false;
  std::string device = "cpu";
  uint64_t seed = 1;
  std::string args_dir;  // --args DIR: real arguments (core/eval/arguments.h)
  std::string reference = "evaluator";
  double tolerance = 1e-3;
  std::string metric = "auto";
  double threshold = 0.01;
  std::string correction = "holm";
  std::vector<std::string> trace_variants;
  bool dry_run = false;
  bool report_only = false;
  std::string executor = "local";
  SlurmOptions slurm;
  int run_task = -1;
  std::string merge_dir, status_dir, resubmit_dir;
  std::vector<std::string> compare;  // --compare DIR1 DIR2 [...]
  std::string format = "md";         // of --compare: md | json
  std::string reproduce_dir;         // --reproduce DIR
  int copies = 0;                    // --sweep aa (0: the default, 6)
  double aa_band_pct = -1;           // --aa-band PCT (-1: not given)
  bool no_aa_band = false;
  std::string aa_calibration;        // --aa-calibration FILE (default: aa_calibration.h)
  int processes = 2;
  bool fixed_placement = false;
  bool time_identical = false;             // --time-identical
  std::vector<std::string> inject_delays;  // --test-inject-delay NAME=PCT
  std::string kernel_cache;                // --kernel-cache DIR (default: <out>/kernel_cache)
  bool no_kernel_cache = false;
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
  if (o.sweep == "aa") return PlanAaCopies(o.copies > 0 ? o.copies : 6);
  if (o.sweep == "file") {
    if (o.variants_file.empty()) return absl::InvalidArgumentError("--sweep file needs --variants FILE");
    return ReadVariantFile(o.variants_file, occurrences);
  }
  return absl::InvalidArgumentError(StrCat("unknown sweep '", o.sweep, "'"));
}

// report.json/csv/md/html and gbench.json in `dir` from a sweep's records
// (a local sweep's or every Slurm task's); prints the Markdown headline.
int WriteReports(const AblateOptions& o, const std::string& dir, const nlohmann::json& manifest,
                 const std::vector<AblationRecord>& records) {
  ReportOptions options;
  options.metric = o.metric == "wall"          ? AblationMetric::kWallNs
                   : o.metric == "kernel+copy" ? AblationMetric::kKernelCopyNs
                   : o.metric == "kernel-raw"  ? AblationMetric::kKernelRawNs
                   : o.metric == "kernel-cpu"  ? AblationMetric::kKernelCpuNs
                                               : AblationMetric::kKernelNs;
  if (o.metric == "auto") {
    // The sweep's own device and threads (a rebuilt report: its manifest's).
    const std::string device = manifest.value("device", o.device);
    const int64_t threads = manifest.value("threads", static_cast<int64_t>(o.threads));
    options.metric = DefaultAblationMetric(device, threads, records);
  } else if (options.metric == AblationMetric::kKernelCpuNs) {
    for (const AblationRecord& r : records) {
      if (r.samples && !r.samples->kernel_ns.empty() && r.samples->kernel_cpu_ns.empty()) {
        return ReportError(absl::InvalidArgumentError(
            StrCat("--metric kernel-cpu: record '", r.variant,
                   "' has no CPU times (the CPU backend records them; sweeps before them and GPU sweeps do "
                   "not): use --metric kernel")));
      }
    }
  }
  options.threshold = o.threshold;
  absl::StatusOr<PValueCorrection> correction = ParsePValueCorrection(o.correction);
  if (!correction.ok()) return ReportError(correction.status());
  options.correction = *correction;
  // The A/A band: --aa-band, else the sweep's own copies (the report
  // prefers them), else the calibration of this configuration, if any.
  const std::string calibration = o.aa_calibration.empty() ? DefaultAaCalibrationPath() : o.aa_calibration;
  // The configuration a band belongs to; none when the manifest is no sweep
  // manifest (then no calibration is looked up or stored).
  absl::StatusOr<AblationManifest> typed_manifest = ParseAblationManifest(manifest, StrCat(dir, "/manifest.json"));
  const std::optional<nlohmann::json> key =
      typed_manifest.ok() ? std::optional<nlohmann::json>(AaCalibrationKey(*typed_manifest)) : std::nullopt;
  if (o.no_aa_band) {
    options.no_aa_band = true;
  } else if (o.aa_band_pct >= 0) {
    options.aa_band = o.aa_band_pct / 100;
    options.aa_band_source = "--aa-band";
    options.aa_band_forced = true;
  } else if (key.has_value()) {
    absl::StatusOr<std::optional<AaCalibrationEntry>> entry = LookupAaBand(calibration, *key);
    if (!entry.ok()) return ReportError(entry.status());
    if (entry->has_value()) {
      options.aa_band = (*entry)->band;
      options.aa_band_source = DescribeAaCalibration(calibration, **entry);
    }
  }
  const AblationReport report = BuildAblationReport(manifest, records, options);
  if (absl::Status s = WriteAblationReports(report, dir); !s.ok()) return ReportError(s);
  // A sweep with A/A copies measured this configuration's band: keep it in
  // the sweep's directory and in the calibration file for later sweeps.
  if (report.aa.measured_band.has_value() && key.has_value()) {
    AaCalibrationEntry entry;
    entry.key = *key;
    entry.band = *report.aa.measured_band;
    entry.copies = static_cast<int>(report.aa.copies.size());
    std::error_code ec;
    entry.sweep_dir = std::filesystem::absolute(dir, ec).string();
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    entry.measured_at = stamp;
    if (absl::Status s = WriteFileAtomically((std::filesystem::path(dir) / "aa_band.json").string(),
                                             entry.ToJson().dump(2) + "\n");
        !s.ok()) {
      return ReportError(s);
    }
    if (absl::Status s = StoreAaBand(calibration, entry); !s.ok()) return ReportError(s);
  }
  fmt::print("{}", RenderAblationMarkdown(report));
  fmt::print("\nreports: {0}/report.html, report.md, report.csv, report.json, gbench.json\n", dir);
  return 0;
}

int WriteLocalReports(const AblateOptions& o) {
  absl::StatusOr<std::vector<AblationRecord>> records = ReadAblationRecords(o.out);
  if (!records.ok()) return ReportError(records.status());
  if (records->empty()) {
    return ReportError(absl::NotFoundError(StrCat("'", o.out, "' holds no results (no results.jsonl records)")));
  }
  // The manifest as written (a version-1 file stays one in report.json),
  // checked against its schema (records.h).
  const std::string manifest_path = (std::filesystem::path(o.out) / "manifest.json").string();
  std::ifstream in(manifest_path);
  nlohmann::json manifest = nlohmann::json::parse(in, nullptr, false);
  if (manifest.is_discarded()) {
    manifest = nlohmann::json::object();
  } else if (absl::StatusOr<AblationManifest> typed = ParseAblationManifest(manifest, manifest_path); !typed.ok()) {
    return ReportError(typed.status());
  }
  return WriteReports(o, o.out, manifest, *records);
}

std::string DescribeTasks(const SlurmSweepState& state, const std::vector<int>& tasks) {
  std::vector<std::string> parts;
  for (int k : tasks) {
    const SlurmTaskState& t = state.tasks[k];
    parts.push_back(StrCat("task ", k, " ", t.state(), " (", t.done, "/", t.variants.size(), " variants)"));
  }
  return Join(parts, ", ");
}

// The merge job: every task's records into the report a local sweep writes.
int MergeSlurm(const AblateOptions& o) {
  absl::StatusOr<SlurmSweepState> state = ReadSlurmSweep(o.merge_dir);
  if (!state.ok()) return ReportError(state.status());
  std::vector<int> incomplete = state->Incomplete();
  if (state->records.empty()) {
    return ReportError(absl::NotFoundError(StrCat("'", o.merge_dir, "': no task has recorded anything yet (",
                                                  DescribeTasks(*state, incomplete), ")")));
  }
  const nlohmann::json manifest = MergedManifest(*state);
  if (int rc = WriteReports(o, state->out_dir, manifest, state->records); rc != 0) return rc;
  if (incomplete.empty()) {
    fmt::print("merged {} task(s): all complete\n", state->tasks.size());
    return 0;
  }
  std::string message = StrCat("incomplete: ", DescribeTasks(*state, incomplete),
                               "; the report leaves their variants out. Resubmit just those with `passlab ablate "
                               "--resubmit-missing ", state->out_dir, "`");
  fmt::print("merged {} task(s); {}\n", state->tasks.size(), message);
  fmt::print(stderr, "passlab ablate: {}\n", message);
  return 0;
}

int ResubmitMissing(const AblateOptions& o) {
  absl::StatusOr<SlurmSweepState> state = ReadSlurmSweep(o.resubmit_dir);
  if (!state.ok()) return ReportError(state.status());
  std::vector<int> tasks = TasksToResubmit(*state);
  if (tasks.empty()) {
    fmt::print("nothing to resubmit: every task is done, pending or running\n");
    return 0;
  }
  if (o.dry_run) {
    fmt::print("would resubmit {}\n", DescribeTasks(*state, tasks));
    return 0;
  }
  absl::StatusOr<SlurmSubmission> submitted = SubmitSlurmSweep(o.resubmit_dir, tasks, o.slurm.array_parallelism);
  if (!submitted.ok()) return ReportError(submitted.status());
  fmt::print("resubmitted {}: job array {}, merge job {} (after it)\n", DescribeTasks(*state, tasks),
             submitted->array_job, submitted->merge_job);
  return 0;
}

// --executor slurm: the plan and scripts into --out, then sbatch (or, with
// --dry-run, the scripts and the commands that would submit them).
int SubmitSlurm(const AblateOptions& o, const AblationOptions& a) {
  SlurmOptions slurm = o.slurm;
  slurm.passlab_exe = SelfExe();
  slurm.merge_args = {"--metric", o.metric, "--threshold", StrCat(o.threshold), "--correction", o.correction};
  if (absl::Status s = WriteSlurmSweep(a, slurm); !s.ok()) return ReportError(s);
  absl::StatusOr<SlurmSweepState> state = ReadSlurmSweep(o.out);
  if (!state.ok()) return ReportError(state.status());
  const std::string dir = state->out_dir;
  int runs = 0;
  for (const AblationVariant& v : a.plan) runs += v.required ? 0 : 1;
  fmt::print("plan {}: {} variants to run in {} array task(s) of up to {} (+1 baseline each), {} warm-up + {} timed "
             "repetitions each; {}/plan.json, ablate.sbatch, merge.sbatch\n",
             state->plan_id, runs, state->tasks.size(), o.block, o.warmup, o.repeats, dir);
  if (o.dry_run) {
    std::ifstream script(std::filesystem::path(dir) / "ablate.sbatch");
    fmt::print("{}", std::string(std::istreambuf_iterator<char>(script), {}));
    fmt::print("would run: sbatch --parsable {0}/ablate.sbatch\n"
               "           sbatch --parsable --dependency=afterany:JOBID {0}/merge.sbatch\n",
               dir);
    return 0;
  }
  std::vector<int> tasks = TasksToResubmit(*state);
  if (tasks.empty()) {
    fmt::print("nothing to submit: every task of this plan is done, pending or running (--merge {} for the report)\n", dir);
    return 0;
  }
  if (static_cast<size_t>(tasks.size()) == state->tasks.size()) tasks.clear();  // all: the script's own --array
  absl::StatusOr<SlurmSubmission> submitted = SubmitSlurmSweep(dir, tasks, 0);
  if (!submitted.ok()) return ReportError(submitted.status());
  fmt::print("submitted job array {} ({} task(s)); merge job {} runs after it (afterany)\n"
             "progress: passlab ablate --status {}\n",
             submitted->array_job, tasks.empty() ? state->tasks.size() : tasks.size(), submitted->merge_job, dir);
  return 0;
}

// XLA's pass flags for a sweep: --xla_disable_hlo_passes takes passes (or
// sub-pipelines) out of the pipeline under study; the other pass and dump
// flags do not apply to a sweep.
absl::Status ResolveAblateXlaFlags(AblateOptions& o) {
  std::string disable, enable_only;
  ASSIGN_OR_RETURN(XlaFlags xla, ResolveXlaFlags(o.xla, disable, enable_only));
  if (!enable_only.empty()) {
    return absl::InvalidArgumentError(
        "ablate: --xla_enable_hlo_passes_only does not apply to a sweep (each variant chooses its passes; "
        "see --sweep add-one)");
  }
  if (!xla.dump_to.empty()) {
    std::fprintf(stderr, "passlab: warning: ablate writes no --xla_dump_to dumps (passlab opt does)\n");
  }
  for (std::string_view name : SplitAny(disable, ",")) {
    if (name.empty()) continue;
    ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> probe, BuildNamedPipeline(o.pipeline));
    if (RemovePassesByName(*probe, {std::string(name)}) == 0) {
      return absl::InvalidArgumentError(StrCat("--xla_disable_hlo_passes: pipeline '", o.pipeline,
                                               "' has no pass or sub-pipeline named '", name,
                                               "' (ablate takes names here, not filters)"));
    }
    o.removed.emplace_back(name);
  }
  return absl::OkStatus();
}

// --reproduce DIR: what differs between DIR's recorded environment and build
// and this machine's and build now, then the recorded command line again,
// with this build, into --out. The rerun re-invokes this binary with the
// recorded arguments (--out replaced) from the recorded working directory,
// so the same CLI parses them exactly as it did then; it never checks out or
// builds the recorded commit.
int Reproduce(const AblateOptions& o) {
  namespace fs = std::filesystem;
  const std::string& dir = o.reproduce_dir;
  if (o.out.empty()) {
    return ReportError(absl::InvalidArgumentError(
        StrCat("--reproduce ", dir, " needs --out NEW_DIR (the rerun's directory; ", dir, " keeps the recorded sweep)")));
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return ReportError(absl::NotFoundError(StrCat("--reproduce: '", dir, "' is not a directory")));
  const fs::path manifest_path = fs::path(dir) / "manifest.json";
  if (!fs::exists(manifest_path, ec)) {
    return ReportError(absl::NotFoundError(StrCat("--reproduce: '", dir, "' is not a sweep directory (no manifest.json)")));
  }
  std::ifstream in(manifest_path);
  const nlohmann::json recorded = nlohmann::json::parse(in, nullptr, false);
  if (recorded.is_discarded() || !recorded.is_object()) {
    return ReportError(absl::InvalidArgumentError(StrCat("--reproduce: '", manifest_path.string(), "' is not a JSON object")));
  }
  absl::StatusOr<AblationManifest> manifest = ParseAblationManifest(recorded, manifest_path.string());
  if (!manifest.ok()) return ReportError(absl::InvalidArgumentError(StrCat("--reproduce: ", manifest.status().message())));
  const fs::path out = fs::absolute(o.out, ec);
  if (fs::weakly_canonical(out, ec) == fs::weakly_canonical(fs::absolute(dir), ec)) {
    return ReportError(absl::InvalidArgumentError(
        StrCat("--reproduce: --out must be another directory than '", dir, "' (the recorded sweep stays as it is)")));
  }
  absl::StatusOr<std::vector<std::string>> args = ReproductionArguments(*manifest, out.string());
  if (!args.ok()) return ReportError(absl::InvalidArgumentError(StrCat("--reproduce '", dir, "': ", args.status().message())));

  nlohmann::json now;
  now["machine"] = DescribeMachine();
  now["environment"] = CollectEnvironment(out.string());
  fmt::print("reproducing {}: {}\n", dir, manifest->command.value_or("(no command recorded)"));
  nlohmann::json then;  // the recorded machine and environment, as `now`
  if (manifest->machine.has_value()) then["machine"] = *manifest->machine;
  if (manifest->environment.has_value()) then["environment"] = *manifest->environment;
  fmt::print("{}", RenderEnvironmentDifferences(then, now));
  // Relative paths in the command (an HLO file, --variants) meant the recorded working directory.
  std::string cwd = fs::current_path(ec).string();
  if (manifest->environment.has_value() && manifest->environment->is_object()) {
    std::string recorded_cwd = manifest->environment->value("cwd", std::string());
    if (!recorded_cwd.empty() && fs::is_directory(recorded_cwd, ec)) cwd = recorded_cwd;
  }
  const std::string exe = SelfExe();
  fmt::print("rerunning the recorded command line with this build (re-parsed by this binary, --out replaced; the "
             "recorded commit is not rebuilt), in {}:\n  {} {}\n",
             cwd, exe, Join(*args, " "));
  std::fflush(stdout);
  std::vector<std::string> child_args = {exe};
  child_args.insert(child_args.end(), args->begin(), args->end());
  std::vector<char*> child_argv;
  for (std::string& a : child_args) child_argv.push_back(a.data());
  child_argv.push_back(nullptr);
  // The rerun's manifest records where it came from (environment.variables).
  setenv("PASSLAB_REPRODUCED_FROM", fs::absolute(dir, ec).string().c_str(), 1);
  pid_t pid = fork();
  if (pid < 0) return ReportError(absl::InternalError("--reproduce: fork failed"));
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(127);
    execv(exe.c_str(), child_argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ReportError(absl::InternalError("--reproduce: waitpid failed"));
  }
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (rc != 0) {
    return ReportError(absl::InternalError(StrCat("--reproduce: the rerun of '", dir, "' failed (exit status ", rc, ")")));
  }
  fmt::print("reproduced {} into {}: {}/report.html; side by side: passlab ablate --compare {} {}\n", dir, out.string(),
             out.string(), dir, out.string());
  return 0;
}

int RunAblate(AblateOptions o) {
  if (!o.reproduce_dir.empty()) return Reproduce(o);
  if (!o.compare.empty()) {
    absl::StatusOr<nlohmann::ordered_json> c = CompareAblationSweeps(o.compare);
    if (!c.ok()) return ReportError(c.status());
    if (o.format == "json") {
      fmt::print("{}\n", c->dump(2));
    } else {
      fmt::print("{}", RenderComparisonMarkdown(*c));
    }
    return 0;
  }
  if (absl::Status s = ResolveAblateXlaFlags(o); !s.ok()) return ReportError(s);
  if (o.report_only) {
    if (o.out.empty()) return ReportError(absl::InvalidArgumentError("--report-only needs --out DIR"));
    return WriteLocalReports(o);
  }
  if (o.run_task >= 0) {
    if (o.out.empty()) return ReportError(absl::InvalidArgumentError("--run-task needs --out DIR"));
    if (absl::Status s = RunSlurmTask(o.out, o.run_task, SelfExe(), isatty(2)); !s.ok()) return ReportError(s);
    return 0;
  }
  if (!o.merge_dir.empty()) return MergeSlurm(o);
  if (!o.resubmit_dir.empty()) return ResubmitMissing(o);
  if (!o.status_dir.empty()) {
    absl::StatusOr<SlurmSweepState> state = ReadSlurmSweep(o.status_dir);
    if (!state.ok()) return ReportError(state.status());
    fmt::print("{}", RenderSlurmStatus(*state, true));
    return 0;
  }
  const bool slurm = o.executor == "slurm";
  if (!o.variants_file.empty() && o.sweep != "file") {
    return ReportError(absl::InvalidArgumentError("--variants FILE needs --sweep file"));
  }
  if (o.sweep != "aa" && o.copies > 0) {
    return ReportError(absl::InvalidArgumentError("--copies K needs --sweep aa"));
  }
  if (o.no_aa_band && o.aa_band_pct >= 0) {
    return ReportError(absl::InvalidArgumentError("--aa-band and --no-aa-band contradict each other"));
  }
  std::vector<std::pair<std::string, double>> inject_delays;
  for (const std::string& spec : o.inject_delays) {
    // NAME=PCT, PCT with or without '%'.
    size_t eq = spec.rfind('=');
    std::string pct = eq == std::string::npos ? "" : spec.substr(eq + 1);
    if (!pct.empty() && pct.back() == '%') pct.pop_back();
    char* end = nullptr;
    double v = pct.empty() ? -1 : std::strtod(pct.c_str(), &end);
    if (eq == 0 || eq == std::string::npos || end == nullptr || *end != '\0' || !(v > 0 && v <= 100)) {
      return ReportError(absl::InvalidArgumentError(
          StrCat("--test-inject-delay '", spec, "': expected VARIANT=PCT or PASS=PCT with PCT in (0, 100], e.g. fusion=2%")));
    }
    inject_delays.emplace_back(spec.substr(0, eq), v / 100);
  }
  if (o.sweep == "pairs" && o.top_k < 2) {
    return ReportError(absl::InvalidArgumentError("--sweep pairs needs --top-k K (K >= 2)"));
  }
  absl::StatusOr<PassOptionOverrides> pass_options = ParsePassOptionOverrides(o.pass_options);
  if (!pass_options.ok()) return ReportError(pass_options.status());
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline = BuildNamedPipeline(o.pipeline);
  if (!pipeline.ok()) return ReportError(pipeline.status());
  RemovePassesByName(**pipeline, o.removed);
  if (absl::Status s = ApplyPassOptions(**pipeline, *pass_options); !s.ok()) return ReportError(s);
  const std::vector<PassOccurrence>& occurrences = (*pipeline)->Occurrences();
  absl::StatusOr<std::vector<AblationVariant>> plan = MakePlan(o, occurrences);
  if (!plan.ok()) return ReportError(plan.status());

  // The input first, so that a plan is never printed for a missing file,
  // an unknown model or a module that does not verify.
  auto module = LoadVerifiedModule(o.file, *o.source);
  if (!module.ok()) return ReportError(module.status());
  // Real arguments (--args DIR, or an HLO snapshot's) are checked against
  // the module now, and reach every worker as a directory of .npy files.
  absl::StatusOr<std::optional<std::vector<Literal>>> embedded = EmbeddedArguments(o.file);
  if (!embedded.ok()) return ReportError(embedded.status());
  if (!o.args_dir.empty() || embedded->has_value()) {
    absl::StatusOr<std::vector<Literal>> args = ResolveArguments(
        *(*module)->entry_computation(),
        ArgumentSource{.dir = o.args_dir, .embedded = embedded->has_value() ? &**embedded : nullptr});
    if (!args.ok()) return ReportError(args.status());
  }

  if (o.dry_run && !slurm) {
    int runs = 0;
    fmt::print("{:<44} {:<18} {}\n", "variant", "kind", "filter");
    for (const AblationVariant& v : *plan) {
      std::string filter = v.required ? StrCat("not run: required (", v.required_reason, ")")
                           : v.kind == kAaVariantKind ? "none (the baseline itself)"
                           : v.enable_only.empty() ? StrCat("--disable ", v.disable)
                                                   : StrCat("--enable-only ", v.enable_only);
      fmt::print("{:<44} {:<18} {}\n", v.name, v.kind, filter);
      runs += v.required ? 0 : 1;
    }
    int blocks = (runs + o.block - 1) / std::max(1, o.block);
    fmt::print("\n{} variants to run in {} block(s) of up to {} (+1 baseline each), {} warm-up + {} timed "
               "repetitions each{}{}{}\n",
               runs, blocks, o.block, o.warmup, o.repeats,
               o.target_ci_pct > 0 ? fmt::format(" (up to {} while the CI is wider than ±{:g}%)",
                                                o.max_repeats > 0 ? o.max_repeats : 3 * o.repeats, o.target_ci_pct)
               : o.sequential      ? fmt::format(" (up to {} while the verdict is open)",
                                                o.max_repeats > 0 ? o.max_repeats : 3 * o.repeats)
                                   : "",
               o.no_control ? "" : ", each next to the baseline program in its own process",
               o.sweep == "pairs" ? StrCat("; then every pair among the top ", o.top_k, " passes") : "");
    return 0;
  }
  if (o.out.empty() && slurm) {
    return ReportError(absl::InvalidArgumentError("ablate --executor slurm: --out DIR is required (a directory every node sees)"));
  }
  if (o.out.empty()) return ReportError(absl::InvalidArgumentError("ablate: --out DIR is required (or --dry-run)"));

  // Every worker holds a CUDA context while its block is timed: about
  // --block variants with --processes workers each. Measured on an H200
  // (docs/gpu-results.md): with 27 resident workers the ResNet-50 baseline
  // took 15.2 ms per step against 7.39 ms in `passlab run`; with 3 (--block
  // 3 --processes 1) it matched the standalone step within 0.2%.
  if (o.device == "cuda") {
    const int resident = std::max(1, o.block) * std::max(1, o.processes);
    if (resident > 3) {
      fmt::print(stderr,
                 "passlab ablate: note: on cuda about {} worker processes (--block {} x --processes {}) hold GPU "
                 "contexts at once; absolute step times grow with resident contexts (an H200: 2x with 27, within "
                 "0.2% of `passlab run` with --block 3 --processes 1); the ratios hold either way.\n",
                 resident, o.block, o.processes);
    }
  }

  AblationOptions a;
  a.out_dir = o.out;
  a.input_text = PrintModule(**module);
  a.pipeline = o.pipeline;
  a.pass_options = o.pass_options;
  a.removed_passes = o.removed;
  a.plan = std::move(*plan);
  a.pairs_top_k = o.sweep == "pairs" ? o.top_k : 0;
  a.repeats = o.repeats;
  a.warmup = o.warmup;
  a.timeout_s = o.timeout_s;
  a.jobs = o.jobs;
  a.block_size = o.block;
  a.threads = o.threads;
  a.processes = o.processes;
  a.randomize_placement = !o.fixed_placement;
  a.skip_identical = !o.time_identical;
  a.inject_delays = inject_delays;
  a.control = !o.no_control;
  a.target_ci = o.target_ci_pct / 100;
  a.max_repeats = o.max_repeats > 0 ? o.max_repeats : 3 * o.repeats;
  a.sequential = o.sequential;
  // The band a verdict is decided against: the threshold, or --aa-band when
  // that is larger (a calibration file's band is applied by the report).
  a.sequential_band = std::max(o.threshold, o.aa_band_pct >= 0 ? o.aa_band_pct / 100 : 0.0);
  a.device = o.device;
  a.seed = o.seed;
  if (!o.args_dir.empty()) {
    a.args_dir = std::filesystem::absolute(o.args_dir).string();
  } else if (embedded->has_value()) {
    // The snapshot's arguments as DIR/args/<i>.npy for the workers.
    a.args_dir = (std::filesystem::absolute(o.out) / "args").string();
    std::filesystem::create_directories(a.args_dir);
    for (size_t i = 0; i < (*embedded)->size(); ++i) {
      if (absl::Status s = WriteNpy((**embedded)[i], StrCat(a.args_dir, "/", i, ".npy")); !s.ok()) {
        return ReportError(s);
      }
    }
  }
  a.reference = o.reference;
  a.tolerance = o.tolerance;
  a.trace_variants = o.trace_variants;
  a.worker_exe = SelfExe();
  // Workers share compiled kernels through <out>/kernel_cache (or a
  // directory shared by several sweeps): each kernel is compiled once.
  if (!o.no_kernel_cache) {
    a.kernel_cache_dir =
        std::filesystem::absolute(o.kernel_cache.empty() ? std::filesystem::path(o.out) / "kernel_cache"
                                                         : std::filesystem::path(o.kernel_cache))
            .string();
  }
  a.progress = isatty(2);
  a.manifest["command"] = Join(o.argv, " ");
  a.manifest["argv"] = o.argv;  // what --reproduce re-parses
  a.manifest["passlab_version"] = "0.1.0";
  a.manifest["sweep"] = o.sweep;
  if (o.sweep == "aa") a.manifest["copies"] = a.plan.size();
  a.manifest["model"] = ModelJson(o);
  a.manifest["instructions"] = (*module)->instruction_count();
  if (slurm) return SubmitSlurm(o, a);
  if (absl::Status s = RunAblation(a); !s.ok()) return ReportError(s);
  if (absl::Status s = RecordAutotuneCacheHash(o.out); !s.ok()) return ReportError(s);
  return WriteLocalReports(o);
}

}  // namespace

void AddAblateCommand(CLI::App& app, CommandResult& result, int argc, char** argv) {
  auto o = std::make_shared<AblateOptions>();
  o->argv.assign(argv, argv + argc);
  auto* cmd = app.add_subcommand("ablate", "Disable-one-pass sweeps: every variant compiled, checked and timed");
  cmd->add_option("file", o->file, "HLO text file ('-' for stdin)");
  o->source = AddModelSourceOptions(cmd);
  cmd->add_option("--out", o->out, "Output directory (rerun with the same one to resume)");
  cmd->add_option("--sweep", o->sweep,
                  "disable-one | add-one | pairs (needs --top-k) | file (needs --variants) | aa (A/A calibration: "
                  "--copies variants that are the baseline itself)")
      ->check(CLI::IsMember({"disable-one", "add-one", "pairs", "file", "aa"}));
  cmd->add_option("--copies", o->copies, "aa: how many copies of the baseline to run as variants (default 6)")
      ->check(AtLeast(1));
  cmd->add_option("--aa-band", o->aa_band_pct,
                  "A change counts only beyond PCT percent (and the threshold), instead of the A/A band this sweep "
                  "or the calibration file measured")
      ->check(NumberBetween(0, 100));
  cmd->add_flag("--no-aa-band", o->no_aa_band, "Judge changes by the threshold alone (no A/A band)");
  cmd->add_option("--aa-calibration", o->aa_calibration,
                  "The A/A calibration file (default $PASSLAB_AA_CALIBRATION, else ~/.cache/passlab/aa_calibration.json)");
  CLI::Option* processes = cmd->add_option("--processes", o->processes,
                  "Worker processes per variant, taking turns (placement in memory then averages out; default 2, "
                  "on cuda 1)")
      ->check(AtLeast(1));
  cmd->add_flag("--fixed-placement", o->fixed_placement,
                "Do not randomize where each step's buffers sit nor the control's compile order (the old, biased "
                "placement; for comparisons)");
  cmd->add_flag("--time-identical", o->time_identical,
                "Also time variants whose optimized module is the baseline's (by default they are recorded as "
                "\"identical\", ratio exactly 1, untimed)");
  cmd->add_option("--test-inject-delay", o->inject_delays,
                  "TEST HOOK: slow the variant named NAME (or about pass NAME) down by PCT percent of each step's "
                  "kernel time, NAME=PCT (repeatable; recorded in the manifest)");
  cmd->add_flag("--per-occurrence", o->per_occurrence, "disable-one: one variant per pass occurrence");
  cmd->add_option("--top-k", o->top_k, "pairs: every pair among the K passes that matter most")->check(NonNegative());
  cmd->add_option("--variants", o->variants_file, "file: one 'NAME: FILTERS' or 'NAME: enable-only FILTERS' per line");
  cmd->add_option("--pipeline", o->pipeline, "Pipeline to ablate: gpu (today's XLA:GPU) or gpu-2021 (seed 003's era), or a sub-pipeline");
  cmd->add_option("--pass-option", o->pass_options,
                  "PASS.OPTION=VALUE by XLA's option names, for every variant (repeatable; recorded in the manifest)");
  AddXlaFlagOptions(cmd, o->xla);
  cmd->add_option("--repeats", o->repeats, "Timed repetitions per variant")->check(NumberBetween(2, 100000));
  cmd->add_option("--warmup", o->warmup, "Untimed runs first")->check(NonNegative());
  cmd->add_option("--timeout", o->timeout_s, "Seconds a worker may take for one step (compile, one run)")
      ->check(Positive());
  cmd->add_option("--jobs", o->jobs, "Variants compiling at once (timing runs never overlap)")->check(Positive());
  CLI::Option* block = cmd->add_option("--block", o->block,
                  "Variants timed round-robin together (each holds its program in memory; default 8, on cuda 3)")
      ->check(Positive());
  cmd->add_option("--threads", o->threads, "Kernel threads per variant")->check(NonNegative());
  CLI::Option* kernel_cache = cmd->add_option("--kernel-cache", o->kernel_cache,
                  "Persistent compiled-kernel cache the workers share (default: <out>/kernel_cache; give one "
                  "directory to several sweeps to share it across them)");
  cmd->add_flag("--no-kernel-cache", o->no_kernel_cache, "Every worker compiles every kernel itself")
      ->excludes(kernel_cache);
  cmd->add_flag("--no-control", o->no_control,
                "Do not time the baseline program inside each variant's process (faster; the comparison then "
                "crosses processes and is noisier)");
  cmd->add_option("--target-ci", o->target_ci_pct,
                  "Repeat variants whose ratio's 95% CI half-width is above PCT percent (e.g. 2) after --repeats, "
                  "until within it or --max-repeats")
      ->check(NumberBetween(0, 50));
  cmd->add_flag("--sequential", o->sequential,
                "Sequential testing: after --repeats, repeat only the variants whose verdict is still open (95% CI "
                "across 1 +- the threshold, or --aa-band if larger), until decided or --max-repeats")
      ->excludes("--no-control");
  cmd->add_option("--max-repeats", o->max_repeats,
                  "Repetitions at most per variant with --target-ci or --sequential (default: 3x --repeats)")
      ->check(NonNegative());
  cmd->add_option("--device", o->device,
                  "Where variants run: cpu, or cuda (GPU kernels from the NVPTX code generator, cuBLASLt/cuDNN "
                  "calls, CUPTI kernel times)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--seed", o->seed, "Seed of the random inputs");
  cmd->add_option("--args", o->args_dir,
                  "The real arguments: a directory of .npy files matched to parameters by number (see README)");
  cmd->add_option("--reference", o->reference,
                  "Check outputs against: evaluator (the unoptimized input) | baseline (big models) | none")
      ->check(CLI::IsMember({"evaluator", "baseline", "none"}));
  cmd->add_option("--tolerance", o->tolerance, "Absolute and relative tolerance of the output check")
      ->check(NonNegative());
  cmd->add_option("--metric", o->metric,
                  "Statistic to compare: auto (kernel-cpu on the CPU backend with one thread, else kernel) | "
                  "kernel (each kernel's outlying steps capped) | kernel-raw | kernel-cpu (the kernels' process CPU "
                  "time, capped likewise; CPU backend) | kernel+copy | wall")
      ->check(CLI::IsMember({"auto", "kernel", "kernel-raw", "kernel-cpu", "kernel+copy", "wall"}));
  cmd->add_option("--threshold", o->threshold, "Smallest relative change that counts (0.01 = 1%)")
      ->check(NonNegative());
  cmd->add_option("--correction", o->correction, "Multiple-testing correction: holm | bh")
      ->check(CLI::IsMember({"holm", "bh"}));
  cmd->add_option("--trace-variant", o->trace_variants, "Also write this variant's Chrome trace (repeatable)");
  cmd->add_flag("--dry-run", o->dry_run, "Print the plan and exit");
  cmd->add_option("--compare", o->compare,
                  "Put finished sweeps side by side (2 or more DIRs): per pass each sweep's change and CI, sign "
                  "agreement and rank correlation against the first, what differs in their manifests")
      ->expected(2, 1000);
  cmd->add_option("--reproduce", o->reproduce_dir,
                  "Rerun the sweep in DIR with this build into --out: prints what differs from the recorded "
                  "environment and build, then re-invokes this binary with the recorded command line");
  cmd->add_option("--format", o->format, "Output of --compare: md | json")->check(CLI::IsMember({"md", "json"}));
  cmd->add_flag("--report-only", o->report_only,
                "Rebuild the reports of --out DIR from its results (e.g. with another --metric or --threshold)");
  cmd->add_option("--executor", o->executor, "local (this machine) | slurm (a job array; needs --out on a shared file system)")
      ->check(CLI::IsMember({"local", "slurm"}));
  cmd->add_option("--partition", o->slurm.partition, "slurm: partition of the jobs");
  cmd->add_option("--gres", o->slurm.gres, "slurm: generic resources per task (gpu:1)");
  cmd->add_option("--time", o->slurm.time, "slurm: time limit per task (minutes, or H:MM:SS)");
  cmd->add_option("--array-parallelism", o->slurm.array_parallelism, "slurm: array tasks running at once")
      ->check(Positive());
  cmd->add_option("--run-task", o->run_task, "Run array task K of the Slurm sweep in --out (what ablate.sbatch runs)")
      ->check(NonNegative());
  cmd->add_option("--merge", o->merge_dir, "Merge a Slurm sweep's task results in DIR into its reports");
  cmd->add_option("--status", o->status_dir, "Progress of the Slurm sweep in DIR (and squeue/sacct, if installed)");
  cmd->add_option("--resubmit-missing", o->resubmit_dir,
                  "Resubmit the failed or missing tasks of the Slurm sweep in DIR (finished ones are kept)");
  cmd->callback([o, &result, processes, block] {
    // On a GPU every resident worker holds a context, and many make every
    // step slower (docs/gpu-results.md: 2x with 27 on an H200); three, as
    // here by default, timed the step as `passlab run` does.
    if (o->device == "cuda") {
      if (processes->count() == 0) o->processes = 1;
      if (block->count() == 0) o->block = 3;
    }
    result.exit_code = RunAblate(*o);
  });

  auto w = std::make_shared<AblationWorkerOptions>();
  auto* worker = app.add_subcommand("ablate-worker", "");  // empty description: hidden
  worker->add_option("--input", w->input)->required();
  worker->add_option("--pipeline", w->pipeline);
  worker->add_option("--pass-option", w->pass_options);
  worker->add_option("--remove-pass", w->removed_passes);
  worker->add_option("--disable", w->disable);
  worker->add_option("--enable-only", w->enable_only);
  worker->add_option("--threads", w->threads);
  worker->add_option("--device", w->device);
  worker->add_option("--seed", w->seed);
  worker->add_option("--args", w->args_dir);
  worker->add_option("--reference-dir", w->reference_dir);
  worker->add_option("--tolerance", w->tolerance);
  worker->add_option("--write-reference", w->write_reference);
  worker->add_option("--diff-dir", w->diff_dir);
  worker->add_option("--diff-passes", w->diff_passes)->delimiter(',');
  worker->add_option("--snapshot", w->snapshot_path);
  worker->add_option("--autotune-cache", w->autotune_cache);
  worker->add_option("--kernel-cache", w->kernel_cache);
  worker->add_option("--variant", w->variant);
  worker->add_flag("--control", w->control);
  worker->add_flag("--fingerprint-only", w->fingerprint_only);
  worker->add_option("--placement-seed", w->placement_seed);
  worker->add_flag("--control-first", w->control_compiled_first);
  worker->add_option("--test-inject-delay", w->inject_delay);
  worker->add_option("--fd-in", w->fd_in);
  worker->add_option("--fd-out", w->fd_out);
  worker->callback([w, &result] { result.exit_code = RunAblationWorker(*w); });
}

}  // namespace passlab
