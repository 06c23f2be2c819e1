#include "gui/state/ablation.h"
#include "gui/state/app_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace passlab::gui {
namespace {

using ::testing::HasSubstr;

std::string FixtureDir() { return std::string(PASSLAB_SOURCE_DIR) + "/test/gui/ablation_fixture"; }

TEST(AblationReportTest, ReadsTheFixtureReport) {
  absl::StatusOr<AblationReport> r = LoadAblationReport(FixtureDir());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->metric, "kernel_ns");
  EXPECT_DOUBLE_EQ(r->threshold, 0.01);
  EXPECT_DOUBLE_EQ(r->baseline_median_ns, 1000000);
  EXPECT_EQ(r->baseline_kernels.size(), 3u);
  ASSERT_EQ(r->variants.size(), 8u);
  const AblationVariant& v = r->variants[0];
  EXPECT_EQ(v.name, "disable algsimp");
  EXPECT_EQ(v.disabled, std::vector<std::string>{"algsimp"});
  EXPECT_TRUE(v.significant);
  EXPECT_TRUE(v.measured());
  EXPECT_EQ(v.kernel_diff.size(), 4u);
  EXPECT_EQ(v.kernel_diff[2].change, "added");
  // The tooltip's time agrees with the ratio: ratio x baseline (the report
  // predates estimate_ns; newer reports carry it).
  EXPECT_DOUBLE_EQ(v.estimate_ns, 1.12 * 1000000);
  absl::StatusOr<std::string> diff = ReadVariantIrDiff(*r, v);
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_THAT(*diff, HasSubstr("+  %multiply.9"));
  EXPECT_FALSE(r->variants[5].measured());
  EXPECT_THAT(r->variants[5].error, HasSubstr("canonical dot"));
  EXPECT_THAT(r->manifest, HasSubstr("\"model\": \"mlp\""));
}

TEST(AblationReportTest, OrdersMeasuredVariantsBySlowdownThenFailures) {
  absl::StatusOr<AblationReport> r = LoadAblationReport(FixtureDir());
  ASSERT_TRUE(r.ok());
  std::vector<int64_t> order = VariantsBySlowdown(*r);
  std::vector<std::string> names;
  for (int64_t i : order) names.push_back(r->variants[i].name);
  EXPECT_EQ(names, (std::vector<std::string>{"disable tree_reduction_rewriter", "disable algsimp", "disable cse",
                                             "disable dce", "disable transpose-folding", "disable dot_decomposer",
                                             "disable float-normalization-bf16", "disable call-inliner"}));
}

TEST(AblationReportTest, LabelsLargeEffectsTheCorrectionLeftUndecided) {
  // report.json's large_but_uncorrected (analysis/ablation/report.cc): the
  // GUI shows "likely slower" as the report's tables do, not "undecided".
  auto dir = std::filesystem::temp_directory_path() / ("passlab_abl_label_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ifstream in(FixtureDir() + "/report.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["variants"][0]["outcome"] = "undecided";
  j["variants"][0]["significant"] = false;
  j["variants"][0]["large_but_uncorrected"] = true;
  j["variants"][1]["outcome"] = "undecided";
  std::ofstream(dir / "report.json") << j.dump();
  absl::StatusOr<AblationReport> r = LoadAblationReport(dir.string());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->variants[0].outcome, "undecided");
  EXPECT_EQ(r->variants[0].label, r->variants[0].ratio > 1 ? "likely slower" : "likely faster");
  EXPECT_EQ(r->variants[1].label, "undecided");
  EXPECT_EQ(r->variants[2].label, r->variants[2].outcome);
}

TEST(AblationReportTest, ErrorsNameTheFile) {
  auto dir = std::filesystem::temp_directory_path() / ("passlab_abl_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_THAT(std::string(LoadAblationReport(dir.string()).status().message()), HasSubstr("report.json: cannot open"));
  std::ofstream(dir / "report.json") << R"({"schema":"other/2"})";
  EXPECT_THAT(std::string(LoadAblationReport(dir.string()).status().message()), HasSubstr("report has schema 'other/2', not passlab.ablation/N"));
  std::ofstream(dir / "report.json") << R"({"schema":"passlab.ablation/1","baseline":{}})";
  EXPECT_THAT(std::string(LoadAblationReport(dir.string()).status().message()), HasSubstr("median_ns"));
  std::filesystem::remove_all(dir);
}

// The report writer puts null where a field does not apply (a crashed
// variant has no median; a kernel only the variant has no baseline time).
TEST(AblationReportTest, NullFieldsReadAsAbsent) {
  auto dir = std::filesystem::temp_directory_path() / ("passlab_abl_null_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "report.json") << R"({"schema":"passlab.ablation/1","metric":"kernel_ns","threshold":0.01,
    "baseline":{"name":"baseline","median_ns":100.0,"snapshot":null,"kernels":[{"name":"k","ns":100.0,"calls":1}]},
    "variants":[{"name":"disable x","kind":"disable-one","disabled":["x"],"outcome":"crash","median_ns":null,
                 "ratio":null,"error":null,"failed_pass":null,"ir_diff":null,
                 "kernel_diff":[{"name":"k2","baseline_ns":null,"variant_ns":5.0,"change":"added"},
                                {"name":"k3","baseline_ns":1.0,"variant_ns":9.0,"change":"changed","host":true}]}]})";
  absl::StatusOr<AblationReport> r = LoadAblationReport(dir.string());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->variants.size(), 1u);
  EXPECT_EQ(r->variants[0].error, "");
  EXPECT_DOUBLE_EQ(r->variants[0].ratio, 1.0);
  ASSERT_EQ(r->variants[0].kernel_diff.size(), 2u);
  EXPECT_DOUBLE_EQ(r->variants[0].kernel_diff[0].baseline_ns, 0.0);
  EXPECT_FALSE(r->variants[0].kernel_diff[0].host);  // absent: on the device
  EXPECT_TRUE(r->variants[0].kernel_diff[1].host);
  std::filesystem::remove_all(dir);
}

// The fixture's "kernel_times_ns" (three variants) become the passes x
// kernels heatmap that report.html draws too.
TEST(AblationHeatmapTest, BuildsTheHeatmapFromKernelTimes) {
  absl::StatusOr<AblationReport> r = LoadAblationReport(FixtureDir());
  ASSERT_TRUE(r.ok()) << r.status();
  const KernelHeatmap& map = r->heatmap;
  // Largest |ratio - 1| first.
  ASSERT_EQ(map.rows.size(), 3u);
  EXPECT_EQ(map.rows[0].variant, "disable tree_reduction_rewriter");
  EXPECT_EQ(map.rows[1].variant, "disable algsimp");
  EXPECT_EQ(map.rows[2].variant, "disable transpose-folding");
  // reduce.3 is touched twice (+80%, removed), add.2 once (-16.7%), dot.1
  // never (+1.9%): hero kinds in that order.
  ASSERT_EQ(map.columns.size(), 3u);
  EXPECT_EQ(map.columns[0].kernel, "reduce.3");
  EXPECT_EQ(map.columns[0].group, "reduction");
  EXPECT_EQ(map.columns[1].group, "loop");
  EXPECT_EQ(map.columns[2].group, "__blas$gemm/blas");
  EXPECT_EQ(map.rows[2].cells[0].state, HeatmapCellState::kRemoved);
  EXPECT_NEAR(map.rows[0].cells[0].change, 0.8, 1e-12);
  ASSERT_EQ(map.rows[1].added.size(), 1u);
  EXPECT_EQ(map.rows[1].added[0].kernel, "multiply.9");
}

TEST(AblationHeatmapTest, HitTestsCellsAndSkipsGroupGaps) {
  absl::StatusOr<AblationReport> r = LoadAblationReport(FixtureDir());
  ASSERT_TRUE(r.ok()) << r.status();
  // Three one-kernel groups, 10 pixels, 4 apart: columns at 0, 14, 28.
  HeatmapGeometry g = LayOutHeatmap(r->heatmap, 10, 4);
  EXPECT_EQ(g.column_x, (std::vector<float>{0, 14, 28}));
  EXPECT_FLOAT_EQ(g.width, 38);
  EXPECT_FLOAT_EQ(g.height, 30);
  EXPECT_EQ(HeatmapCellAt(g, r->heatmap, 15, 25), (std::pair<int64_t, int64_t>{2, 1}));
  EXPECT_EQ(HeatmapCellAt(g, r->heatmap, 0, 0), (std::pair<int64_t, int64_t>{0, 0}));
  EXPECT_EQ(HeatmapCellAt(g, r->heatmap, 11, 5), (std::pair<int64_t, int64_t>{-1, -1}));  // the gap
  EXPECT_EQ(HeatmapCellAt(g, r->heatmap, 5, 31), (std::pair<int64_t, int64_t>{-1, -1}));  // below the rows
  EXPECT_EQ(HeatmapRowVariant(*r, 2), 4);  // "disable transpose-folding" is the report's fifth variant
  EXPECT_EQ(HeatmapRowVariant(*r, 3), -1);
}

TEST(AblationHeatmapTest, ClickingACellSelectsVariantAndKernel) {
  AppState state;
  OpenAblationReport(state, FixtureDir());
  ASSERT_NE(state.ablation.report, nullptr);
  SelectAblationHeatmapCell(state, 1, 2);  // disable algsimp, dot.1
  EXPECT_EQ(state.ablation.selected_variant, 0);
  EXPECT_EQ(state.ablation.selected_kernel, "dot.1");
  EXPECT_THAT(state.ablation.selected_ir_diff, HasSubstr("multiply.9"));
  SelectAblationHeatmapCell(state, 7, 0);  // no such row: unchanged
  EXPECT_EQ(state.ablation.selected_variant, 0);
  OpenAblationReport(state, FixtureDir());
  EXPECT_EQ(state.ablation.selected_kernel, "");
}

TEST(AblationHeatmapTest, OlderReportsHaveNoHeatmap) {
  auto dir = std::filesystem::temp_directory_path() / ("passlab_abl_old_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "report.json") << R"({"schema":"passlab.ablation/1","baseline":{"median_ns":100.0,
    "kernels":[{"name":"k","ns":100.0}]},"variants":[{"name":"disable x","outcome":"slower","ratio":1.5,
    "kernel_diff":[{"name":"k","baseline_ns":100.0,"variant_ns":150.0,"change":"changed"}]}]})";
  absl::StatusOr<AblationReport> r = LoadAblationReport(dir.string());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->heatmap.rows.empty());
  EXPECT_EQ(r->heatmap.variants_without_times, 1u);
  std::filesystem::remove_all(dir);
}

// A stand-in for `passlab ablate`: writes a plan of 3 variants, one result
// line per variant, then the fixture report; "slow" sleeps instead.
std::string WriteFakePasslab(const std::filesystem::path& dir) {
  std::filesystem::path script = dir / "passlab";
  std::ofstream(script) << "#!/bin/sh\n"
                           "out=''; while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=\"$2\"; "
                           "[ \"$1\" = slow ] && exec sleep 30; shift; done\n"
                           "echo '{\"variants\":[{},{},{}]}' > \"$out/plan.json\"\n"
                           "for i in 1 2 3; do echo '{\"i\":'$i'}' >> \"$out/results.jsonl\"; done\n"
                           "cp '" + FixtureDir() + "/report.json' \"$out/report.json\"\n"
                           "echo done\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  return script.string();
}

TEST(AblationSweepTest, RunsTheChildAndCountsProgress) {
  auto dir = std::filesystem::temp_directory_path() / ("passlab_sweep_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string passlab = WriteFakePasslab(dir);
  AblationSweep sweep;
  ASSERT_TRUE(sweep.Start(passlab, {"--model", "mlp"}, (dir / "out").string()).ok());
  EXPECT_TRUE(sweep.running());
  EXPECT_THAT(sweep.command_line(), HasSubstr("ablate --model mlp --out"));
  for (int i = 0; i < 500 && !sweep.finished(); ++i) {
    sweep.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(sweep.finished());
  sweep.Poll();
  EXPECT_EQ(sweep.exit_code(), 0);
  EXPECT_EQ(sweep.total(), 3);
  EXPECT_EQ(sweep.done(), 3);
  EXPECT_THAT(sweep.LogTail(), HasSubstr("done"));
  EXPECT_TRUE(LoadAblationReport((dir / "out").string()).ok());
  std::filesystem::remove_all(dir);
}

TEST(AblationSweepTest, CancelKillsTheChild) {
  auto dir = std::filesystem::temp_directory_path() / ("passlab_cancel_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string passlab = WriteFakePasslab(dir);
  AblationSweep sweep;
  ASSERT_TRUE(sweep.Start(passlab, {"slow"}, (dir / "out").string()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  sweep.Poll();
  EXPECT_TRUE(sweep.running());
  auto t0 = std::chrono::steady_clock::now();
  sweep.Cancel();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_FALSE(sweep.running());
  EXPECT_TRUE(sweep.finished());
  EXPECT_NE(sweep.exit_code(), 0);
  EXPECT_FALSE(AblationSweep().Start((dir / "missing").string(), {}, (dir / "o2").string()).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace passlab::gui
