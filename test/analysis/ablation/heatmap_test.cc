#include "analysis/ablation/heatmap.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "analysis/ablation/report.h"
#include "test/analysis/ablation/typed_records.h"

namespace passlab {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;
using ::testing::HasSubstr;
using ::testing::Not;

AblationReportKernel BaseKernel(const std::string& name, const std::string& detail, double ns) {
  return {.name = name, .kind = "kernel", .detail = detail, .ns = ns, .calls = 1};
}

AblationReportVariant Variant(const std::string& name, double ratio, std::map<std::string, double> times) {
  AblationReportVariant v;
  v.name = name;
  v.kind = "disable-one";
  v.passes = {name};
  v.outcome = ratio > 1 ? "slower" : "faster";
  v.ratio = ratio;
  v.kernel_diff = {{.name = "x", .change = "changed"}};
  v.kernel_times_ns.emplace(times.begin(), times.end());
  return v;
}

// A report as BuildAblationReport leaves it, reduced to what the heatmap reads:
// baseline kernels a, b (loop), r (reduction), t (transpose).
AblationReport SyntheticReport() {
  AblationReport report;
  report.baseline.kernels = {BaseKernel("a", "loop", 1000), BaseKernel("b", "loop", 2000),
                             BaseKernel("r", "reduction", 4000), BaseKernel("t", "transpose", 500)};
  report.variants = {
      // Small effect: only b moves, +50%.
      Variant("small", 1.02, {{"a", 1000}, {"b", 3000}, {"r", 4000}, {"t", 500}}),
      // Large effect: a removed, r three times slower (capped), fused.1 added.
      Variant("large", 1.40, {{"b", 2000}, {"r", 12000}, {"t", 500}, {"fused.1", 7000}, {"fused.2", 100}}),
      // Middle, faster: b halves, a removed.
      Variant("middle", 0.90, {{"b", 1000}, {"r", 4000}, {"t", 500}}),
  };
  // A failed variant: no kernel times, not a row.
  AblationReportVariant broken;
  broken.name = "broken";
  broken.outcome = "crash";
  report.variants.push_back(broken);
  return report;
}

size_t Column(const KernelHeatmap& map, const std::string& kernel) {
  for (size_t i = 0; i < map.columns.size(); ++i) {
    if (map.columns[i].kernel == kernel) return i;
  }
  ADD_FAILURE() << "no column " << kernel;
  return 0;
}

TEST(KernelHeatmapTest, OrdersRowsByOverallEffect) {
  KernelHeatmap map = BuildKernelHeatmap(SyntheticReport());
  ASSERT_EQ(map.rows.size(), 3u);
  EXPECT_EQ(map.rows[0].variant, "large");   // |1.40 - 1| = 0.40
  EXPECT_EQ(map.rows[1].variant, "middle");  // 0.10
  EXPECT_EQ(map.rows[2].variant, "small");   // 0.02
  EXPECT_EQ(map.rows_left_out, 0u);
}

TEST(KernelHeatmapTest, GroupsColumnsByHeroKindMostTouchedFirst) {
  KernelHeatmap map = BuildKernelHeatmap(SyntheticReport());
  ASSERT_EQ(map.columns.size(), 4u);
  // a: removed twice; b: moved in small and middle (2); r: once; t: never.
  // The loop group holds the most touched kernel, so it comes first; within
  // it a (2 touches, weight 2) before b (2 touches, weight 1).
  ASSERT_EQ(map.groups.size(), 3u);
  EXPECT_EQ(map.groups[0].name, "loop");
  EXPECT_EQ(map.groups[0].count, 2u);
  EXPECT_EQ(map.groups[1].name, "reduction");
  EXPECT_EQ(map.groups[2].name, "transpose");
  EXPECT_EQ(map.columns[0].kernel, "a");
  EXPECT_EQ(map.columns[1].kernel, "b");
  EXPECT_EQ(map.columns[2].kernel, "r");
  EXPECT_EQ(map.columns[3].kernel, "t");
  EXPECT_EQ(map.columns[0].touched, 2);
  EXPECT_EQ(map.columns[3].touched, 0);
}

TEST(KernelHeatmapTest, MarksRemovedAndAddedKernels) {
  KernelHeatmap map = BuildKernelHeatmap(SyntheticReport());
  const HeatmapRow& large = map.rows[0];
  EXPECT_EQ(large.cells[Column(map, "a")].state, HeatmapCellState::kRemoved);
  EXPECT_TRUE(std::isnan(large.cells[Column(map, "a")].change));
  EXPECT_EQ(large.cells[Column(map, "r")].state, HeatmapCellState::kTimed);
  EXPECT_DOUBLE_EQ(large.cells[Column(map, "r")].change, 2.0);  // 12000 / 4000 - 1, uncapped
  EXPECT_EQ(large.removed, 1);
  ASSERT_EQ(large.added.size(), 2u);
  EXPECT_EQ(large.added[0].kernel, "fused.1");  // largest first
  EXPECT_DOUBLE_EQ(large.added[0].ns, 7000);
  EXPECT_EQ(large.added[1].kernel, "fused.2");
  const HeatmapRow& small = map.rows[2];
  EXPECT_TRUE(small.added.empty());
  EXPECT_EQ(small.removed, 0);
  EXPECT_DOUBLE_EQ(small.cells[Column(map, "b")].change, 0.5);
}

TEST(KernelHeatmapTest, CapsChangesAndColoursKnownCells) {
  EXPECT_DOUBLE_EQ(CapChange(2.0), 1.0);
  EXPECT_DOUBLE_EQ(CapChange(-1.5), -1.0);
  EXPECT_DOUBLE_EQ(CapChange(0.25), 0.25);
  EXPECT_TRUE(std::isnan(CapChange(NAN)));
  EXPECT_EQ(HeatmapColour(0), "#ffffff");
  EXPECT_EQ(HeatmapColour(1.0), "#b2182b");
  EXPECT_EQ(HeatmapColour(5.0), "#b2182b");  // capped at +100%
  EXPECT_EQ(HeatmapColour(-1.0), "#2166ac");
  // Halfway to blue: (255 + 0x21) / 2 = 144 = 0x90, (255 + 0x66) / 2 = 178.5
  // -> 0xb3 (rounded), (255 + 0xac) / 2 = 213.5 -> 0xd6.
  EXPECT_EQ(HeatmapColour(-0.5), "#90b3d6");
  EXPECT_EQ(HeatmapColour(NAN), "#d0d4db");
  // The large variant's r cell (+200%) is drawn full red.
  KernelHeatmap map = BuildKernelHeatmap(SyntheticReport());
  EXPECT_EQ(HeatmapColour(map.rows[0].cells[Column(map, "r")].change), "#b2182b");
}

TEST(KernelHeatmapTest, LimitsRowsAndColumnsAndCountsTheRest) {
  HeatmapOptions options;
  options.max_rows = 2;
  options.max_columns = 2;
  KernelHeatmap map = BuildKernelHeatmap(SyntheticReport(), options);
  ASSERT_EQ(map.rows.size(), 2u);
  EXPECT_EQ(map.rows_left_out, 1u);
  EXPECT_EQ(map.rows[0].variant, "large");
  ASSERT_EQ(map.columns.size(), 2u);
  EXPECT_EQ(map.columns_left_out, 2u);
  // Over the shown rows (large, middle): a removed twice, then b and r
  // moved once each; b moved by 50% (weight 0.5), r by +200% capped (1).
  EXPECT_EQ(map.columns[0].kernel, "a");
  EXPECT_EQ(map.columns[1].kernel, "r");
  EXPECT_EQ(map.untouched_left_out, 1u);  // t
  for (const HeatmapRow& row : map.rows) EXPECT_EQ(row.cells.size(), 2u);
}

TEST(KernelHeatmapTest, CountsVariantsOfOlderReportsWithoutTimes) {
  AblationReport report = SyntheticReport();
  for (AblationReportVariant& v : report.variants) v.kernel_times_ns.reset();
  KernelHeatmap map = BuildKernelHeatmap(report);
  EXPECT_TRUE(map.rows.empty());
  EXPECT_EQ(map.variants_without_times, 3u);  // "broken" has no kernels at all
  std::string html = RenderHeatmapHtml(report);
  EXPECT_THAT(html, HasSubstr("Passes x kernels"));
  EXPECT_THAT(html, HasSubstr("--report-only"));
  EXPECT_EQ(RenderHeatmapMarkdown(report), "");
}

TEST(KernelHeatmapTest, RendersSvgWithTooltips) {
  std::string html = RenderHeatmapHtml(SyntheticReport());
  EXPECT_THAT(html, HasSubstr("<h2>Passes x kernels</h2>"));
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  // The large variant's r cell: times and change in its tooltip, full red.
  EXPECT_THAT(html, HasSubstr("fill=\"#b2182b\" stroke=\"#ffffff\" stroke-width=\"0.5\"><title>large&#10;r "
                              "(reduction)&#10;baseline 0.0040 ms, variant 0.0120 ms&#10;change +200.0%</title>"));
  EXPECT_THAT(html, HasSubstr("removed: only the baseline has it"));
  EXPECT_THAT(html, HasSubstr("fused.1&#10;added: only the variant has it, 0.0070 ms"));
}

TEST(KernelHeatmapTest, MarkdownListsLargestKernelMoves) {
  std::string md = RenderHeatmapMarkdown(SyntheticReport());
  EXPECT_THAT(md, HasSubstr("## Passes x kernels"));
  // r in "large" moved 8000 ns, the most.
  EXPECT_THAT(md, HasSubstr("| large | `r` | reduction | 0.0040 ms | 0.0120 ms | +200.0% |"));
  EXPECT_THAT(md, HasSubstr("Most kernels replaced: large (1 of the baseline's removed, 2 added)"));
}

// The report builder stores every kernel's time per variant.
TEST(KernelHeatmapTest, ReportStoresKernelTimesPerVariant) {
  auto record = [](const std::string& name, const std::string& kind, json kernels) {
    json samples = json::array();
    for (int i = 0; i < 6; ++i) samples.push_back(1e6 * (kind == "baseline" ? 1.0 : 1.2) * (1 + 0.001 * i));
    return json{{"variant", name},       {"kind", kind},          {"passes", json::array({"p"})},
                {"status", "ok"},        {"block", 0},            {"samples", {{"kernel_ns", samples}}},
                {"kernels", kernels}};
  };
  auto kernel = [](const std::string& name, double ns) {
    return json{{"name", name}, {"kind", "kernel"}, {"detail", "loop"}, {"calls", 1}, {"ns", ns}};
  };
  std::vector<json> records = {
      record("baseline", "baseline", json::array({kernel("k1", 100), kernel("k2", 200)})),
      record("disable p", "disable-one", json::array({kernel("k1", 150), kernel("k3", 50)})),
  };
  ordered_json report = BuildAblationReport(json::object(), TypedRecords(records));
  ASSERT_EQ(report["variants"].size(), 1u);
  const ordered_json& times = report["variants"][0]["kernel_times_ns"];
  ASSERT_TRUE(times.is_object());
  EXPECT_EQ(times, (ordered_json{{"k1", 150}, {"k3", 50}}));
  KernelHeatmap map = BuildKernelHeatmap(report);
  ASSERT_EQ(map.rows.size(), 1u);
  EXPECT_EQ(map.rows[0].removed, 1);  // k2
  ASSERT_EQ(map.rows[0].added.size(), 1u);
  EXPECT_EQ(map.rows[0].added[0].kernel, "k3");
  EXPECT_THAT(RenderAblationHtml(report), HasSubstr("<h2>Passes x kernels</h2>"));
  EXPECT_THAT(RenderAblationMarkdown(report), HasSubstr("## Passes x kernels"));
}

}  // namespace
}  // namespace passlab
