#include "gui/state/ablation.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/ir/str_util.h"

extern char** environ;

namespace passlab::gui {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open file"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t'\"\\$`") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// report.json writes null where a field does not apply (a kernel only the
// variant has has no baseline_ns): the default then, as when it is absent.
template <typename T>
T Field(const nlohmann::json& j, const char* key, T fallback) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->template get<T>();
}

}  // namespace

bool AblationVariant::measured() const {
  return outcome == "slower" || outcome == "faster" || outcome == "no-change" || outcome == "undecided";
}

absl::StatusOr<AblationReport> LoadAblationReport(const std::string& directory) {
  const std::string path = (std::filesystem::path(directory) / "report.json").string();
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError(StrCat(path, ": not valid JSON"));
  if (j.value("schema", "") != "passlab.ablation/1") {
    return absl::InvalidArgumentError(
        StrCat(path, ": schema '", j.value("schema", ""), "' is not passlab.ablation/1"));
  }
  AblationReport r;
  r.directory = directory;
  try {
    r.metric = Field(j, "metric", std::string("kernel_ns"));
    r.threshold = Field(j, "threshold", 0.01);
    if (j.contains("manifest")) r.manifest = j["manifest"].dump(2);
    const nlohmann::json& b = j.at("baseline");
    r.baseline_name = Field(b, "name", std::string("baseline"));
    r.baseline_median_ns = b.at("median_ns").get<double>();
    for (const nlohmann::json& k : Field(b, "kernels", nlohmann::json::array())) {
      r.baseline_kernels.push_back({k.at("name").get<std::string>(), Field(k, "ns", 0.0), Field(k, "calls", int64_t{0})});
    }
    for (const nlohmann::json& v : j.at("variants")) {
      AblationVariant a;
      a.name = v.at("name").get<std::string>();
      a.kind = Field(v, "kind", std::string());
      a.disabled = Field(v, "disabled", std::vector<std::string>{});
      a.outcome = v.at("outcome").get<std::string>();
      a.median_ns = Field(v, "median_ns", 0.0);
      a.ratio = Field(v, "ratio", 1.0);
      a.estimate_ns = Field(v, "estimate_ns", a.ratio * r.baseline_median_ns);
      a.ci_low = Field(v, "ci_low", a.ratio);
      a.ci_high = Field(v, "ci_high", a.ratio);
      a.p_adjusted = Field(v, "p_adjusted", 1.0);
      a.significant = Field(v, "significant", false);
      a.error = Field(v, "error", std::string());
      a.ir_diff_path = Field(v, "ir_diff", std::string());
      for (const nlohmann::json& k : Field(v, "kernel_diff", nlohmann::json::array())) {
        a.kernel_diff.push_back({k.at("name").get<std::string>(), Field(k, "baseline_ns", 0.0),
                                 Field(k, "variant_ns", 0.0), Field(k, "change", std::string()),
                                 Field(k, "host", false)});
      }
      r.variants.push_back(std::move(a));
    }
    r.heatmap = BuildKernelHeatmap(nlohmann::ordered_json(j));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(StrCat(path, ": ", e.what()));
  }
  return r;
}

absl::StatusOr<std::string> ReadVariantIrDiff(const AblationReport& report, const AblationVariant& variant) {
  if (variant.ir_diff_path.empty()) return std::string();
  return ReadFile((std::filesystem::path(report.directory) / variant.ir_diff_path).string());
}

std::vector<int64_t> VariantsBySlowdown(const AblationReport& report) {
  std::vector<int64_t> order(report.variants.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const AblationVariant& x = report.variants[a];
    const AblationVariant& y = report.variants[b];
    if (x.measured() != y.measured()) return x.measured();
    if (!x.measured()) return false;
    return x.ratio > y.ratio;
  });
  return order;
}

HeatmapGeometry LayOutHeatmap(const KernelHeatmap& heatmap, float cell, float gap) {
  HeatmapGeometry g;
  g.cell = cell;
  g.gap = gap;
  g.column_x.resize(heatmap.columns.size());
  float x = 0;
  for (size_t k = 0; k < heatmap.groups.size(); ++k) {
    if (k > 0) x += gap;
    for (size_t i = 0; i < heatmap.groups[k].count; ++i) {
      g.column_x[heatmap.groups[k].first + i] = x;
      x += cell;
    }
  }
  g.width = x;
  g.height = cell * static_cast<float>(heatmap.rows.size());
  return g;
}

std::pair<int64_t, int64_t> HeatmapCellAt(const HeatmapGeometry& geometry, const KernelHeatmap& heatmap, float x,
                                          float y) {
  if (x < 0 || y < 0 || x >= geometry.width || y >= geometry.height || geometry.cell <= 0) return {-1, -1};
  const int64_t row = static_cast<int64_t>(y / geometry.cell);
  // The last column starting at or before x, if x falls inside it.
  auto it = std::upper_bound(geometry.column_x.begin(), geometry.column_x.end(), x);
  if (it == geometry.column_x.begin()) return {-1, -1};
  const int64_t column = static_cast<int64_t>(it - geometry.column_x.begin()) - 1;
  if (x >= geometry.column_x[column] + geometry.cell) return {-1, -1};  // a gap between groups
  if (row >= static_cast<int64_t>(heatmap.rows.size())) return {-1, -1};
  return {row, column};
}

int64_t HeatmapRowVariant(const AblationReport& report, int64_t row) {
  if (row < 0 || row >= static_cast<int64_t>(report.heatmap.rows.size())) return -1;
  const std::string& name = report.heatmap.rows[row].variant;
  for (size_t i = 0; i < report.variants.size(); ++i) {
    if (report.variants[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

int64_t CountResultLines(const std::string& results_jsonl) {
  std::ifstream in(results_jsonl);
  int64_t n = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) ++n;
  }
  return n;
}

int64_t CountPlanVariants(const std::string& plan_json) {
  absl::StatusOr<std::string> text = ReadFile(plan_json);
  if (!text.ok()) return 0;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.contains("variants") || !j["variants"].is_array()) return 0;
  return static_cast<int64_t>(j["variants"].size());
}

AblationSweep::~AblationSweep() {
  if (pid_ > 0) Cancel();
}

absl::Status AblationSweep::Start(const std::string& passlab, const std::vector<std::string>& args,
                                  const std::string& out_dir) {
  if (pid_ > 0) return absl::FailedPreconditionError("a sweep is already running");
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return absl::InternalError(StrCat("cannot create '", out_dir, "': ", ec.message()));
  std::vector<std::string> argv_s = {passlab, "ablate"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  argv_s.push_back("--out");
  argv_s.push_back(out_dir);
  command_line_.clear();
  for (const std::string& a : argv_s) command_line_ += (command_line_.empty() ? "" : " ") + ShellQuote(a);
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  const std::string log = (std::filesystem::path(out_dir) / "sweep.log").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, passlab.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return absl::InternalError(StrCat("cannot start '", passlab, "': ", std::strerror(rc)));
  pid_ = pid;
  finished_ = false;
  exit_code_ = 0;
  done_ = total_ = 0;
  out_dir_ = out_dir;
  return absl::OkStatus();
}

void AblationSweep::Poll() {
  if (out_dir_.empty()) return;
  std::filesystem::path dir(out_dir_);
  if (total_ == 0) total_ = CountPlanVariants((dir / "plan.json").string());
  done_ = CountResultLines((dir / "results.jsonl").string());
  if (pid_ <= 0) return;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    pid_ = -1;
    finished_ = true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
}

void AblationSweep::Cancel() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  int status = 0;
  for (int i = 0; i < 50; ++i) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      finished_ = true;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  finished_ = true;
  exit_code_ = -SIGKILL;
}

std::string AblationSweep::LogTail(size_t max_bytes) const {
  if (out_dir_.empty()) return "";
  absl::StatusOr<std::string> text = ReadFile((std::filesystem::path(out_dir_) / "sweep.log").string());
  if (!text.ok()) return "";
  return text->size() > max_bytes ? text->substr(text->size() - max_bytes) : *text;
}

}  // namespace passlab::gui
