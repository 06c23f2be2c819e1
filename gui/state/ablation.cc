#include "gui/state/ablation.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "analysis/ablation/compare.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/shape_inference.h"
#include "passes/autotune/autotune_cache.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"

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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double OrNaN(const std::optional<double>& x) { return x.value_or(kNaN); }

// report.json's "compile_cost" (ablation_report.h AblationCompileCost) for
// the panel; the plot is LayOutCompileCostPlot's, as report.html draws it.
CompileCostView ReadCompileCost(const passlab::AblationCompileCost& cost,
                                const std::vector<AblationVariant>& variants) {
  CompileCostView view;
  view.present = true;
  const passlab::AblationCompileTimes& base = cost.baseline.times;
  view.baseline_compile_ms = OrNaN(base.compile_ms);
  view.baseline_optimize_ms = OrNaN(base.optimize_ms);
  view.baseline_backend_ms = OrNaN(base.backend_ms);
  view.baseline_autotune_ms = OrNaN(base.autotune_ms);
  view.kernel_cache_hits = OrNaN(base.kernel_cache_hits);
  view.kernel_cache_misses = OrNaN(base.kernel_cache_misses);
  view.cost_split_ms = OrNaN(cost.cost_split_ms);
  for (const passlab::AblationCompileCostRow& r : cost.rows) {
    CompileCostRow row;
    row.variant = r.variant;
    row.label = r.PassesLabel();
    for (size_t i = 0; i < variants.size(); ++i) {
      if (variants[i].name == row.variant) row.variant_index = static_cast<int64_t>(i);
    }
    row.pass_ms = OrNaN(r.pass_ms);
    row.pass_runs = OrNaN(r.pass_runs);
    row.compile_ms = OrNaN(r.times.compile_ms);
    row.compile_delta_ms = OrNaN(r.compile_delta_ms);
    row.autotune_ms = OrNaN(r.times.autotune_ms);
    row.ratio = OrNaN(r.ratio);
    row.ci_low = OrNaN(r.ci_low);
    row.ci_high = OrNaN(r.ci_high);
    row.significant = r.significant;
    row.clear_effect = r.clear_effect;
    row.quadrant = r.quadrant;
    view.rows.push_back(std::move(row));
  }
  view.plot = LayOutCompileCostPlot(cost);
  return view;
}

}  // namespace

bool AblationVariant::measured() const {
  return outcome == "slower" || outcome == "faster" || outcome == "no-change" || outcome == "undecided";
}

absl::StatusOr<AblationReport> LoadAblationReport(const std::string& directory) {
  const std::string path = (std::filesystem::path(directory) / "report.json").string();
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError(StrCat(path, ": not valid JSON"));
  ASSIGN_OR_RETURN(passlab::AblationReport report, ParseAblationReport(j, path));
  const passlab::AblationReportBaseline& b = report.baseline;
  if (!b.median_ns.has_value()) return absl::InvalidArgumentError(StrCat(path, ": the baseline has no 'median_ns'"));
  AblationReport r;
  r.directory = directory;
  r.metric = report.metric;
  r.threshold = report.threshold;
  try {
    // The manifest as the report copied it (records.h AblationManifest's
    // keys, and the caller's).
    const nlohmann::json m = report.manifest;
    r.manifest = m.dump(2);
    if (m.is_object()) {
      r.pipeline = Field(m, "pipeline", r.pipeline);
      r.input = Field(m, "input", std::string());
      r.pass_options = Field(m, "pass_options", std::vector<std::string>{});
      r.removed_passes = Field(m, "xla_disabled_passes", std::vector<std::string>{});
      r.device = Field(m, "device", r.device);
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(StrCat(path, ": manifest: ", e.what()));
  }
  r.baseline_name = b.name;
  r.baseline_median_ns = *b.median_ns;
  for (const passlab::AblationReportKernel& k : b.kernels) {
    r.baseline_kernels.push_back({k.name, k.ns.value_or(0.0), k.calls.value_or(0)});
  }
  for (const passlab::AblationReportVariant& v : report.variants) {
    if (!v.outcome.has_value()) {
      return absl::InvalidArgumentError(StrCat(path, ": variant '", v.name, "' has no 'outcome'"));
    }
    AblationVariant a;
    a.name = v.name;
    a.kind = v.kind;
    a.disabled = v.passes;
    a.disable = v.disable.value_or("");
    a.enable_only = v.enable_only.value_or("");
    // Reports without the filters: its passes, every occurrence.
    if (a.disable.empty() && a.enable_only.empty()) a.disable = Join(a.disabled, ",");
    a.outcome = *v.outcome;
    a.median_ns = v.median_ns.value_or(0.0);
    a.ratio = v.ratio.value_or(1.0);
    a.label = a.outcome;
    if (a.outcome == "undecided" && v.large_but_uncorrected) a.label = a.ratio > 1 ? "likely slower" : "likely faster";
    a.estimate_ns = v.estimate_ns.value_or(a.ratio * r.baseline_median_ns);
    a.ci_low = v.ci_low.value_or(a.ratio);
    a.ci_high = v.ci_high.value_or(a.ratio);
    a.p_adjusted = v.p_adjusted.value_or(1.0);
    a.significant = v.significant;
    a.error = v.error.value_or("");
    a.ir_diff_path = v.ir_diff.value_or("");
    for (const passlab::AblationKernelChange& k : v.kernel_diff) {
      a.kernel_diff.push_back({k.name, k.baseline_ns.value_or(0.0), k.variant_ns.value_or(0.0), k.change, k.host});
    }
    r.variants.push_back(std::move(a));
  }
  r.heatmap = BuildKernelHeatmap(report);
  if (report.compile_cost.has_value()) r.compile_cost = ReadCompileCost(*report.compile_cost, r.variants);
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

int64_t CompileCostPointAt(const CompileCostPlot& plot, double x, double y, double radius) {
  int64_t best = -1;
  double best_d2 = radius * radius;
  for (size_t i = 0; i < plot.points.size(); ++i) {
    const double dx = plot.points[i].x - x, dy = plot.points[i].y - y;
    if (dx * dx + dy * dy <= best_d2) {
      best_d2 = dx * dx + dy * dy;
      best = static_cast<int64_t>(i);
    }
  }
  return best;
}

absl::StatusOr<AblationComparison> LoadAblationComparison(const std::vector<std::string>& directories) {
  ASSIGN_OR_RETURN(nlohmann::ordered_json c, CompareAblationSweeps(directories));
  const nlohmann::json comparison = c;  // Field reads nlohmann::json
  AblationComparison out;
  out.directories = directories;
  try {
    for (const nlohmann::json& s : comparison.at("sweeps")) {
      out.labels.push_back(Field(s, "label", std::string()));
      out.baseline_median_ns.push_back(Field(s, "baseline_median_ns", kNaN));
    }
    for (const nlohmann::json& v : comparison.at("variants")) {
      ComparedVariant row;
      row.name = Field(v, "name", std::string());
      for (const nlohmann::json& cell : v.at("sweeps")) {
        ComparedCell x;
        x.present = cell.is_object();
        if (x.present) {
          x.ratio = Field(cell, "ratio", kNaN);
          x.ci_low = Field(cell, "ci_low", kNaN);
          x.ci_high = Field(cell, "ci_high", kNaN);
          x.significant = Field(cell, "significant", false);
          x.outcome = Field(cell, "outcome", std::string());
        }
        row.cells.push_back(std::move(x));
      }
      out.variants.push_back(std::move(row));
    }
    for (const nlohmann::json& a : comparison.at("agreement")) {
      ComparedAgreement x;
      x.report = Field(a, "sweep", int64_t{0});
      x.common_variants = Field(a, "common_variants", int64_t{0});
      x.significant_in_either = Field(a, "significant_in_either", int64_t{0});
      x.same_sign = Field(a, "same_sign", int64_t{0});
      x.disagreeing = Field(a, "disagreeing", std::vector<std::string>{});
      x.spearman = Field(a, "spearman", kNaN);
      out.agreement.push_back(std::move(x));
    }
    for (const nlohmann::json& d : comparison.at("manifest_differences")) {
      out.manifest_differences.push_back(
          {Field(d, "field", std::string()), Field(d, "values", std::vector<std::string>{})});
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InternalError(StrCat("comparing ", Join(directories, ", "), ": ", e.what()));
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const HloModule>> RecompileSweepModule(const AblationReport& report,
                                                                      const AblationVariant* variant,
                                                                      JobProgress* progress) {
  const std::string what = variant == nullptr ? std::string("the baseline") : StrCat("'", variant->name, "'");
  if (report.input.empty()) {
    return absl::FailedPreconditionError(
        StrCat(report.directory, "/report.json: the manifest names no input module, so ", what,
               " cannot be compiled again"));
  }
  const std::string path = (std::filesystem::path(report.directory) / report.input).string();
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  if (progress != nullptr) progress->SetStage(StrCat("parsing ", path));
  ParseOptions parse;
  parse.infer_shape = InferInstructionShape;
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(text, path, parse));
  ASSIGN_OR_RETURN(PassOptionOverrides options, ParsePassOptionOverrides(report.pass_options));
  ASSIGN_OR_RETURN(FilteredPipeline pipeline,
      BuildFilteredPipeline(report.pipeline, variant == nullptr ? "" : variant->disable,
                            variant == nullptr ? "" : variant->enable_only, false, options, report.removed_passes));
  // The sweep's algorithm choices (a missing file is no error).
  const std::filesystem::path cache = std::filesystem::path(report.directory) / "autotune.json";
  if (std::filesystem::exists(cache)) {
    RETURN_IF_ERROR(AutotuneCache::Global().Load(cache.string()));
  }
  // One at a time: the pickers time candidates on this machine.
  static std::mutex one_at_a_time;
  if (progress != nullptr) progress->SetStage(StrCat("waiting to compile ", what));
  std::lock_guard<std::mutex> lock(one_at_a_time);
  if (progress != nullptr) progress->SetStage(StrCat("compiling ", what, " (", report.pipeline, ")"));
  absl::StatusOr<bool> ran = pipeline.pipeline->Run(*module);
  if (!ran.ok()) {
    return absl::Status(ran.status().code(), StrCat("compiling ", what, ": ", ran.status().message()));
  }
  return std::shared_ptr<const HloModule>(std::move(module));
}

std::string KernelHloText(const HloModule& module, const std::string& name) {
  for (const HloComputation* c : module.computations()) {
    if (c->IsFusionComputation()) continue;
    const HloInstruction* inst = c->GetInstructionWithName(name);
    if (inst == nullptr) continue;
    std::string text = PrintInstruction(*inst);
    if (inst->opcode() == HloOpcode::kFusion) {
      text = StrCat(PrintComputation(*inst->fused_instructions_computation()), "\n\n", text);
    }
    return text;
  }
  return "";
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
