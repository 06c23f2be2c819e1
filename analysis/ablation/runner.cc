#include "analysis/ablation/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "analysis/ablation/environment.h"
#include "analysis/ablation/report.h"
#include "analysis/ablation/stats.h"
#include "core/ir/str_util.h"
#include "xxhash.h"

namespace passlab {
namespace {

// The algorithm pickers' cache shared by every worker of a sweep.
constexpr const char* kAutotuneCacheFile = "autotune.json";

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A /proc/meminfo field ("MemTotal:", "MemAvailable:") in bytes; 0 where
// unknown.
int64_t MeminfoBytes(std::string_view field) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == field) return kib * 1024;
  }
  return 0;
}

std::string HexId(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The first line of a file, without its newline ("" when missing).
std::string FirstLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The last `max_lines` lines of a log, for error excerpts.
std::string Tail(const fs::path& path, int max_lines) {
  std::string text = ReadFile(path);
  size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  for (int n = 0; pos > 0; --pos) {
    if (text[pos - 1] == '\n' && ++n == max_lines) break;
  }
  return text.substr(pos);
}

// The pass a worker was running when it died: its last "pass" log line.
std::string LastPass(const fs::path& log) {
  std::string text = ReadFile(log);
  constexpr std::string_view kPass = "passlab-worker: pass ";
  size_t at = text.rfind(kPass);
  if (at == std::string::npos) return "";
  // A later phase line means the passes had finished.
  if (text.find("passlab-worker: compiling", at) != std::string::npos) return "";
  size_t end = text.find('\n', at);
  std::string line = text.substr(at + kPass.size(), end == std::string::npos ? std::string::npos : end - at - kPass.size());
  // "algsimp (@8 in gpu/...)" -> "algsimp (@8)"
  size_t in = line.find(" in ");
  if (in != std::string::npos) line = line.substr(0, in) + ")";
  return line;
}

std::string Phase(const fs::path& log) {
  std::string text = ReadFile(log);
  size_t compiling = text.rfind("passlab-worker: compiling");
  size_t pass = text.rfind("passlab-worker: pass ");
  if (compiling != std::string::npos && (pass == std::string::npos || compiling > pass)) return "compiling";
  if (pass != std::string::npos) return "optimizing";
  return "starting";
}

// Appends a worker's "run" reply arrays (worker.h's protocol) to `samples`.
absl::Status AppendSamples(const Json& reply, AblationSamples& samples) {
  const std::pair<const char*, std::vector<double>*> metrics[] = {
      {"kernel_ns", &samples.kernel_ns},
      {"kernel_copy_ns", &samples.kernel_copy_ns},
      {"wall_ns", &samples.wall_ns},
      {"kernel_cpu_ns", &samples.kernel_cpu_ns}};
  for (const auto& [key, values] : metrics) {
    auto it = reply.find(key);
    if (it == reply.end() || it->is_null()) continue;
    if (!it->is_array()) return absl::DataLossError(StrCat("worker reply: '", key, "' is not an array"));
    for (const Json& v : *it) {
      if (!v.is_number()) return absl::DataLossError(StrCat("worker reply: '", key, "' holds a non-number"));
      values->push_back(v.get<double>());
    }
  }
  // Per-kernel step times: appended per name; a name new in this reply
  // (or missing from it) is 0 in the steps that lack it, so every row keeps
  // one entry per step.
  for (const char* key : {"kernel_steps_ns", "kernel_steps_cpu_ns"}) {
    auto& rows = std::string_view(key) == "kernel_steps_ns" ? samples.kernel_steps_ns : samples.kernel_steps_cpu_ns;
    const size_t steps_before = rows.empty() ? 0 : rows.begin()->second.size();
    auto it = reply.find(key);
    if (it == reply.end() || it->is_null()) continue;
    if (!it->is_object()) return absl::DataLossError(StrCat("worker reply: '", key, "' is not an object"));
    std::map<std::string, std::vector<double>> reply_rows;
    for (const auto& [name, row] : it->items()) {
      if (!row.is_array()) return absl::DataLossError(StrCat("worker reply: '", key, ".", name, "' is not an array"));
      std::vector<double>& out = reply_rows[name];
      for (const Json& v : row) {
        if (!v.is_number()) return absl::DataLossError(StrCat("worker reply: '", key, ".", name, "' holds a non-number"));
        out.push_back(v.get<double>());
      }
    }
    const size_t added = reply_rows.empty() ? 0 : reply_rows.begin()->second.size();
    if (!AppendKernelStepRows(reply_rows, steps_before, added, rows)) {
      return absl::DataLossError(StrCat("worker reply: '", key, "' rows differ in length"));
    }
  }
  for (const char* key : {"control_first"}) {
    auto it = reply.find(key);
    if (it == reply.end() || it->is_null()) continue;
    if (!it->is_array()) return absl::DataLossError(StrCat("worker reply: '", key, "' is not an array"));
    for (const Json& v : *it) {
      if (!v.is_boolean()) return absl::DataLossError("worker reply: 'control_first' holds a non-boolean");
      samples.control_first.push_back(v.get<bool>());
    }
  }
  return absl::OkStatus();
}

// The compile-side fields of a worker's first reply (worker.h), into the record.
void TakeCompileFields(const Json& ready, AblationRecord& record) {
  auto take = [&](const char* key, auto& field) {
    auto it = ready.find(key);
    if (it == ready.end() || it->is_null()) return;
    field = it->get<typename std::remove_reference_t<decltype(field)>::value_type>();
  };
  take("optimize_ms", record.optimize_ms);
  take("compile_ms", record.compile_ms);
  take("control_compile_ms", record.control_compile_ms);
  take("kernels_compiled", record.kernels_compiled);
  take("instructions", record.instructions);
  take("autotune", record.autotune);
  take("check", record.check);
  take("error", record.error);
  take("failed_pass", record.failed_pass);
  take("snapshot", record.snapshot);
  take("pass_times", record.pass_times);
  take("autotune_ms", record.autotune_ms);
  take("kernel_cache", record.kernel_cache);
  take("control_compiled_first", record.control_compiled_first);
}

// The worker's "kernels" reply as typed rows.
absl::StatusOr<std::vector<AblationKernel>> ParseKernelTable(const Json& rows, const std::string& where) {
  try {
    return rows.get<std::vector<AblationKernel>>();
  } catch (const std::exception& e) {
    return absl::DataLossError(StrCat(where, ": unreadable kernel table: ", e.what()));
  }
}

// One worker process and its two pipes.
class WorkerProcess {
 public:
  WorkerProcess(std::string variant, fs::path log) : variant_(std::move(variant)), log_(std::move(log)) {}
  ~WorkerProcess() { Kill(); }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  absl::Status Spawn(const std::string& exe, const std::vector<std::string>& args) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) {
      return absl::InternalError(StrCat("pipe: ", std::strerror(errno)));
    }
    int log_fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return absl::InternalError(StrCat("cannot open '", log_.string(), "': ", std::strerror(errno)));
    std::vector<std::string> argv_storage = {exe};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) return absl::InternalError(StrCat("fork: ", std::strerror(errno)));
    if (pid_ == 0) {
      // Child: commands on fd 3, replies on fd 4, stdout/stderr to the log.
      int in = fcntl(to_child[0], F_DUPFD, 10);
      int out = fcntl(from_child[1], F_DUPFD, 10);
      dup2(in, 3);
      dup2(out, 4);
      dup2(log_fd, 1);
      dup2(log_fd, 2);
      int devnull = open("/dev/null", O_RDONLY);
      if (devnull >= 0) dup2(devnull, 0);
      execv(exe.c_str(), argv.data());
      std::fprintf(stderr, "passlab: cannot run '%s': %s\n", exe.c_str(), std::strerror(errno));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    close(log_fd);
    to_ = to_child[1];
    from_ = from_child[0];
    return absl::OkStatus();
  }

  bool alive() const { return pid_ > 0; }
  const std::string& variant() const { return variant_; }
  const fs::path& log() const { return log_; }

  absl::Status Send(const std::string& command) {
    std::string line = command + "\n";
    if (write(to_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      return Died();
    }
    return absl::OkStatus();
  }

  // The next reply, waiting at most `timeout_s`. A worker that dies or times
  // out is reaped; the status says which (kAborted: crash, kDeadlineExceeded).
  absl::StatusOr<Json> Receive(double timeout_s) {
    Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(timeout_s));
    while (true) {
      size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        Json j = Json::parse(line, nullptr, false);
        if (j.is_discarded()) return absl::DataLossError(StrCat("unreadable worker reply: ", line));
        return j;
      }
      int64_t left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left_ms <= 0) {
        Kill();
        return absl::DeadlineExceededError(StrCat("no answer within ", timeout_s, " s"));
      }
      pollfd p{from_, POLLIN, 0};
      int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      char chunk[65536];
      ssize_t n = read(from_, chunk, sizeof(chunk));
      if (n <= 0) return Died();
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  // Waits for a worker that was told to quit.
  void Reap() {
    if (pid_ <= 0) return;
    for (int i = 0; i < 100; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        CloseFds();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    Kill();
  }

  void Kill() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    CloseFds();
  }

  int signal() const { return signal_; }
  int exit_code() const { return exit_code_; }

 private:
  absl::Status Died() {
    int status = 0;
    if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) {
      if (WIFSIGNALED(status)) signal_ = WTERMSIG(status);
      if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
    }
    pid_ = -1;
    CloseFds();
    if (signal_ != 0) return absl::AbortedError(StrCat("killed by signal ", signal_, " (", strsignal(signal_), ")"));
    return absl::AbortedError(StrCat("exited with status ", exit_code_, " without an answer"));
  }
  void CloseFds() {
    if (to_ >= 0) close(to_);
    if (from_ >= 0) close(from_);
    to_ = from_ = -1;
  }

  std::string variant_;
  fs::path log_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
  int signal_ = 0;
  int exit_code_ = 0;
};

struct Slot {
  const AblationVariant* variant = nullptr;  // null: the block's baseline
  // Its worker processes (AblationOptions::processes), which take turns.
  std::vector<std::unique_ptr<WorkerProcess>> processes;
  int timed = 0;  // timed repetitions so far
  AblationRecord record;
  bool ok = false;  // ready and still alive
};

class Sweep {
 public:
  explicit Sweep(const AblationOptions& o) : o_(o), out_(o.out_dir) {}

  absl::Status Run() {
    plan_ = o_.plan;
    if (o_.task < 0) {
      if (absl::Status s = PrepareAblationDirectory(o_); !s.ok()) return s;
    } else if (ReadFile(out_ / "input.hlo") != o_.input_text) {
      return absl::FailedPreconditionError(StrCat("task ", o_.task, ": '", o_.out_dir, "/input.hlo' is not the module of the plan"));
    }
    std::error_code ec;
    for (const char* sub : {"logs", "snapshots", "traces"}) fs::create_directories(out_ / sub, ec);
    const fs::path results = out_ / o_.results_file;
    fs::create_directories(results.parent_path(), ec);
    if (ec) return absl::InternalError(StrCat("cannot create '", o_.out_dir, "': ", ec.message()));
    absl::StatusOr<std::vector<AblationRecord>> records = ReadAblationRecordsFile(results.string());
    if (!records.ok()) return records.status();
    for (const AblationRecord& r : *records) {
      if (r.kind == "baseline") {
        ++attempt_;
      } else {
        done_.insert(r.variant);
      }
    }
    // Rerunning with the same --out resumes: say so, and how far it got.
    if (o_.task < 0 && (attempt_ > 0 || !done_.empty())) {
      size_t measured = 0;
      for (const AblationVariant& v : plan_) measured += done_.count(v.name);
      std::fprintf(stderr,
                   "passlab ablate: resuming the sweep in %s: %zu of %zu variants already measured (%d earlier "
                   "block(s)); running the other %zu\n",
                   o_.out_dir.c_str(), measured, plan_.size(), attempt_, plan_.size() - measured);
    }
    // A sweep killed during a write leaves a torn last line: end it, so the
    // next record starts on a line of its own.
    std::string previous_text = ReadFile(results);
    results_fd_ = open(results.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (results_fd_ < 0) return absl::InternalError(StrCat("cannot append to '", results.string(), "'"));
    absl::Status s = absl::OkStatus();
    if (!previous_text.empty() && previous_text.back() != '\n') s = WriteAll("\n");
    if (s.ok()) s = RunPhases();
    close(results_fd_);
    if (o_.progress) std::fprintf(stderr, "\n");
    return s;
  }

 private:
  absl::Status WritePlan() {
    Json variants = Json::array();
    for (const AblationVariant& v : plan_) variants.push_back(v.ToJson());
    return WriteFileAtomically((out_ / "plan.json").string(), Json{{"variants", variants}}.dump(2) + "\n");
  }

  // This block's number: the attempt-th block of a local sweep, or of task
  // `task` among `tasks`.
  int BlockNumber() const { return o_.task < 0 ? attempt_ : o_.task + o_.tasks * attempt_; }

  absl::Status RunPhases() {
    // A task's plan.json (with the whole sweep's tasks) is the submitter's.
    if (o_.task < 0) {
      if (absl::Status s = WritePlan(); !s.ok()) return s;
    }
    if (absl::Status s = PrepareReference(); !s.ok()) return s;
    if (absl::Status s = RunVariants(o_.plan); !s.ok()) return s;
    if (o_.pairs_top_k < 2) return absl::OkStatus();
    absl::StatusOr<std::vector<AblationRecord>> records = ReadAblationRecords(o_.out_dir);
    if (!records.ok()) return records.status();
    std::vector<std::string> top = TopPasses(*records, o_.pairs_top_k);
    std::vector<AblationVariant> pairs = PairsOf(top);
    plan_.insert(plan_.end(), pairs.begin(), pairs.end());
    if (absl::Status s = WritePlan(); !s.ok()) return s;
    return RunVariants(pairs);
  }

  // Pair variants: the union of the two disable-one variants' filters.
  std::vector<AblationVariant> PairsOf(const std::vector<std::string>& passes) const {
    std::map<std::string, const AblationVariant*> by_pass;
    for (const AblationVariant& v : o_.plan) {
      if (v.kind == "disable-one" && v.passes.size() == 1) by_pass[v.passes[0]] = &v;
    }
    std::vector<AblationVariant> pairs;
    for (size_t i = 0; i < passes.size(); ++i) {
      for (size_t j = i + 1; j < passes.size(); ++j) {
        const AblationVariant* a = by_pass[passes[i]];
        const AblationVariant* b = by_pass[passes[j]];
        if (a == nullptr || b == nullptr) continue;
        AblationVariant v;
        v.name = StrCat("disable ", passes[i], "+", passes[j]);
        v.kind = "pair";
        v.passes = {passes[i], passes[j]};
        v.disable = StrCat(a->disable, ",", b->disable);
        pairs.push_back(std::move(v));
      }
    }
    return pairs;
  }

  // The passes whose disable-one variants ran and slowed down most (median
  // ratio to the pooled baseline).
  static std::vector<std::string> TopPasses(const std::vector<AblationRecord>& records, int k) {
    std::vector<double> base;
    for (const AblationRecord& r : records) {
      if (r.kind == "baseline" && r.samples) base.insert(base.end(), r.samples->kernel_ns.begin(), r.samples->kernel_ns.end());
    }
    const double b = Median(base);
    std::vector<std::pair<double, std::string>> ranked;
    for (const AblationRecord& r : records) {
      if (r.kind != "disable-one" || r.status != "ok" || !r.samples || !r.passes || r.passes->empty()) continue;
      if (r.CheckFailed()) continue;
      double m = Median(r.samples->kernel_ns);
      if (b > 0) ranked.emplace_back(m / b, r.passes->front());
    }
    std::sort(ranked.begin(), ranked.end(), std::greater<>());
    std::vector<std::string> top;
    for (int i = 0; i < k && i < static_cast<int>(ranked.size()); ++i) top.push_back(ranked[i].second);
    return top;
  }

  // What a worker process is for: the slot's first process (compiles, checks
  // the outputs against the reference, times), its other processes (the same
  // without the check: they run the same program), or the screen (optimize
  // only and reply with the program's fingerprint: no reference, snapshot or
  // control).
  enum class WorkerRole { kCheckAndTime, kTime, kScreen };

  std::vector<std::string> WorkerArgs(const AblationVariant* v, WorkerRole role = WorkerRole::kCheckAndTime) const {
    std::vector<std::string> args = {"ablate-worker", "--input", (out_ / "input.hlo").string(),
                                     "--pipeline", o_.pipeline, "--device", o_.device, "--threads", StrCat(o_.threads),
                                     "--seed", StrCat(o_.seed), "--tolerance", StrCat(o_.tolerance),
                                     "--fd-in", "3", "--fd-out", "4",
                                     "--autotune-cache", (out_ / kAutotuneCacheFile).string()};
    if (!o_.kernel_cache_dir.empty()) args.insert(args.end(), {"--kernel-cache", o_.kernel_cache_dir});
    for (const std::string& opt : o_.pass_options) args.insert(args.end(), {"--pass-option", opt});
    for (const std::string& pass : o_.removed_passes) args.insert(args.end(), {"--remove-pass", pass});
    if (!o_.args_dir.empty()) args.insert(args.end(), {"--args", o_.args_dir});
    if (v != nullptr) {
      if (!v->disable.empty()) args.insert(args.end(), {"--disable", v->disable});
      if (!v->enable_only.empty()) args.insert(args.end(), {"--enable-only", v->enable_only});
      args.insert(args.end(), {"--variant", v->name});
      if (role != WorkerRole::kScreen) {
        args.insert(args.end(), {"--snapshot", (out_ / "snapshots" / (SanitizeFileName(v->name) + ".hlo")).string()});
        if (o_.control) args.push_back("--control");
      }
    }
    if (role == WorkerRole::kScreen) args.push_back("--fingerprint-only");
    if (role == WorkerRole::kCheckAndTime && o_.reference != "none") {
      args.insert(args.end(), {"--reference-dir", (out_ / "reference").string()});
    }
    return args;
  }

  absl::Status PrepareReference() {
    if (o_.reference == "none" || fs::exists(out_ / "reference" / "shapes.txt")) return absl::OkStatus();
    if (o_.progress) {
      std::fprintf(stderr, "passlab ablate: computing the reference outputs (%s)\n", o_.reference.c_str());
    }
    // Array tasks may compute it at the same time: each writes its own
    // directory and renames it into place; the first rename wins.
    const std::string suffix = o_.task < 0 ? "" : StrCat(".", o_.task);
    const fs::path mine = out_ / StrCat("reference.tmp", suffix);
    std::error_code ec;
    fs::remove_all(mine, ec);
    WorkerProcess p("reference", out_ / "logs" / StrCat("reference", suffix, ".log"));
    std::vector<std::string> args = {"ablate-worker", "--input", (out_ / "input.hlo").string(),
                                     "--pipeline", o_.pipeline, "--device", o_.device, "--threads", StrCat(o_.threads),
                                     "--seed", StrCat(o_.seed), "--fd-in", "3", "--fd-out", "4",
                                     "--reference-dir", mine.string(), "--write-reference",
                                     o_.reference == "baseline" ? "compiled" : "evaluator"};
    for (const std::string& opt : o_.pass_options) args.insert(args.end(), {"--pass-option", opt});
    for (const std::string& pass : o_.removed_passes) args.insert(args.end(), {"--remove-pass", pass});
    if (!o_.args_dir.empty()) args.insert(args.end(), {"--args", o_.args_dir});
    if (absl::Status s = p.Spawn(o_.worker_exe, args); !s.ok()) return s;
    absl::StatusOr<Json> reply = p.Receive(o_.timeout_s);
    p.Reap();
    if (!reply.ok() || reply->value("status", "") != "ok") {
      std::string why = reply.ok() ? reply->value("error", reply->dump()) : std::string(reply.status().message());
      return absl::FailedPreconditionError(StrCat("the reference outputs (", o_.reference, ") could not be computed: ", why,
                                                  "\n", Tail(p.log(), 10), "(log: ", p.log().string(), ")"));
    }
    fs::rename(mine, out_ / "reference", ec);
    if (ec && fs::exists(out_ / "reference" / "shapes.txt")) {
      fs::remove_all(mine, ec);  // another task was first
      return absl::OkStatus();
    }
    if (ec) return absl::InternalError(StrCat("cannot rename '", mine.string(), "' to 'reference': ", ec.message()));
    return absl::OkStatus();
  }

  absl::Status WriteAll(std::string_view text) {
    while (!text.empty()) {
      ssize_t n = write(results_fd_, text.data(), text.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return absl::InternalError(StrCat("cannot append to '", (out_ / o_.results_file).string(), "': ", std::strerror(errno)));
      text.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }

  // Appends records with one write and one fsync: the file holds all of
  // them or (after a kill) a prefix whose torn last line readers skip.
  absl::Status Append(std::vector<AblationRecord> records) {
    std::string lines;
    for (AblationRecord& record : records) {
      if (o_.task >= 0) {
        record.task = o_.task;
        record.plan_id = o_.plan_id;
        record.node = o_.node;
        if (!o_.slurm_job.empty()) record.slurm_job = o_.slurm_job;
      }
      record.time = static_cast<int64_t>(std::time(nullptr));
      lines += Json(record).dump() + "\n";
    }
    if (absl::Status s = WriteAll(lines); !s.ok()) return s;
    if (fsync(results_fd_) != 0) {
      return absl::InternalError(StrCat("cannot sync '", (out_ / o_.results_file).string(), "': ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }

  AblationRecord BaseRecord(const AblationVariant* v) const {
    AblationRecord r;
    if (v == nullptr) {
      r.variant = "baseline";
      r.kind = "baseline";
      r.passes.emplace();
      r.disable = "";
      r.machine = machine_;  // where this block's ratios were measured
    } else {
      r.variant = v->name;
      r.kind = v->kind;
      r.passes = v->passes;
      r.disable = v->disable;
      r.enable_only = v->enable_only;
    }
    r.block = BlockNumber();
    return r;
  }

  // A worker that stopped answering: crash or timeout, with the log's story.
  void RecordDeath(Slot& slot, WorkerProcess& p, const absl::Status& why, const std::string& during) {
    slot.ok = false;
    const bool timeout = why.code() == absl::StatusCode::kDeadlineExceeded;
    slot.record.status = timeout ? "timeout" : "crash";
    if (timeout) slot.record.timeout_s = o_.timeout_s;
    if (p.signal() != 0) slot.record.signal = p.signal();
    std::string phase = during == "compile" ? Phase(p.log()) : during;
    std::string pass = phase == "optimizing" ? LastPass(p.log()) : "";
    if (!pass.empty()) slot.record.failed_pass = pass;
    slot.record.error = StrCat(why.message(), " while ", phase, pass.empty() ? "" : StrCat(" (in pass ", pass, ")"),
                               "\n", Tail(p.log(), 12));
    slot.record.log = fs::relative(p.log(), out_).string();
  }

  absl::Status RunVariants(const std::vector<AblationVariant>& variants) {
    std::vector<const AblationVariant*> todo;
    for (const AblationVariant& v : variants) {
      if (done_.count(v.name)) continue;
      if (v.required) {
        AblationRecord r = BaseRecord(&v);
        r.status = "required";
        r.required_reason = v.required_reason;
        if (absl::Status s = Append({r}); !s.ok()) return s;
        done_.insert(v.name);
        continue;
      }
      todo.push_back(&v);
    }
    total_ = static_cast<int>(todo.size());
    finished_ = 0;
    start_ = Clock::now();
    if (o_.skip_identical) {
      if (absl::Status s = ScreenIdentical(todo); !s.ok()) return s;
      total_ = static_cast<int>(todo.size());
    }
    // An array task is one block: its variants and its own baseline.
    const int block_size = o_.task < 0 ? o_.block_size : static_cast<int>(todo.size());
    // Blocks of equal size, at most `block_size` variants and as many as
    // memory holds (BlockCapacity); a block whose baseline shows that fewer
    // fit hands the rest back (RunBlock's `deferred`).
    std::vector<const AblationVariant*> queue = todo;
    while (!queue.empty()) {
      const size_t capacity = std::min<size_t>(static_cast<size_t>(std::max(1, block_size)), BlockCapacity());
      const size_t n = SplitIntoBlocks(queue.size(), static_cast<int>(capacity)).front().second;
      std::vector<const AblationVariant*> members(queue.begin(), queue.begin() + n);
      queue.erase(queue.begin(), queue.begin() + n);
      std::vector<const AblationVariant*> deferred;
      if (absl::Status s = RunBlock(members, &deferred); !s.ok()) return s;
      ++attempt_;
      queue.insert(queue.begin(), deferred.begin(), deferred.end());
    }
    // Every variant compiled to the baseline's program: the baseline is
    // still timed once (its step time, kernels, IR diffs and trace).
    if (todo.empty() && attempt_ == 0 && screened_identical_ > 0) {
      if (absl::Status s = RunBlock({}, nullptr); !s.ok()) return s;
      ++attempt_;
    }
    return absl::OkStatus();
  }

  // Variants per block that memory holds: every slot (the variants and the
  // baseline) keeps `processes` workers alive through the block, each as
  // large as the largest worker's private memory seen so far
  // (worker_rss_bytes_, with a fifth more for variants that grow). `resident` of those workers are alive already
  // (counted in MemAvailable). Unknown before the first worker: no limit.
  size_t BlockCapacity(int64_t resident = 0) const {
    if (worker_rss_bytes_ <= 0) return std::numeric_limits<size_t>::max();
    const int64_t available = AvailableMemoryBytes();
    if (available <= 0) return std::numeric_limits<size_t>::max();
    const double per_slot = 1.2 * static_cast<double>(worker_rss_bytes_) * std::max(1, o_.processes);
    const double usable = 0.9 * static_cast<double>(available + resident * worker_rss_bytes_);
    const int64_t slots = static_cast<int64_t>(usable / per_slot);
    return static_cast<size_t>(std::max<int64_t>(1, slots - 1));  // one slot is the baseline
  }

  // /proc/meminfo's MemAvailable in bytes (0: unknown); the test hook
  // PASSLAB_ABLATE_MEMORY_AVAILABLE (bytes) stands in for it.
  static int64_t AvailableMemoryBytes() {
    if (const char* forced = std::getenv("PASSLAB_ABLATE_MEMORY_AVAILABLE"); forced != nullptr) {
      return std::strtoll(forced, nullptr, 10);
    }
    return MeminfoBytes("MemAvailable:");
  }

  // The screen (AblationOptions::skip_identical): optimizes the baseline and
  // every variant in `todo` (`jobs` at a time, nothing compiled or run) and
  // records the variants whose optimized module is the baseline's, untimed
  // and identical; `todo` keeps the others. A/A copies and variants slowed
  // down on purpose are always timed. A variant whose screen fails (crash,
  // error, timeout) is kept: its block records the failure properly.
  absl::Status ScreenIdentical(std::vector<const AblationVariant*>& todo) {
    std::vector<const AblationVariant*> screened;
    for (const AblationVariant* v : todo) {
      if (v->kind != kAaVariantKind && InjectedDelay(v) == 0) screened.push_back(v);
    }
    if (screened.empty()) return absl::OkStatus();
    struct Result {
      std::string fingerprint;  // empty: the screen failed
      Json reply;
    };
    auto screen = [&](const std::vector<const AblationVariant*>& batch) -> std::vector<Result> {
      std::vector<std::unique_ptr<WorkerProcess>> processes;
      for (const AblationVariant* v : batch) {
        std::string name = StrCat(v ? v->name : "baseline", ".screen");
        processes.push_back(std::make_unique<WorkerProcess>(name, out_ / "logs" / (SanitizeFileName(name) + ".log")));
        if (!processes.back()->Spawn(o_.worker_exe, WorkerArgs(v, WorkerRole::kScreen)).ok()) processes.back().reset();
      }
      std::vector<Result> results(batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        if (processes[i] == nullptr) continue;
        absl::StatusOr<Json> reply = processes[i]->Receive(o_.timeout_s);
        if (reply.ok() && reply->value("status", "") == "ok" && (*reply)["program_xxh64"].is_string()) {
          results[i] = {(*reply)["program_xxh64"].get<std::string>(), *reply};
          processes[i]->Reap();
        } else {
          processes[i]->Kill();
        }
      }
      return results;
    };
    Progress("screening for the baseline's program");
    // The baseline first, alone: its algorithm choices go into the shared
    // autotune cache before any variant's screen tunes.
    const std::vector<Result> base = screen({nullptr});
    if (base[0].fingerprint.empty()) return absl::OkStatus();  // its block will say why
    baseline_fingerprint_ = base[0].fingerprint;
    const size_t jobs = static_cast<size_t>(std::max(1, o_.jobs));
    std::vector<AblationRecord> identical;
    for (size_t first = 0; first < screened.size(); first += jobs) {
      std::vector<const AblationVariant*> batch(screened.begin() + first,
                                                screened.begin() + std::min(screened.size(), first + jobs));
      progress_fraction_ = static_cast<double>(first) / screened.size() * 0.1;
      Progress(StrCat("screening ", first + 1, "/", screened.size(), " for the baseline's program"));
      std::vector<Result> results = screen(batch);
      for (size_t i = 0; i < batch.size(); ++i) {
        if (results[i].fingerprint.empty()) continue;
        fingerprints_[batch[i]->name] = results[i].fingerprint;
        if (results[i].fingerprint != baseline_fingerprint_) continue;
        AblationRecord r = BaseRecord(batch[i]);
        r.status = "ok";
        r.program_xxh64 = results[i].fingerprint;
        r.identical_program = true;
        TakeCompileFields(results[i].reply, r);  // optimize_ms, instructions
        identical.push_back(std::move(r));
      }
    }
    if (identical.empty()) return absl::OkStatus();
    // Their IR diffs are block 0's baseline's; a rerun links them (LinkIrDiff).
    for (AblationRecord& r : identical) LinkIrDiff(r, o_.out_dir);
    screened_identical_ += static_cast<int>(identical.size());
    std::set<std::string> names;
    for (const AblationRecord& r : identical) names.insert(r.variant);
    if (absl::Status s = Append(std::move(identical)); !s.ok()) return s;
    done_.insert(names.begin(), names.end());
    todo.erase(std::remove_if(todo.begin(), todo.end(), [&](const AblationVariant* v) { return names.count(v->name) > 0; }),
               todo.end());
    std::fprintf(stderr, "%spasslab ablate: %zu of %zu variants compile to the baseline's program (%s): recorded "
                         "as identical, not timed; timing the other %zu\n",
                 o_.progress ? "\r\033[K" : "", names.size(), screened.size(), baseline_fingerprint_.c_str(),
                 todo.size());
    return absl::OkStatus();
  }

  void Progress(const std::string& what) {
    if (!o_.progress) return;
    double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    double done = total_ > 0 ? static_cast<double>(finished_) / total_ : 1;
    int width = 24, filled = static_cast<int>(done * width);
    std::string bar(filled, '#');
    bar.resize(width, '.');
    std::string eta = "--:--";
    if (progress_fraction_ > 0.02) {
      int s = static_cast<int>(elapsed / progress_fraction_ - elapsed);
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%d:%02d", s / 60, s % 60);
      eta = buf;
    }
    std::fprintf(stderr, "\r[%s] %d/%d variants  %-34.34s  elapsed %d:%02d  ETA %s ", bar.c_str(), finished_, total_,
                 what.c_str(), static_cast<int>(elapsed) / 60, static_cast<int>(elapsed) % 60, eta.c_str());
    std::fflush(stderr);
  }

  // The seed of one worker process's random placement and compile order:
  // from the sweep's seed, the block, the variant and the process, so a
  // rerun draws the same and no two processes draw alike.
  uint64_t ProcessSeed(const std::string& name, size_t process) const {
    const std::string key = StrCat(o_.seed, ":", BlockNumber(), ":", name, ":", process);
    return XXH64(key.data(), key.size(), 0x7a1ace) | 1;
  }

  // The test hook's delay for a variant (0: none): --test-inject-delay
  // names the variant or one of its passes.
  double InjectedDelay(const AblationVariant* v) const {
    if (v == nullptr) return 0;
    for (const auto& [name, fraction] : o_.inject_delays) {
      if (name == v->name || std::count(v->passes.begin(), v->passes.end(), name) > 0) return fraction;
    }
    return 0;
  }

  // `deferred` (may be null: then never): members this block handed back
  // because memory does not hold them all (BlockCapacity, once its first
  // worker shows how large workers are); the caller runs them later.
  absl::Status RunBlock(std::vector<const AblationVariant*> members, std::vector<const AblationVariant*>* deferred) {
    // Worker size unknown: the baseline's first process compiles alone, and
    // its size decides how many members stay.
    const bool probe = deferred != nullptr && worker_rss_bytes_ <= 0;
    std::vector<Slot> slots(members.size() + 1);
    for (size_t i = 0; i < members.size(); ++i) slots[i + 1].variant = members[i];
    // Block 0's baseline writes the IR diffs (one writer, also across tasks).
    const bool first_baseline = BlockNumber() == 0;
    // Each slot's repetitions are spread over `processes` worker processes
    // (two repetitions in a row on one, then the next): what one process's
    // placement in memory does to its times then varies within the sample
    // instead of biasing the variant.
    const size_t processes = static_cast<size_t>(std::max(1, o_.processes));
    // Compile: `jobs` workers at a time; block 0's baseline alone, so that
    // its algorithm choices are in the shared autotune cache before any
    // variant tunes.
    std::vector<std::pair<size_t, size_t>> workers;  // (slot, process)
    for (size_t p = 0; p < processes; ++p) {
      for (size_t i = 0; i < slots.size(); ++i) workers.emplace_back(i, p);
    }
    std::stable_sort(workers.begin(), workers.end(), [](const auto& a, const auto& b) {
      return a.first == 0 && a.second == 0 && !(b.first == 0 && b.second == 0);
    });
    for (Slot& slot : slots) {
      slot.record = BaseRecord(slot.variant);
      slot.processes.resize(processes);
      slot.ok = true;
    }
    const size_t jobs = static_cast<size_t>(std::max(1, o_.jobs));
    for (size_t first = 0, end = 0; first < workers.size(); first = end) {
      end = std::min(workers.size(), first + (first == 0 && (first_baseline || probe) ? 1 : jobs));
      for (size_t w = first; w < end; ++w) {
        auto [i, k] = workers[w];
        Slot& slot = slots[i];
        if (!slot.ok) continue;  // an earlier process of this slot failed
        std::string name = slot.variant ? slot.variant->name : StrCat("baseline.", BlockNumber());
        std::string log_name = k == 0 ? name : StrCat(name, ".p", k + 1);
        slot.processes[k] =
            std::make_unique<WorkerProcess>(log_name, out_ / "logs" / (SanitizeFileName(log_name) + ".log"));
        // The outputs are checked once per slot, by its first process: the
        // others run the same program (a slow variant's check step costs as
        // much as a repetition).
        std::vector<std::string> args = WorkerArgs(slot.variant, k == 0 ? WorkerRole::kCheckAndTime : WorkerRole::kTime);
        if (slot.variant == nullptr && first_baseline && k == 0) {
          // The first baseline writes the IR diff of every pass in the plan.
          std::set<std::string> passes;
          for (const AblationVariant& v : plan_) passes.insert(v.passes.begin(), v.passes.end());
          args.insert(args.end(), {"--diff-dir", (out_ / "diffs").string(), "--diff-passes",
                                   Join(std::vector<std::string>(passes.begin(), passes.end()), ",")});
        }
        if (o_.randomize_placement) {
          const uint64_t seed = ProcessSeed(name, k);
          args.insert(args.end(), {"--placement-seed", StrCat(seed)});
          if (slot.variant != nullptr && o_.control && (seed >> 63) != 0) args.push_back("--control-first");
        }
        if (double delay = InjectedDelay(slot.variant); delay > 0) {
          args.insert(args.end(), {"--test-inject-delay", StrCat(delay)});
          slot.record.injected_delay = delay;
        }
        if (absl::Status s = slot.processes[k]->Spawn(o_.worker_exe, args); !s.ok()) return s;
      }
      Progress(StrCat("block ", BlockNumber(), ": compiling ", end - first, " worker(s)"));
      for (size_t w = first; w < end; ++w) {
        auto [i, k] = workers[w];
        Slot& slot = slots[i];
        if (slot.processes[k] == nullptr) continue;  // not started: the slot had failed
        WorkerProcess& process = *slot.processes[k];
        if (!slot.ok) {
          process.Kill();  // another process of this slot failed already
          continue;
        }
        absl::StatusOr<Json> ready = process.Receive(o_.timeout_s);
        if (!ready.ok()) {
          RecordDeath(slot, process, ready.status(), "compile");
          continue;
        }
        // The first process's compile fields; a failure's from the process that failed.
        const bool failed = ready->value("status", "compile-error") != "ok";
        if (k == 0 || failed) {
          TakeCompileFields(*ready, slot.record);
        } else if (auto cache = ready->find("kernel_cache");
                   cache != ready->end() && cache->is_object() && slot.record.kernel_cache &&
                   slot.record.kernel_cache->is_object()) {
          // The other processes' kernel-cache counts add to the first's (they
          // load what the first compiled: the persistent cache's hits).
          for (const char* key : {"hits", "misses", "persistent_hits", "persistent_misses"}) {
            if (!cache->contains(key) || !(*cache)[key].is_number_integer()) continue;
            Json& total = (*slot.record.kernel_cache)[key];
            total = total.is_number_integer() ? total.get<int64_t>() + (*cache)[key].get<int64_t>()
                                              : (*cache)[key].get<int64_t>();
          }
        }
        if (ready->contains("check") && !(*ready)["check"].value("ok", true)) slot.record.check = (*ready)["check"];
        if (slot.record.snapshot) slot.record.snapshot = fs::relative(*slot.record.snapshot, out_).string();
        if (failed) {
          slot.record.status = ready->value("status", "compile-error");
          slot.ok = false;
          process.Reap();
        } else if (!slot.record.status) {
          slot.record.status = "ok";
        }
        worker_rss_bytes_ = std::max<int64_t>(worker_rss_bytes_, ready->value("private_bytes", int64_t{0}));
      }
      if (first == 0 && probe && worker_rss_bytes_ > 0) {
        // Only the baseline's first process is alive: keep the members that fit.
        const size_t keep = std::min(members.size(), BlockCapacity(/*resident=*/1));
        if (keep < members.size()) {
          std::fprintf(stderr,
                       "%spasslab ablate: workers hold up to %.0f MiB of their own each and %.1f GiB are available, so blocks "
                       "hold %zu variant(s) (%d process(es) each) instead of %zu\n",
                       o_.progress ? "\r\033[K" : "", worker_rss_bytes_ / 1048576.0,
                       AvailableMemoryBytes() / 1073741824.0, keep, o_.processes, members.size());
          deferred->assign(members.begin() + keep, members.end());
          members.resize(keep);
          slots.resize(keep + 1);
          workers.erase(std::remove_if(workers.begin() + 1, workers.end(),
                                       [&](const auto& w) { return w.first > keep; }),
                        workers.end());
        }
      }
    }
    for (Slot& slot : slots) {
      if (slot.ok) continue;
      for (std::unique_ptr<WorkerProcess>& p : slot.processes) {
        if (p != nullptr) p->Kill();
      }
    }
    if (!slots[0].ok) {
      return absl::FailedPreconditionError(StrCat("the baseline failed: ", slots[0].record.error.value_or(""),
                                                  " (log: ", slots[0].processes[0]->log().string(), ")"));
    }
    // Warm up (untimed, so `jobs` processes at a time), then round-robin
    // repetitions.
    std::vector<std::pair<Slot*, WorkerProcess*>> warm;
    for (Slot& slot : slots) {
      for (std::unique_ptr<WorkerProcess>& p : slot.processes) warm.emplace_back(&slot, p.get());
    }
    for (size_t first = 0; first < warm.size(); first += jobs) {
      const size_t end = std::min(warm.size(), first + jobs);
      std::vector<absl::Status> sent(end - first);
      for (size_t w = first; w < end; ++w) {
        auto [slot, p] = warm[w];
        if (slot->ok) sent[w - first] = p->Send(StrCat("warmup ", o_.warmup));
      }
      for (size_t w = first; w < end; ++w) {
        auto [slot, p] = warm[w];
        if (!slot->ok) continue;
        const absl::Status& s = sent[w - first];
        absl::StatusOr<Json> reply = s.ok() ? p->Receive(o_.timeout_s) : absl::StatusOr<Json>(s);
        if (!reply.ok()) RecordDeath(*slot, *p, reply.status(), "warming up");
      }
    }
    // One timed repetition of a slot, appended to its record: on its
    // processes in turn, two repetitions each (an ABBA pair of the control
    // stays within one process).
    auto run_once = [&](Slot& slot) {
      WorkerProcess& p = *slot.processes[(slot.timed / 2) % slot.processes.size()];
      ++slot.timed;
      absl::Status s = p.Send("run 1");
      absl::StatusOr<Json> reply = s.ok() ? p.Receive(o_.timeout_s) : absl::StatusOr<Json>(s);
      if (!reply.ok() || reply->contains("error")) {
        RecordDeath(slot, p, reply.ok() ? absl::AbortedError(reply->value("error", "")) : reply.status(), "running");
        return;
      }
      // The worker's reply (worker.h) is a protocol message, not a record:
      // its arrays are appended to the record's samples.
      if (!slot.record.samples) slot.record.samples.emplace();
      if (absl::Status s = AppendSamples(*reply, *slot.record.samples); !s.ok()) {
        RecordDeath(slot, p, s, "running");
        return;
      }
      if (reply->contains("control")) {
        // The control's steps, one per variant step, in the same order.
        if (!slot.record.control_samples) slot.record.control_samples.emplace();
        if (absl::Status s = AppendSamples((*reply)["control"], *slot.record.control_samples); !s.ok()) {
          RecordDeath(slot, p, s, "running");
          return;
        }
      }
      slot.record.kernel_count = reply->value("kernel_count", int64_t{0});
      slot.record.bytes = reply->value("bytes", int64_t{0});
    };
    const int n = static_cast<int>(slots.size());
    for (int rep = 0; rep < o_.repeats; ++rep) {
      progress_fraction_ = (finished_ + static_cast<double>(rep) / o_.repeats * (n - 1)) / std::max(1, total_);
      Progress(StrCat("block ", BlockNumber(), ": repetition ", rep + 1, "/", o_.repeats));
      for (int k = 0; k < n; ++k) {
        Slot& slot = slots[(k + rep) % n];
        if (slot.ok) run_once(slot);
      }
    }
    // Adaptive repetitions: more for the variants whose in-process
    // comparison is not yet as precise as asked (the metric the report
    // judges by default).
    // Sequential testing: more for the variants whose verdict is still
    // open; the decided ones stop.
    if (o_.control && (o_.target_ci > 0 || o_.sequential)) {
      for (int rep = o_.repeats; rep < o_.max_repeats; ++rep) {
        std::vector<Slot*> imprecise;
        for (size_t k = 1; k < slots.size(); ++k) {
          if (!slots[k].ok) continue;
          bool more = false;
          if (o_.target_ci > 0) {
            const double half = InProcessCiHalfWidth(slots[k].record, SweepAblationMetric(o_.device, o_.threads));
            more = std::isnan(half) || half > o_.target_ci;
          }
          if (o_.sequential && !more) {
            more = !DecideInProcess(slots[k].record, SweepAblationMetric(o_.device, o_.threads), o_.sequential_band,
                                    static_cast<int64_t>(o_.plan.size()))
                        .decided;
          }
          if (more) imprecise.push_back(&slots[k]);
        }
        if (imprecise.empty()) break;
        Progress(StrCat("block ", BlockNumber(), ": ", imprecise.size(),
                        o_.sequential ? " undecided" : StrCat(" above ±", o_.target_ci * 100, "%"),
                        ", repetition ", rep + 1));
        for (Slot* slot : imprecise) {
          run_once(*slot);
          slot->record.extra_repeats = slot->record.extra_repeats.value_or(0) + 1;
        }
      }
    }
    if (!slots[0].ok) {
      return absl::FailedPreconditionError(StrCat("the baseline failed: ", slots[0].record.error.value_or(""),
                                                  " (log: ", slots[0].processes[0]->log().string(), ")"));
    }
    // Kernel tables and traces (the first process's), peak memory (the
    // largest); then the records.
    for (Slot& slot : slots) {
      if (!slot.ok) continue;
      for (size_t k = 1; k < slot.processes.size(); ++k) {
        WorkerProcess& p = *slot.processes[k];
        absl::StatusOr<Json> bye = p.Send("quit").ok() ? p.Receive(o_.timeout_s) : absl::AbortedError("gone");
        if (bye.ok()) {
          slot.record.peak_rss_bytes = std::max<int64_t>(slot.record.peak_rss_bytes.value_or(0),
                                                         (*bye).value("peak_rss_bytes", int64_t{0}));
          worker_rss_bytes_ = std::max(worker_rss_bytes_, (*bye).value("private_bytes", int64_t{0}));
        }
        p.Reap();
      }
      WorkerProcess& p = *slot.processes[0];
      absl::StatusOr<Json> kernels = p.Send("kernels").ok() ? p.Receive(o_.timeout_s) : absl::AbortedError("gone");
      if (kernels.ok()) {
        absl::StatusOr<std::vector<AblationKernel>> table =
            ParseKernelTable((*kernels)["kernels"], StrCat("worker of ", p.variant()));
        if (table.ok()) slot.record.kernels = *std::move(table);
      }
      std::string name = slot.variant ? slot.variant->name : "baseline";
      // One baseline trace: the first block's (block 0 in a Slurm array, so
      // concurrent tasks never write it at once).
      const bool baseline_trace =
          o_.task < 0 ? !fs::exists(out_ / "traces" / "baseline.json") : BlockNumber() == 0;
      bool trace = slot.variant == nullptr ? baseline_trace
                                           : std::count(o_.trace_variants.begin(), o_.trace_variants.end(), name) > 0;
      if (trace) {
        fs::path path = out_ / "traces" / (SanitizeFileName(name) + ".json");
        if (p.Send(StrCat("trace ", path.string())).ok() && p.Receive(o_.timeout_s).ok()) {
          slot.record.trace = fs::relative(path, out_).string();
        }
      }
      absl::StatusOr<Json> bye = p.Send("quit").ok() ? p.Receive(o_.timeout_s) : absl::AbortedError("gone");
      if (bye.ok()) {
        slot.record.peak_rss_bytes = std::max<int64_t>(slot.record.peak_rss_bytes.value_or(0),
                                                       (*bye).value("peak_rss_bytes", int64_t{0}));
        worker_rss_bytes_ = std::max(worker_rss_bytes_, (*bye).value("private_bytes", int64_t{0}));
      }
      p.Reap();
      slot.record.processes = static_cast<int64_t>(slot.processes.size());
    }
    std::vector<AblationRecord> block_records;
    for (Slot& slot : slots) {
      LinkIrDiff(slot.record, o_.out_dir);  // block 0's baseline has written the diffs by now
      const std::string& fingerprint =
          slot.variant == nullptr ? baseline_fingerprint_ : FingerprintOf(slot.variant->name);
      if (!fingerprint.empty()) slot.record.program_xxh64 = fingerprint;
      block_records.push_back(std::move(slot.record));
    }
    if (absl::Status s = Append(std::move(block_records)); !s.ok()) return s;
    for (Slot& slot : slots) {
      if (slot.variant != nullptr) {
        done_.insert(slot.variant->name);
        ++finished_;
      }
    }
    progress_fraction_ = static_cast<double>(finished_) / std::max(1, total_);
    Progress(StrCat("block ", BlockNumber(), " done"));
    return absl::OkStatus();
  }

  const std::string& FingerprintOf(const std::string& variant) const {
    static const std::string kNone;
    auto it = fingerprints_.find(variant);
    return it == fingerprints_.end() ? kNone : it->second;
  }

  const AblationOptions& o_;
  fs::path out_;
  std::vector<AblationVariant> plan_;
  // The screen's fingerprints (ScreenIdentical): the baseline's, each
  // screened variant's, and how many variants were the baseline's program.
  std::string baseline_fingerprint_;
  // The largest private resident memory of a worker so far (BlockCapacity).
  int64_t worker_rss_bytes_ = 0;
  std::map<std::string, std::string> fingerprints_;
  int screened_identical_ = 0;
  std::set<std::string> done_;
  int results_fd_ = -1;
  int attempt_ = 0;  // blocks this results file already holds
  Json machine_ = DescribeMachine();
  int total_ = 0, finished_ = 0;
  double progress_fraction_ = 0;
  Clock::time_point start_ = Clock::now();
};

}  // namespace

absl::Status RunAblation(const AblationOptions& options) {
  // A worker that dies (a crash, the kernel's OOM killer) closes its pipe; a
  // write to it must be an error to record, not a signal that ends the sweep.
  std::signal(SIGPIPE, SIG_IGN);
  if (options.worker_exe.empty()) return absl::InvalidArgumentError("ablation: no worker executable");
  if (options.repeats < 2) return absl::InvalidArgumentError("ablation: --repeats must be at least 2 (statistics need samples)");
  if (options.target_ci < 0 || options.target_ci >= 1) {
    return absl::InvalidArgumentError(StrCat("ablation: --target-ci must be a percentage in (0, 100), not ",
                                             options.target_ci * 100));
  }
  if (options.target_ci > 0 && !options.control) {
    return absl::InvalidArgumentError("ablation: --target-ci needs the in-process control (drop --no-control)");
  }
  if (options.sequential && !options.control) {
    return absl::InvalidArgumentError("ablation: --sequential needs the in-process control (drop --no-control)");
  }
  if (options.sequential && options.max_repeats <= options.repeats) {
    return absl::InvalidArgumentError(StrCat("ablation: --max-repeats (", options.max_repeats,
                                             ") must exceed --repeats (", options.repeats, ") for --sequential"));
  }
  if (options.target_ci > 0 && options.max_repeats <= options.repeats) {
    return absl::InvalidArgumentError(StrCat("ablation: --max-repeats (", options.max_repeats,
                                             ") must exceed --repeats (", options.repeats, ") for --target-ci"));
  }
  absl::Status swept = Sweep(options).Run();
  if (!swept.ok() || options.kernel_cache_dir.empty() || options.task >= 0) return swept;
  return RecordKernelCacheTotals(options.out_dir);
}

absl::Status RecordKernelCacheTotals(const std::string& out_dir) {
  absl::StatusOr<std::vector<AblationRecord>> records = ReadAblationRecords(out_dir);
  if (!records.ok()) return records.status();
  const fs::path path = fs::path(out_dir) / "manifest.json";
  absl::StatusOr<AblationManifest> manifest = ReadAblationManifest(path.string());
  if (absl::IsNotFound(manifest.status())) return absl::OkStatus();
  if (!manifest.ok()) return manifest.status();
  if (!manifest->kernel_cache.has_value()) return absl::OkStatus();
  // Over the records of this directory (a resumed sweep's too): kernels
  // loaded from the persistent cache against kernels compiled.
  int64_t hits = 0, misses = 0, records_counted = 0;
  for (const AblationRecord& r : *records) {
    const std::optional<Json>& cache = r.kernel_cache;
    if (!cache || !cache->is_object() || !cache->contains("persistent_hits")) continue;
    hits += cache->value("persistent_hits", int64_t{0});
    misses += cache->value("persistent_misses", int64_t{0});
    ++records_counted;
  }
  Json& totals = *manifest->kernel_cache;
  totals["persistent_hits"] = hits;
  totals["persistent_misses"] = misses;
  totals["hit_rate"] = hits + misses > 0 ? Json(static_cast<double>(hits) / (hits + misses)) : Json(nullptr);
  totals["records"] = records_counted;
  return WriteFileAtomically(path.string(), Json(*manifest).dump(2) + "\n");
}

std::vector<std::pair<size_t, size_t>> SplitIntoBlocks(size_t count, int block_size) {
  const size_t limit = static_cast<size_t>(std::max(1, block_size));
  const size_t blocks = (count + limit - 1) / limit;
  const size_t size = blocks == 0 ? 1 : (count + blocks - 1) / blocks;
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t first = 0; first < count; first += size) ranges.emplace_back(first, std::min(count, first + size));
  return ranges;
}

void LinkIrDiff(AblationRecord& record, const std::string& out_dir) {
  if (record.ir_diff) return;
  if (record.kind != "disable-one" && record.kind != "disable-occurrence") return;
  if (!record.passes || record.passes->size() != 1) return;
  const std::string file = StrCat("diffs/", SanitizeFileName(record.passes->front()), ".diff");
  if (fs::exists(fs::path(out_dir) / file)) record.ir_diff = file;
}

absl::Status PrepareAblationDirectory(const AblationOptions& o) {
  const fs::path out = o.out_dir;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return absl::InternalError(StrCat("cannot create '", o.out_dir, "': ", ec.message()));
  fs::path input = out / "input.hlo";
  if (fs::exists(input)) {
    if (ReadFile(input) != o.input_text) {
      return absl::FailedPreconditionError(
          StrCat("'", o.out_dir, "' holds a sweep of a different module; choose another --out to start a new sweep"));
    }
    // The sweep this one resumes (a directory without a manifest yet: none).
    absl::StatusOr<AblationManifest> old = ReadAblationManifest((out / "manifest.json").string());
    if (!old.ok() && !absl::IsNotFound(old.status())) return old.status();
    if (old.ok() && old->pipeline != o.pipeline) {
      return absl::FailedPreconditionError(
          StrCat("'", o.out_dir, "' holds a sweep of pipeline '", old->pipeline, "', not '", o.pipeline, "'"));
    }
    if (old.ok() && (old->pass_options.value_or(std::vector<std::string>{}) != o.pass_options ||
                     old->xla_disabled_passes.value_or(std::vector<std::string>{}) != o.removed_passes)) {
      return absl::FailedPreconditionError(StrCat("'", o.out_dir, "' holds a sweep with other --pass-option or --xla_disable_hlo_passes settings (",
                                                  Join(old->pass_options.value_or(std::vector<std::string>{}), " "),
                                                  "); choose another --out"));
    }
  } else if (absl::Status s = WriteFileAtomically(input.string(), o.input_text); !s.ok()) {
    return s;
  }
  // The caller's part (command line, model, ...) as read; the runner's typed.
  AblationManifest manifest;
  manifest.extra = o.manifest.is_object() ? o.manifest : Json::object();
  if (auto command = manifest.extra.find("command"); command != manifest.extra.end() && command->is_string()) {
    manifest.command = command->get<std::string>();
    manifest.extra.erase(command);
  }
  // A resumed sweep keeps the command that started it and lists the reruns.
  if (absl::StatusOr<AblationManifest> old = ReadAblationManifest((out / "manifest.json").string());
      old.ok() && old->command && manifest.command) {
    std::vector<std::string> resumes = old->resumed_by.value_or(std::vector<std::string>{});
    resumes.push_back(*manifest.command);
    manifest.command = old->command;
    manifest.resumed_by = resumes;
  }
  manifest.pipeline = o.pipeline;
  manifest.pass_options = o.pass_options;
  manifest.xla_disabled_passes = o.removed_passes;
  manifest.input = "input.hlo";
  manifest.input_xxh64 = HexId(XXH64(o.input_text.data(), o.input_text.size(), 0));
  manifest.machine = DescribeMachine();
  manifest.repeats = o.repeats;
  manifest.warmup = o.warmup;
  manifest.block_size = o.block_size;
  manifest.control = o.control;
  manifest.target_ci = o.target_ci;
  manifest.max_repeats = o.max_repeats;
  manifest.sequential = o.sequential;
  if (o.sequential) manifest.sequential_band = o.sequential_band;
  manifest.threads = o.threads;
  manifest.processes = o.processes;
  manifest.randomize_placement = o.randomize_placement;
  manifest.skip_identical = o.skip_identical;
  if (!o.inject_delays.empty()) {
    // A test sweep: these variants are slowed down on purpose.
    manifest.test_inject_delay.emplace(o.inject_delays.begin(), o.inject_delays.end());
  }
  manifest.seed = o.seed;
  if (!o.args_dir.empty()) manifest.args = o.args_dir;  // real arguments: the seed is unused
  manifest.reference = o.reference;
  manifest.tolerance = o.tolerance;
  manifest.timeout_s = o.timeout_s;
  manifest.device = o.device;
  // Every worker loads and extends one algorithm-picker cache, so variants
  // share the baseline's choices (records say how many calls each tuned).
  manifest.autotune_cache = kAutotuneCacheFile;
  if (!o.kernel_cache_dir.empty()) manifest.kernel_cache = Json{{"dir", o.kernel_cache_dir}};
  // What `passlab ablate --reproduce` compares: build, versions, variables, clocks.
  manifest.environment = CollectEnvironment(o.out_dir);
  return WriteFileAtomically((out / "manifest.json").string(), Json(manifest).dump(2) + "\n");
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  // The temporary name is this process's, so concurrent writers never share one.
  const std::string tmp = StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) return absl::InternalError(StrCat("cannot write '", tmp, "'"));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return absl::InternalError(StrCat("cannot write '", path, "': ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AblationRecord>> ReadAblationRecords(const std::string& out_dir) {
  return ReadAblationRecordsFile((fs::path(out_dir) / "results.jsonl").string());
}

absl::StatusOr<std::vector<AblationRecord>> ReadAblationRecordsFile(const std::string& path) {
  return ReadAblationRecordLines(path);
}

Json DescribeMachine() {
  Json m;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) m["cpu"] = line.substr(colon + 2);
      break;
    }
  }
  m["cores"] = std::thread::hardware_concurrency();
  if (int64_t total = MeminfoBytes("MemTotal:"); total > 0) m["memory_bytes"] = total;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) m["host"] = host;
  // Inside a Slurm job, the node's name as Slurm knows it.
  if (const char* node = std::getenv("SLURMD_NODENAME"); node != nullptr && *node != '\0') m["node"] = node;
  // The NVIDIA driver's /proc files name the GPUs and the driver version.
  std::vector<std::string> gpus;
  std::error_code ec;
  for (const fs::directory_entry& gpu : fs::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    std::ifstream info(gpu.path() / "information");
    while (std::getline(info, line)) {
      if (line.rfind("Model:", 0) == 0) {
        size_t start = line.find_first_not_of(" \t", 6);
        gpus.push_back(start == std::string::npos ? "" : line.substr(start));
        break;
      }
    }
  }
  std::sort(gpus.begin(), gpus.end());
  m["gpu"] = gpus.empty() ? Json("none") : Json(gpus);
  std::string driver = FirstLine("/proc/driver/nvidia/version");
  m["gpu_driver"] = driver.empty() ? "none" : driver;
  return m;
}

}  // namespace passlab
