// The Ablation panel's views, driven through the state API as the panel's
// clicks drive them: the compile cost per pass (compile_cost.h's rows and
// plot), several reports side by side (compare.h), and a heatmap cell's
// kernel HLO in the baseline and the variant, compiled again from the
// sweep's manifest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/ablation/compare.h"
#include "analysis/ablation/compile_cost.h"
#include "core/text/hlo_parser.h"
#include "gui/state/ablation.h"
#include "gui/state/app_state.h"
#include "passes/pipelines/pipelines.h"
#include "test/analysis/ablation/typed_records.h"

namespace passlab::gui {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

std::string FixtureDir() { return std::string(PASSLAB_SOURCE_DIR) + "/test/gui/ablation_fixture"; }

// A fresh directory per test, removed after it.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

void WriteJson(const std::filesystem::path& path, const json& j) { std::ofstream(path) << j.dump(1); }

// ---- compile cost -----------------------------------------------------------

// A small sweep's records as the workers write them: two baseline records
// with per-pass times (the pipeline 100 ms, so a pass is cheap below 1 ms),
// and one record per variant with its compile times.
std::vector<json> CompileRecords() {
  json times = {{"algsimp", {{"ms", 4.0}, {"runs", 3}}},
                {"cse", {{"ms", 0.02}, {"runs", 1}}},
                {"priority-fusion", {{"ms", 20.0}, {"runs", 1}}}};
  return {
      {{"variant", "baseline"}, {"kind", "baseline"}, {"optimize_ms", 100.0}, {"compile_ms", 400.0},
       {"autotune_ms", 0.0}, {"pass_times", times}},
      {{"variant", "baseline"}, {"kind", "baseline"}, {"optimize_ms", 100.0}, {"compile_ms", 400.0},
       {"autotune_ms", 0.0}, {"pass_times", times}},
      {{"variant", "disable algsimp"}, {"kind", "disable-one"}, {"optimize_ms", 96.0}, {"compile_ms", 420.0}},
      {{"variant", "disable cse"}, {"kind", "disable-one"}, {"optimize_ms", 100.0}, {"compile_ms", 399.0}},
      {{"variant", "disable priority-fusion"}, {"kind", "disable-one"}, {"optimize_ms", 80.0}, {"compile_ms", 900.0}},
  };
}

ordered_json CompileVariants() {
  auto variant = [](const char* pass, double ratio, double lo, double hi, bool significant, const char* outcome) {
    return ordered_json{{"name", std::string("disable ") + pass},
                        {"kind", "disable-one"},
                        {"passes", {pass}},
                        {"disabled", {pass}},
                        {"outcome", outcome},
                        {"ratio", ratio},
                        {"ci_low", lo},
                        {"ci_high", hi},
                        {"significant", significant}};
  };
  return ordered_json::array({variant("algsimp", 1.2, 1.15, 1.25, true, "slower"),
                              variant("cse", 1.001, 0.99, 1.01, false, "no-change"),
                              variant("priority-fusion", 0.9, 0.88, 0.92, true, "faster")});
}

// report.json with BuildCompileCost's "compile_cost", as the report
// builder writes it.
std::string WriteCompileCostReport(const TempDir& dir) {
  ordered_json variants = CompileVariants();
  ordered_json report = {{"schema", "passlab.ablation/1"},
                         {"metric", "kernel_ns"},
                         {"threshold", 0.01},
                         {"baseline", {{"name", "baseline"}, {"median_ns", 1e6}}},
                         {"variants", variants}};
  report["compile_cost"] = BuildCompileCost(
      TypedRecords(CompileRecords()), nlohmann::json(variants).get<std::vector<passlab::AblationReportVariant>>(), 0.01);
  std::ofstream(dir.path() / "report.json") << report.dump(1);
  std::filesystem::create_directories(dir.path() / "diffs");
  return dir.str();
}

TEST(AblationCompileCostTest, ShowsTheReportsRowsPerPass) {
  TempDir dir("passlab_cost");
  absl::StatusOr<AblationReport> r = LoadAblationReport(WriteCompileCostReport(dir));
  ASSERT_TRUE(r.ok()) << r.status();
  const CompileCostView& view = r->compile_cost;
  ASSERT_TRUE(view.present);
  EXPECT_DOUBLE_EQ(view.baseline_compile_ms, 500);
  EXPECT_DOUBLE_EQ(view.baseline_optimize_ms, 100);
  EXPECT_DOUBLE_EQ(view.cost_split_ms, 1);  // 1% of the pipeline's 100 ms
  ASSERT_EQ(view.rows.size(), 3u);
  const CompileCostRow& algsimp = view.rows[0];
  EXPECT_EQ(algsimp.label, "algsimp");
  EXPECT_EQ(algsimp.variant_index, 0);
  EXPECT_DOUBLE_EQ(algsimp.pass_ms, 4);
  EXPECT_DOUBLE_EQ(algsimp.pass_runs, 3);
  EXPECT_DOUBLE_EQ(algsimp.compile_delta_ms, 16);  // 516 - 500
  EXPECT_DOUBLE_EQ(algsimp.ratio, 1.2);
  EXPECT_TRUE(algsimp.significant);
  EXPECT_EQ(algsimp.quadrant, "expensive and essential");
  EXPECT_EQ(view.rows[1].label, "cse");
  EXPECT_DOUBLE_EQ(view.rows[1].compile_delta_ms, -1);
  EXPECT_EQ(view.rows[1].quadrant, "cheap and useless");
  EXPECT_FALSE(view.rows[1].clear_effect);
  EXPECT_EQ(view.rows[2].quadrant, "harmful");
  EXPECT_DOUBLE_EQ(view.rows[2].compile_delta_ms, 480);
}

// The plot is report.html's: the same points at the same places, one per
// row with a pass time and a ratio, and its ticks.
TEST(AblationCompileCostTest, PlotsWhatTheHtmlReportPlots) {
  TempDir dir("passlab_cost_plot");
  const std::string d = WriteCompileCostReport(dir);
  absl::StatusOr<AblationReport> r = LoadAblationReport(d);
  ASSERT_TRUE(r.ok()) << r.status();
  const CompileCostPlot html =
      LayOutCompileCostPlot(ReadJson(d + "/report.json")["compile_cost"].get<passlab::AblationCompileCost>());
  const CompileCostPlot& plot = r->compile_cost.plot;
  ASSERT_EQ(plot.points.size(), 3u);
  ASSERT_EQ(html.points.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(plot.points[i].label, html.points[i].label);
    EXPECT_DOUBLE_EQ(plot.points[i].x, html.points[i].x);
    EXPECT_DOUBLE_EQ(plot.points[i].y, html.points[i].y);
    EXPECT_EQ(plot.points[i].row, i);
  }
  // Pass times 0.02 .. 20 ms: decades 0.01 .. 100 ms.
  ASSERT_FALSE(plot.x_ticks.empty());
  EXPECT_EQ(plot.x_ticks.front().label, "0.01 ms");
  EXPECT_EQ(plot.x_ticks.back().label, "100 ms");
  // More expensive passes lie to the right; slower-without-it above.
  EXPECT_LT(plot.points[1].x, plot.points[0].x);
  EXPECT_LT(plot.points[0].x, plot.points[2].x);
  EXPECT_LT(plot.points[0].y, plot.zero_y);
  EXPECT_GT(plot.points[2].y, plot.zero_y);
  EXPECT_NEAR(plot.Y(0), plot.zero_y, 1e-9);
}

TEST(AblationCompileCostTest, ClickingAPointSelectsItsVariant) {
  TempDir dir("passlab_cost_click");
  AppState state;
  OpenAblationReport(state, WriteCompileCostReport(dir));
  ASSERT_NE(state.ablation.report, nullptr);
  const CompileCostView& view = state.ablation.report->compile_cost;
  const CompileCostPoint& cse = view.plot.points[1];
  // A click 3 units off the point, within the 8-unit radius the panel uses.
  const int64_t hit = CompileCostPointAt(view.plot, cse.x + 3, cse.y, 8);
  ASSERT_EQ(hit, 1);
  EXPECT_EQ(CompileCostPointAt(view.plot, cse.x + 30, cse.y + 30, 8), -1);
  SelectAblationVariant(state, view.rows[view.plot.points[hit].row].variant_index);
  EXPECT_EQ(state.ablation.selected_variant, 1);
  EXPECT_EQ(state.ablation.report->variants[1].name, "disable cse");
}

TEST(AblationCompileCostTest, OlderReportsHaveNone) {
  absl::StatusOr<AblationReport> r = LoadAblationReport(FixtureDir());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->compile_cost.present);
  EXPECT_TRUE(r->compile_cost.rows.empty());
}

// ---- side by side -------------------------------------------------------------

// A copy of the fixture swept with another pipeline: algsimp's effect turns
// around, cse's grows, dce's is gone.
std::string WriteOtherReport(const TempDir& dir, const std::string& pipeline) {
  json r = ReadJson(FixtureDir() + "/report.json");
  r["manifest"]["pipeline"] = pipeline;
  for (json& v : r["variants"]) {
    if (v["name"] == "disable algsimp") {
      v["ratio"] = 0.95;
      v["ci_low"] = 0.93;
      v["ci_high"] = 0.97;
      v["outcome"] = "faster";
    } else if (v["name"] == "disable cse") {
      v["ratio"] = 1.08;
      v["ci_low"] = 1.06;
      v["ci_high"] = 1.1;
    }
  }
  json kept = json::array();
  for (const json& v : r["variants"]) {
    if (v["name"] != "disable dce") kept.push_back(v);
  }
  r["variants"] = kept;
  WriteJson(dir.path() / "report.json", r);
  return dir.str();
}

const ComparedVariant* FindVariant(const AblationComparison& c, const std::string& name) {
  for (const ComparedVariant& v : c.variants) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

TEST(AblationCompareTest, OpensTwoReportsSideBySide) {
  TempDir other("passlab_cmp_other");
  AppState state;
  OpenAblationReport(state, FixtureDir());
  EXPECT_EQ(state.ablation.comparison, nullptr);
  OpenAnotherAblationReport(state, WriteOtherReport(other, "gpu-2021"));
  ASSERT_NE(state.ablation.comparison, nullptr);
  const AblationComparison& c = *state.ablation.comparison;
  EXPECT_THAT(c.directories, ElementsAre(FixtureDir(), other.str()));
  ASSERT_EQ(c.labels.size(), 2u);
  EXPECT_THAT(c.labels[0], HasSubstr("gpu mlp"));
  EXPECT_THAT(c.labels[1], HasSubstr("gpu-2021 mlp"));

  const ComparedVariant* algsimp = FindVariant(c, "disable algsimp");
  ASSERT_NE(algsimp, nullptr);
  ASSERT_EQ(algsimp->cells.size(), 2u);
  EXPECT_DOUBLE_EQ(algsimp->cells[0].ratio, 1.12);
  EXPECT_DOUBLE_EQ(algsimp->cells[0].ci_low, 1.09);
  EXPECT_TRUE(algsimp->cells[0].significant);
  EXPECT_DOUBLE_EQ(algsimp->cells[1].ratio, 0.95);
  EXPECT_EQ(algsimp->cells[1].outcome, "faster");
  const ComparedVariant* dce = FindVariant(c, "disable dce");
  ASSERT_NE(dce, nullptr);
  EXPECT_TRUE(dce->cells[0].present);
  EXPECT_FALSE(dce->cells[1].present);  // the other sweep lacks it
  // A crash has no ratio in either.
  const ComparedVariant* crash = FindVariant(c, "disable call-inliner");
  ASSERT_NE(crash, nullptr);
  EXPECT_TRUE(std::isnan(crash->cells[1].ratio));
  EXPECT_EQ(crash->cells[1].outcome, "crash");

  // Against the first: algsimp turned around; the rest keep their sign.
  ASSERT_EQ(c.agreement.size(), 1u);
  EXPECT_EQ(c.agreement[0].report, 1);
  EXPECT_THAT(c.agreement[0].disagreeing, ElementsAre("disable algsimp"));
  EXPECT_EQ(c.agreement[0].significant_in_either - c.agreement[0].same_sign, 1);
  ASSERT_EQ(c.manifest_differences.size(), 1u);
  EXPECT_EQ(c.manifest_differences[0].field, "pipeline");
  EXPECT_THAT(c.manifest_differences[0].values, ElementsAre("gpu", "gpu-2021"));

  // The same numbers as `passlab ablate --compare`.
  absl::StatusOr<ordered_json> cli = CompareAblationSweeps({FixtureDir(), other.str()});
  ASSERT_TRUE(cli.ok()) << cli.status();
  EXPECT_EQ(c.variants.size(), (*cli)["variants"].size());
  EXPECT_EQ(c.variants.front().name, (*cli)["variants"][0]["name"].get<std::string>());
  EXPECT_DOUBLE_EQ(c.agreement[0].spearman, (*cli)["agreement"][0]["spearman"].get<double>());
}

TEST(AblationCompareTest, ThreeReportsAndClosingOne) {
  TempDir second("passlab_cmp_2"), third("passlab_cmp_3");
  AppState state;
  OpenAblationReport(state, FixtureDir());
  OpenAnotherAblationReport(state, WriteOtherReport(second, "gpu-2021"));
  OpenAnotherAblationReport(state, WriteOtherReport(third, "gpu"));
  ASSERT_NE(state.ablation.comparison, nullptr);
  EXPECT_EQ(state.ablation.comparison->labels.size(), 3u);
  EXPECT_EQ(state.ablation.comparison->agreement.size(), 2u);
  EXPECT_EQ(FindVariant(*state.ablation.comparison, "disable cse")->cells.size(), 3u);
  // Opening one already open changes nothing.
  OpenAnotherAblationReport(state, second.str());
  EXPECT_EQ(state.ablation.compared_dirs.size(), 2u);
  CloseComparedAblationReport(state, 0);
  ASSERT_NE(state.ablation.comparison, nullptr);
  EXPECT_THAT(state.ablation.comparison->directories, ElementsAre(FixtureDir(), third.str()));
  CloseComparedAblationReport(state, 0);
  EXPECT_EQ(state.ablation.comparison, nullptr);
}

TEST(AblationCompareTest, AMissingReportIsLoggedAndChangesNothing) {
  TempDir other("passlab_cmp_missing");
  AppState state;
  OpenAblationReport(state, FixtureDir());
  OpenAnotherAblationReport(state, (other.path() / "nothing").string());
  EXPECT_EQ(state.ablation.comparison, nullptr);
  EXPECT_TRUE(state.ablation.compared_dirs.empty());
  ASSERT_FALSE(state.log.empty());
  EXPECT_EQ(state.log.back().level, LogLevel::kError);
  EXPECT_THAT(state.log.back().message, HasSubstr("nothing/report.json"));
}

// ---- a heatmap cell's kernels ---------------------------------------------------

// A module with one elementwise chain the gpu pipeline fuses (priority
// fusion) and a dot it turns into a library call.
constexpr const char* kModule = R"(HloModule m

ENTRY e {
  x = f32[64,32]{1,0} parameter(0)
  y = f32[32,16]{1,0} parameter(1)
  a = f32[64,32]{1,0} add(x, x)
  t = f32[64,32]{1,0} tanh(a)
  ROOT d = f32[64,16]{1,0} dot(t, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

// The name of the first fusion of the optimized module's entry.
std::string FirstFusion(const std::string& pipeline_name, const std::string& disable) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kModule);
  EXPECT_TRUE(m.ok()) << m.status();
  absl::StatusOr<FilteredPipeline> p = BuildFilteredPipeline(pipeline_name, disable);
  EXPECT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->pipeline->Run(**m).ok());
  for (const HloInstruction* inst : (*m)->entry_computation()->instructions()) {
    if (inst->opcode() == HloOpcode::kFusion) return inst->name();
  }
  return "";
}

// A sweep directory as `passlab ablate` leaves it, with the kernels of the
// baseline (`fusion`, the chain's kernel) and two variants: one without
// priority fusion (the chain is not one kernel there), one without algsimp.
std::string WriteKernelSweep(const TempDir& dir, const std::string& fusion) {
  std::ofstream(dir.path() / "input.hlo") << kModule;
  std::filesystem::create_directories(dir.path() / "diffs");
  std::ofstream(dir.path() / "diffs" / "priority-fusion.diff") << "--- before priority-fusion\n+++ after\n"
                                                                   "@@ -1 +1 @@\n-  %a = add\n+  %fusion = fusion\n";
  json kernels = json::array({{{"name", fusion}, {"kind", "kernel"}, {"detail", "loop"}, {"ns", 1000.0}, {"calls", 1}}});
  json r = {{"schema", "passlab.ablation/1"},
            {"manifest", {{"pipeline", "gpu"}, {"input", "input.hlo"}, {"device", "cpu"}}},
            {"metric", "kernel_ns"},
            {"threshold", 0.01},
            {"baseline", {{"name", "baseline"}, {"median_ns", 2000.0}, {"kernels", kernels}}},
            {"variants",
             {{{"name", "disable priority-fusion"},
               {"kind", "disable-one"},
               {"disabled", {"priority-fusion"}},
               {"disable", "priority-fusion"},
               {"outcome", "slower"},
               {"ratio", 1.5},
               {"significant", true},
               {"kernel_times_ns", {{"wrapped_tanh", 1500.0}}},  // the chain unfused: the fusion removed
               {"ir_diff", "diffs/priority-fusion.diff"}},
              {{"name", "disable algsimp"},
               {"kind", "disable-one"},
               {"disabled", {"algsimp"}},
               {"disable", "algsimp"},
               {"outcome", "no-change"},
               {"ratio", 1.001},
               {"kernel_times_ns", {{fusion, 1010.0}}}}}}};
  WriteJson(dir.path() / "report.json", r);
  return dir.str();
}

TEST(AblationKernelHloTest, ClickingACellFillsBothKernelsHlo) {
  const std::string fusion = FirstFusion("gpu", "");
  ASSERT_FALSE(fusion.empty());
  TempDir dir("passlab_kernel_hlo");
  AppState state;
  OpenAblationReport(state, WriteKernelSweep(dir, fusion));
  ASSERT_NE(state.ablation.report, nullptr);
  const KernelHeatmap& map = state.ablation.report->heatmap;
  ASSERT_EQ(map.rows.size(), 2u);
  ASSERT_EQ(map.columns.size(), 1u);
  EXPECT_EQ(map.rows[0].variant, "disable priority-fusion");  // the larger effect first

  // disable algsimp: the chain is the same kernel in both.
  // Until both modules are compiled (on jobs) kernel_hlo stays null and the
  // panel says "computing…".
  SelectAblationHeatmapCell(state, 1, 0);
  WaitUntilIdle(state);
  ASSERT_NE(state.ablation.kernel_hlo, nullptr);
  const AblationKernelHlo& same = *state.ablation.kernel_hlo;
  EXPECT_EQ(same.variant, "disable algsimp");
  EXPECT_EQ(same.kernel, fusion);
  EXPECT_THAT(same.baseline_hlo, HasSubstr("tanh("));
  EXPECT_THAT(same.baseline_hlo, HasSubstr("%" + fusion + " = "));
  EXPECT_THAT(same.baseline_hlo, HasSubstr("fusion("));
  EXPECT_THAT(same.variant_hlo, HasSubstr("%" + fusion + " = "));
  EXPECT_THAT(same.variant_hlo, HasSubstr("tanh("));
  EXPECT_THAT(same.baseline_note, IsEmpty());

  // disable priority-fusion: the variant's module has no such fusion; the
  // pass's IR diff comes from the report.
  SelectAblationHeatmapCell(state, 0, 0);
  WaitUntilIdle(state);
  ASSERT_NE(state.ablation.kernel_hlo, nullptr);
  const AblationKernelHlo& removed = *state.ablation.kernel_hlo;
  EXPECT_EQ(removed.variant, "disable priority-fusion");
  EXPECT_EQ(removed.baseline_hlo, same.baseline_hlo);
  EXPECT_EQ(FirstFusion("gpu", "priority-fusion") == fusion, !removed.variant_hlo.empty());
  if (removed.variant_hlo.empty()) {
    EXPECT_THAT(removed.variant_note, HasSubstr("no kernel '" + fusion + "'"));
  }
  EXPECT_NE(removed.variant_hlo, removed.baseline_hlo);
  EXPECT_THAT(state.ablation.selected_ir_diff, HasSubstr("+  %fusion = fusion"));
}

TEST(AblationKernelHloTest, WithoutAnInputModuleSaysWhy) {
  AppState state;
  OpenAblationReport(state, FixtureDir());  // its manifest names no input
  SelectAblationHeatmapCell(state, 1, 2);   // disable algsimp, dot.1
  WaitUntilIdle(state);
  ASSERT_NE(state.ablation.kernel_hlo, nullptr);
  EXPECT_THAT(state.ablation.kernel_hlo->baseline_hlo, IsEmpty());
  EXPECT_THAT(state.ablation.kernel_hlo->baseline_note, HasSubstr("names no input module"));
  EXPECT_THAT(state.ablation.kernel_hlo->variant_note, HasSubstr("names no input module"));
  EXPECT_THAT(state.log.back().message, Not(IsEmpty()));
}

}  // namespace
}  // namespace passlab::gui
