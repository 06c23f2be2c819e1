#include "analysis/ablation/slurm.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "xxhash.h"

namespace passlab {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

// 'text' quoted for a POSIX shell.
std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Task numbers as a Slurm --array list: "0,2-4,7".
std::string ArrayList(const std::vector<int>& tasks) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    parts.push_back(j == i ? StrCat(tasks[i]) : StrCat(tasks[i], "-", tasks[j]));
    i = j + 1;
  }
  return Join(parts, ",");
}

struct CommandOutput {
  int exit_code = 0;
  std::string out, err;
};

// Runs `argv` (looked up on PATH) and collects its output.
absl::StatusOr<CommandOutput> RunCommand(const std::vector<std::string>& argv) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<std::string> storage = argv;
  std::vector<char*> args;
  for (std::string& a : storage) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run '%s': %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  CommandOutput result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char chunk[4096];
      ssize_t n = read(fds[i].fd, chunk, sizeof(chunk));
      if (n > 0) {
        sinks[i]->append(chunk, static_cast<size_t>(n));
        continue;
      }
      close(fds[i].fd);
      fds[i].fd = -1;
      --open_fds;
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// The job id `sbatch --parsable` prints: "1234" or "1234;cluster".
absl::StatusOr<std::string> Sbatch(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  ASSIGN_OR_RETURN(CommandOutput r, RunCommand(argv));
  const std::string command = Join(argv, " ");
  if (r.exit_code != 0) {
    return absl::FailedPreconditionError(
        StrCat("'", command, "' failed (exit ", r.exit_code, "): ", Trim(r.err.empty() ? r.out : r.err)));
  }
  std::string id = Trim(r.out);
  if (size_t nl = id.rfind('\n'); nl != std::string::npos) id = id.substr(nl + 1);  // warnings first
  if (size_t semicolon = id.find(';'); semicolon != std::string::npos) id.resize(semicolon);
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    return absl::FailedPreconditionError(StrCat("'", command, "' printed no job id: '", Trim(r.out), "'"));
  }
  return id;
}

Json RunSettings(const AblationOptions& o) {
  Json run{{"pipeline", o.pipeline},  {"repeats", o.repeats},     {"warmup", o.warmup},
           {"timeout_s", o.timeout_s}, {"jobs", o.jobs},           {"threads", o.threads},
           {"seed", o.seed},           {"reference", o.reference}, {"tolerance", o.tolerance},
           {"trace_variants", o.trace_variants}};
  // Only when not the default, so that CPU plans keep their ids.
  if (o.device != "cpu") run["device"] = o.device;
  if (!o.control) run["control"] = false;
  if (!o.kernel_cache_dir.empty()) run["kernel_cache"] = o.kernel_cache_dir;
  if (!o.pass_options.empty()) run["pass_options"] = o.pass_options;
  if (!o.removed_passes.empty()) run["xla_disabled_passes"] = o.removed_passes;
  if (o.target_ci > 0 || o.sequential) {
    run["target_ci"] = o.target_ci;
    run["max_repeats"] = o.max_repeats;
  }
  if (o.sequential) {
    run["sequential"] = true;
    run["sequential_band"] = o.sequential_band;
  }
  return run;
}

std::string PlanId(const std::string& input_text, const Json& run, const Json& variants, const Json& tasks) {
  std::string text = Json{{"input_xxh64", XXH64(input_text.data(), input_text.size(), 0)},
                          {"run", run}, {"variants", variants}, {"tasks", tasks}}
                         .dump();
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(XXH64(text.data(), text.size(), 0)));
  return buf;
}

absl::StatusOr<Json> ReadPlan(const fs::path& out) {
  const fs::path path = out / "plan.json";
  if (!fs::exists(path)) return absl::NotFoundError(StrCat("'", out.string(), "' holds no sweep (no plan.json)"));
  Json plan = Json::parse(ReadFile(path), nullptr, false);
  if (plan.is_discarded() || !plan.is_object()) return absl::DataLossError(StrCat("'", path.string(), "' is not JSON"));
  if (!plan.contains("plan_id") || !plan.contains("tasks") || !plan["tasks"].is_array()) {
    return absl::FailedPreconditionError(
        StrCat("'", out.string(), "' holds a local sweep, not a Slurm one (its plan.json has no tasks)"));
  }
  return plan;
}

std::string TaskResults(int task) { return StrCat("results/task-", task, ".jsonl"); }

std::string NodeName() {
  if (const char* node = std::getenv("SLURMD_NODENAME"); node != nullptr && *node != '\0') return node;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) return host;
  return "";
}

std::string ArrayScript(const fs::path& out, const SlurmOptions& s, int tasks, int cpus) {
  std::string text = "#!/bin/bash\n";
  text += StrCat("# passlab ablation sweep: ", tasks, " array task(s), one block of variants each (plan.json).\n");
  text += "#SBATCH --job-name=passlab-ablate\n";
  text += StrCat("#SBATCH --array=0-", tasks - 1, s.array_parallelism > 0 ? StrCat("%", s.array_parallelism) : "", "\n");
  text += StrCat("#SBATCH --output=", (out / "logs" / "slurm-%A_%a.out").string(), "\n");
  text += StrCat("#SBATCH --cpus-per-task=", cpus, "\n");
  if (!s.partition.empty()) text += StrCat("#SBATCH --partition=", s.partition, "\n");
  if (!s.gres.empty()) text += StrCat("#SBATCH --gres=", s.gres, "\n");
  if (!s.time.empty()) text += StrCat("#SBATCH --time=", s.time, "\n");
  text += StrCat("exec ", ShellQuote(s.passlab_exe), " ablate --run-task \"$SLURM_ARRAY_TASK_ID\" --out ",
                 ShellQuote(out.string()), "\n");
  return text;
}

std::string MergeScript(const fs::path& out, const SlurmOptions& s) {
  std::string text = "#!/bin/bash\n";
  text += "# passlab ablation sweep: merges every task's results into one report (after the array, afterany).\n";
  text += "#SBATCH --job-name=passlab-ablate-merge\n";
  text += StrCat("#SBATCH --output=", (out / "logs" / "slurm-merge-%j.out").string(), "\n");
  if (!s.partition.empty()) text += StrCat("#SBATCH --partition=", s.partition, "\n");
  if (!s.time.empty()) text += StrCat("#SBATCH --time=", s.time, "\n");
  std::string args;
  for (const std::string& a : s.merge_args) args += " " + ShellQuote(a);
  text += StrCat("exec ", ShellQuote(s.passlab_exe), " ablate --merge ", ShellQuote(out.string()), args, "\n");
  return text;
}

}  // namespace

std::string SlurmTaskState::state() const {
  if (complete()) return "done";
  return done > 0 || baselines > 0 ? "failed" : "missing";
}

std::vector<int> SlurmSweepState::Incomplete() const {
  std::vector<int> tasks_left;
  for (const SlurmTaskState& t : tasks) {
    if (!t.complete()) tasks_left.push_back(t.task);
  }
  return tasks_left;
}

bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  for (std::string_view dir : SplitAny(path, ":")) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(std::string(dir)) / program;
    if (access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

absl::Status WriteSlurmSweep(const AblationOptions& sweep, const SlurmOptions& slurm) {
  if (sweep.pairs_top_k > 0) {
    return absl::InvalidArgumentError(
        "--sweep pairs picks its pairs from the disable-one results, so it runs locally; on Slurm, run the "
        "disable-one sweep, then the pairs as --sweep file");
  }
  const fs::path out = fs::absolute(sweep.out_dir);
  Json variants = Json::array();
  std::vector<const AblationVariant*> runnable;
  std::vector<std::string> required;
  for (const AblationVariant& v : sweep.plan) {
    variants.push_back(v.ToJson());
    if (v.required) {
      required.push_back(v.name);
    } else {
      runnable.push_back(&v);
    }
  }
  Json tasks = Json::array();
  for (auto [first, end] : SplitIntoBlocks(runnable.size(), sweep.block_size)) {
    Json names = Json::array();
    for (size_t i = first; i < end; ++i) names.push_back(runnable[i]->name);
    tasks.push_back(names);
  }
  // The required variants are records, not runs: task 0 writes them.
  if (tasks.empty()) tasks.push_back(Json::array());
  for (auto it = required.rbegin(); it != required.rend(); ++it) tasks[0].insert(tasks[0].begin(), *it);

  const Json run = RunSettings(sweep);
  const std::string plan_id = PlanId(sweep.input_text, run, variants, tasks);
  if (fs::exists(out / "plan.json")) {
    ASSIGN_OR_RETURN(Json old, ReadPlan(out));
    if (old["plan_id"] != plan_id) {
      return absl::FailedPreconditionError(StrCat("'", out.string(), "' holds another plan (", old["plan_id"].get<std::string>(),
                                                  ", this one is ", plan_id,
                                                  "); their results must not mix: choose another --out"));
    }
  }
  AblationOptions prepared = sweep;
  prepared.out_dir = out.string();
  prepared.manifest["executor"] = "slurm";
  prepared.manifest["plan_id"] = plan_id;
  prepared.manifest["tasks"] = tasks.size();
  RETURN_IF_ERROR(PrepareAblationDirectory(prepared));
  std::error_code ec;
  fs::create_directories(out / "logs", ec);
  fs::create_directories(out / "results", ec);
  if (ec) return absl::InternalError(StrCat("cannot create '", out.string(), "/results': ", ec.message()));

  Json slurm_json = {{"partition", slurm.partition},
                     {"gres", slurm.gres},
                     {"time", slurm.time},
                     {"array_parallelism", slurm.array_parallelism},
                     {"passlab", slurm.passlab_exe}};
  Json plan = {{"plan_id", plan_id}, {"executor", "slurm"}, {"run", run},   {"slurm", slurm_json},
               {"tasks", tasks},     {"variants", variants}};
  RETURN_IF_ERROR(WriteFileAtomically((out / "plan.json").string(), plan.dump(2) + "\n"));
  const int cpus = std::max({1, sweep.jobs, sweep.threads});
  if (absl::Status s = WriteFileAtomically((out / "ablate.sbatch").string(),
                                           ArrayScript(out, slurm, static_cast<int>(tasks.size()), cpus));
      !s.ok()) {
    return s;
  }
  return WriteFileAtomically((out / "merge.sbatch").string(), MergeScript(out, slurm));
}

absl::StatusOr<SlurmSubmission> SubmitSlurmSweep(const std::string& out_dir, const std::vector<int>& tasks,
                                                 int array_parallelism) {
  const fs::path out = fs::absolute(out_dir);
  ASSIGN_OR_RETURN(Json plan, ReadPlan(out));
  std::vector<std::string> args;
  if (!tasks.empty() || array_parallelism > 0) {
    std::vector<int> all;
    for (size_t i = 0; i < plan["tasks"].size(); ++i) all.push_back(static_cast<int>(i));
    const int limit = array_parallelism > 0 ? array_parallelism : plan["slurm"].value("array_parallelism", 0);
    args.push_back(StrCat("--array=", ArrayList(tasks.empty() ? all : tasks), limit > 0 ? StrCat("%", limit) : ""));
  }
  args.push_back((out / "ablate.sbatch").string());
  SlurmSubmission submission;
  submission.tasks = tasks;
  ASSIGN_OR_RETURN(std::string array_job, Sbatch(args));
  submission.array_job = array_job;
  absl::StatusOr<std::string> merge_job =
      Sbatch({StrCat("--dependency=afterany:", submission.array_job), (out / "merge.sbatch").string()});
  if (!merge_job.ok()) {
    return absl::FailedPreconditionError(StrCat("job array ", submission.array_job,
                                                " is submitted, but its merge job is not: ", merge_job.status().message(),
                                                "; run `passlab ablate --merge ", out.string(), "` after it"));
  }
  submission.merge_job = *merge_job;

  Json log = Json::parse(ReadFile(out / "slurm.json"), nullptr, false);
  if (log.is_discarded() || !log.is_object()) log = {{"submissions", Json::array()}};
  Json entry = {{"array_job", submission.array_job},
                {"merge_job", submission.merge_job},
                {"time", static_cast<int64_t>(std::time(nullptr))}};
  if (tasks.empty()) {
    entry["tasks"] = "all";
  } else {
    entry["tasks"] = tasks;
  }
  log["submissions"].push_back(entry);
  RETURN_IF_ERROR(WriteFileAtomically((out / "slurm.json").string(), log.dump(2) + "\n"));
  return submission;
}

absl::Status RunSlurmTask(const std::string& out_dir, int task, const std::string& worker_exe, bool progress) {
  const fs::path out = fs::absolute(out_dir);
  ASSIGN_OR_RETURN(Json plan, ReadPlan(out));
  const Json& tasks = plan["tasks"];
  if (task < 0 || task >= static_cast<int>(tasks.size())) {
    return absl::InvalidArgumentError(StrCat("--run-task ", task, ": the plan in '", out.string(), "' has tasks 0-",
                                             static_cast<int>(tasks.size()) - 1));
  }
  std::map<std::string, AblationVariant> variants;
  for (const Json& j : plan["variants"]) {
    ASSIGN_OR_RETURN(AblationVariant v, AblationVariant::FromJson(j));
    variants[v.name] = v;
  }
  const Json& run = plan["run"];
  AblationOptions o;
  o.out_dir = out.string();
  o.input_text = ReadFile(out / "input.hlo");
  for (const Json& name : tasks[task]) {
    auto it = variants.find(name.get<std::string>());
    if (it == variants.end()) {
      return absl::DataLossError(StrCat("plan.json: task ", task, " names variant '", name.get<std::string>(),
                                        "', which the plan does not define"));
    }
    o.plan.push_back(it->second);
  }
  o.pipeline = run.value("pipeline", "gpu");
  o.pass_options = run.value("pass_options", std::vector<std::string>{});
  o.removed_passes = run.value("xla_disabled_passes", std::vector<std::string>{});
  o.repeats = run.value("repeats", 10);
  o.warmup = run.value("warmup", 2);
  o.timeout_s = run.value("timeout_s", 600.0);
  o.jobs = run.value("jobs", 1);
  o.threads = run.value("threads", 1);
  o.kernel_cache_dir = run.value("kernel_cache", "");
  o.device = run.value("device", "cpu");
  o.control = run.value("control", true);
  o.target_ci = run.value("target_ci", 0.0);
  o.max_repeats = run.value("max_repeats", 0);
  o.sequential = run.value("sequential", false);
  o.sequential_band = run.value("sequential_band", 0.01);
  o.seed = run.value("seed", uint64_t{1});
  o.reference = run.value("reference", "evaluator");
  o.tolerance = run.value("tolerance", 1e-3);
  o.trace_variants = run.value("trace_variants", std::vector<std::string>{});
  o.worker_exe = worker_exe;
  o.progress = progress;
  o.task = task;
  o.tasks = static_cast<int>(tasks.size());
  o.results_file = TaskResults(task);
  o.plan_id = plan["plan_id"].get<std::string>();
  o.node = NodeName();
  const char* array_job = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* job = std::getenv("SLURM_JOB_ID");
  if (array_job != nullptr) {
    o.slurm_job = StrCat(array_job, "_", task);
  } else if (job != nullptr) {
    o.slurm_job = job;
  }
  if (PlanId(o.input_text, run, plan["variants"], tasks) != plan["plan_id"]) {
    return absl::DataLossError(StrCat("'", out.string(), "/plan.json' or input.hlo changed after the sweep was planned"));
  }
  return RunAblation(o);
}

absl::StatusOr<SlurmSweepState> ReadSlurmSweep(const std::string& out_dir) {
  const fs::path out = fs::absolute(out_dir);
  ASSIGN_OR_RETURN(Json plan, ReadPlan(out));
  SlurmSweepState state;
  state.out_dir = out.string();
  state.plan_id = plan["plan_id"].get<std::string>();
  // WriteSlurmSweep wrote it (PrepareAblationDirectory): one that is
  // missing or does not fit its schema is an error naming the file.
  ASSIGN_OR_RETURN(AblationManifest manifest, ReadAblationManifest((out / "manifest.json").string()));
  state.manifest = std::move(manifest);
  Json log = Json::parse(ReadFile(out / "slurm.json"), nullptr, false);
  state.submissions = !log.is_discarded() && log.contains("submissions") ? log["submissions"] : Json::array();
  const Json& tasks = plan["tasks"];
  for (int k = 0; k < static_cast<int>(tasks.size()); ++k) {
    SlurmTaskState t;
    t.task = k;
    t.variants = tasks[k].get<std::vector<std::string>>();
    const std::set<std::string> owned(t.variants.begin(), t.variants.end());
    std::set<std::string> done;
    const std::string file = TaskResults(k);
    std::ifstream in(out / file);
    std::string line;
    for (int lineno = 1; std::getline(in, line); ++lineno) {
      Json j = Json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;  // torn write of a killed task
      const std::string where = StrCat(file, ":", lineno);
      ASSIGN_OR_RETURN(AblationRecord parsed, ParseAblationRecord(j, where));
      AblationRecord& r = parsed;
      if (r.plan_id.value_or("") != state.plan_id || r.task.value_or(-1) != k) {
        return absl::FailedPreconditionError(StrCat(where, ": a record of plan ", r.plan_id.value_or("(none)"), " task ",
                                                    r.task.value_or(-1), ", not of this directory's plan ",
                                                    state.plan_id, " task ", k, "; the merge does not mix sweeps"));
      }
      if (r.kind == "baseline") {
        ++t.baselines;
        t.node = r.node.value_or("");
        if (r.machine) t.machine = *r.machine;
      } else if (owned.count(r.variant)) {
        done.insert(r.variant);
      }
      LinkIrDiff(r, state.out_dir);
      state.records.push_back(std::move(r));
    }
    t.done = static_cast<int>(done.size());
    state.tasks.push_back(std::move(t));
  }
  // A results file of a task this plan does not have belongs to another plan.
  std::error_code ec;
  std::vector<std::string> stray;
  for (const fs::directory_entry& e : fs::directory_iterator(out / "results", ec)) {
    const std::string name = e.path().filename().string();
    int k = -1;
    if (std::sscanf(name.c_str(), "task-%d.jsonl", &k) == 1 && k >= 0 && k < static_cast<int>(tasks.size()) &&
        name == StrCat("task-", k, ".jsonl")) {
      continue;
    }
    stray.push_back(name);
  }
  if (!stray.empty()) {
    std::sort(stray.begin(), stray.end());
    return absl::FailedPreconditionError(StrCat("'", out.string(), "/results' holds files this plan's ", tasks.size(),
                                                " task(s) never write (", Join(stray, ", "),
                                                "); the merge does not mix sweeps"));
  }
  return state;
}

AblationManifest MergedManifest(const SlurmSweepState& state) {
  AblationManifest manifest = state.manifest;
  manifest.extra["executor"] = "slurm";
  manifest.extra["plan_id"] = state.plan_id;
  Json tasks = Json::array();
  for (const SlurmTaskState& t : state.tasks) {
    Json j = {{"task", t.task},   {"state", t.state()}, {"variants", t.variants.size()},
              {"done", t.done},   {"blocks", t.baselines}};
    if (!t.node.empty()) j["node"] = t.node;
    if (!t.machine.is_null()) j["machine"] = t.machine;
    tasks.push_back(j);
  }
  manifest.extra["tasks"] = tasks;
  manifest.extra["incomplete_tasks"] = state.Incomplete();
  return manifest;
}

namespace {

// squeue's state (PENDING, RUNNING, ...) of every task of the sweep's job
// arrays that is still queued; empty without squeue.
std::map<int, std::string> QueuedTasks(const SlurmSweepState& state) {
  std::set<std::string> arrays;
  for (const Json& s : state.submissions) arrays.insert(s.value("array_job", ""));
  std::map<int, std::string> queued;
  if (arrays.empty() || !OnPath("squeue")) return queued;
  absl::StatusOr<CommandOutput> q =
      RunCommand({"squeue", "--noheader", "--array", "--format=%i %T",
                  StrCat("--jobs=", Join(std::vector<std::string>(arrays.begin(), arrays.end()), ","))});
  if (!q.ok() || q->exit_code != 0) return queued;
  // Array elements print as "JOB_TASK STATE", one per line with --array.
  for (std::string_view line : SplitAny(q->out, "\n")) {
    std::string text = Trim(std::string(line));
    const size_t space = text.find_first_of(" \t");
    const std::string id = text.substr(0, space);
    std::string job_state = space == std::string::npos ? "QUEUED" : Trim(text.substr(space));
    job_state = job_state.substr(0, job_state.find_first_of(" \t"));
    const size_t underscore = id.find('_');
    if (underscore == std::string::npos || !arrays.count(id.substr(0, underscore))) continue;
    const std::string task = id.substr(underscore + 1);
    if (!task.empty() && task.find_first_not_of("0123456789") == std::string::npos) {
      queued[std::stoi(task)] = job_state;
    }
  }
  return queued;
}

std::string Lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::vector<int> TasksToResubmit(const SlurmSweepState& state) {
  std::vector<int> incomplete = state.Incomplete();
  if (incomplete.empty()) return incomplete;
  const std::map<int, std::string> queued = QueuedTasks(state);
  std::vector<int> left;
  for (int t : incomplete) {
    if (!queued.count(t)) left.push_back(t);
  }
  return left;
}

std::string RenderSlurmStatus(const SlurmSweepState& state, bool query_slurm) {
  const std::map<int, std::string> queued = query_slurm ? QueuedTasks(state) : std::map<int, std::string>{};
  int variants = 0, done = 0;
  std::map<std::string, int> by_state;
  std::vector<std::string> task_lines;
  for (const SlurmTaskState& t : state.tasks) {
    variants += static_cast<int>(t.variants.size());
    done += t.done;
    // An incomplete task squeue still lists is on its way, not failed.
    auto q = queued.find(t.task);
    const bool in_queue = !t.complete() && q != queued.end();
    ++by_state[in_queue ? "queued" : t.state()];
    task_lines.push_back(StrCat("  task ", t.task, "  ", in_queue ? Lowercase(q->second) : t.state(), "  ", t.done, "/",
                                t.variants.size(), " variants", t.node.empty() ? "" : StrCat("  node ", t.node),
                                t.baselines > 1 ? StrCat("  (", t.baselines, " blocks)") : "", "\n"));
  }
  std::string text = StrCat(state.out_dir, ": plan ", state.plan_id, ", ", done, "/", variants, " variants recorded; ",
                            state.tasks.size(), " task(s): ", by_state["done"], " done, ", by_state["queued"],
                            " pending or running, ", by_state["failed"], " failed, ", by_state["missing"], " missing\n");
  for (const std::string& line : task_lines) text += line;
  std::vector<std::string> jobs;
  for (const Json& s : state.submissions) {
    text += StrCat("submitted: job array ", s.value("array_job", "?"), " (tasks ",
                   s["tasks"].is_string() ? s["tasks"].get<std::string>() : ArrayList(s["tasks"].get<std::vector<int>>()),
                   "), merge job ", s.value("merge_job", "?"), "\n");
    jobs.push_back(s.value("array_job", ""));
    jobs.push_back(s.value("merge_job", ""));
  }
  if (!query_slurm || jobs.empty()) return text;
  const std::string job_list = Join(jobs, ",");
  if (OnPath("squeue")) {
    absl::StatusOr<CommandOutput> q =
        RunCommand({"squeue", "--noheader", "--array", "--format=%i %T %M %R", StrCat("--jobs=", job_list)});
    if (q.ok() && q->exit_code == 0) {
      text += Trim(q->out).empty() ? "squeue: none of these jobs is pending or running\n"
                                   : StrCat("squeue (job, state, time, node or reason):\n", q->out);
    } else {
      text += StrCat("squeue: ", q.ok() ? Trim(q->err) : std::string(q.status().message()), "\n");
    }
  }
  if (OnPath("sacct")) {
    absl::StatusOr<CommandOutput> a = RunCommand({"sacct", "--noheader", "--parsable2", "--allocations",
                                                  "--format=JobID,State,ExitCode,NodeList", StrCat("--jobs=", job_list)});
    if (a.ok() && a->exit_code == 0) {
      text += StrCat("sacct (job|state|exit|node):\n", a->out);
    } else {
      text += StrCat("sacct: ", a.ok() ? Trim(a->err) : std::string(a.status().message()), "\n");
    }
  }
  return text;
}

}  // namespace passlab
