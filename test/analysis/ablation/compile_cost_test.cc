#include "analysis/ablation/compile_cost.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "analysis/ablation/report.h"
#include "test/analysis/ablation/typed_records.h"
#include "core/pass/pass_recorder.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kModule = R"(HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)";

// One recorded run of `pass` that took `ms`.
void RecordRun(PassRecorder& recorder, const HloModule& module, const std::string& pass, double ms) {
  PassRunInfo info;
  info.pass_name = pass;
  info.run_seconds = ms / 1e3;
  ASSERT_TRUE(recorder.BeforePass(info, module).ok());
  ASSERT_TRUE(recorder.AfterPass(info, module, false, 1, 1, {}).ok());
}

TEST(CompileCostTest, AggregatesPassRunsByName) {
  auto module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  PassRecorder recorder(PassRecorderOptions{.snapshots = false});
  RecordRun(recorder, **module, "algsimp", 2);
  RecordRun(recorder, **module, "config-assigner", 40);
  RecordRun(recorder, **module, "algsimp", 3);
  RecordRun(recorder, **module, "gemm-algorithm-picker", 10);
  json fields = CompileCostFields(recorder);
  EXPECT_DOUBLE_EQ(fields["pass_times"]["algsimp"]["ms"].get<double>(), 5);
  EXPECT_EQ(fields["pass_times"]["algsimp"]["runs"].get<int64_t>(), 2);
  EXPECT_EQ(fields["pass_times"]["config-assigner"]["runs"].get<int64_t>(), 1);
  // The config assigner and the pickers autotune; algsimp does not.
  EXPECT_DOUBLE_EQ(fields["autotune_ms"].get<double>(), 50);
  EXPECT_TRUE(IsAutotuningPass("gpu-conv-algorithm-picker"));
  EXPECT_FALSE(IsAutotuningPass("algsimp"));
}

json Record(const std::string& variant, const std::string& kind, double optimize_ms, double compile_ms) {
  return {{"variant", variant}, {"kind", kind}, {"status", "ok"}, {"optimize_ms", optimize_ms},
          {"compile_ms", compile_ms}};
}

json BaselineRecord(double fusion_ms, double cse_ms, double compile_ms, int hits) {
  json r = Record("baseline", "baseline", 100, compile_ms);
  r["pass_times"] = {{"fusion", {{"ms", fusion_ms}, {"runs", 2}}},
                     {"cse", {{"ms", cse_ms}, {"runs", 3}}},
                     {"dce", {{"ms", 0.05}, {"runs", 4}}}};
  r["autotune_ms"] = 20;
  r["kernel_cache"] = {{"hits", hits}, {"misses", 10}};
  return r;
}

AblationReportVariant Variant(const std::string& name, const std::string& kind, std::vector<std::string> passes,
                              double ratio, bool significant) {
  AblationReportVariant v;
  v.name = name;
  v.kind = kind;
  v.passes = std::move(passes);
  v.ratio = ratio;
  v.ci_low = ratio - 0.01;
  v.ci_high = ratio + 0.01;
  v.significant = significant;
  v.outcome = significant ? (ratio > 1 ? "slower" : "faster") : "no-change";
  return v;
}

std::vector<json> Records() {
  std::vector<json> records = {BaselineRecord(10, 0.5, 50, 0), BaselineRecord(12, 0.8, 60, 2),
                               BaselineRecord(30, 0.3, 70, 4)};
  records.push_back(Record("disable fusion", "disable-one", 90, 80));
  records.push_back(Record("disable cse", "disable-one", 99, 61));
  records.push_back(Record("disable dce", "disable-one", 100, 60));
  records.push_back(Record("disable fusion + cse", "pair", 90, 85));
  records.push_back(Record("add fusion", "add-one", 10, 20));
  return records;
}

std::vector<AblationReportVariant> Variants() {
  return {Variant("disable fusion", "disable-one", {"fusion"}, 1.5, true),
          Variant("disable cse", "disable-one", {"cse"}, 1.002, false),
          Variant("disable dce", "disable-one", {"dce"}, 0.97, true),
          Variant("disable fusion + cse", "pair", {"fusion", "cse"}, 1.6, true),
          Variant("add fusion", "add-one", {"fusion"}, 0.5, true)};
}

const AblationCompileCostRow& Row(const AblationCompileCost& cost, const std::string& variant) {
  for (const AblationCompileCostRow& row : cost.rows) {
    if (row.variant == variant) return row;
  }
  static const AblationCompileCostRow kNone;
  ADD_FAILURE() << "no row for " << variant;
  return kNone;
}

TEST(CompileCostTest, TakesMediansOverTheBaselinesRecords) {
  AblationCompileCost cost = BuildCompileCost(TypedRecords(Records()), Variants());
  const AblationCompileTimes& base = cost.baseline.times;
  EXPECT_DOUBLE_EQ(base.compile_ms.value(), 160);  // 100 + median(50, 60, 70)
  EXPECT_DOUBLE_EQ(base.backend_ms.value(), 60);
  EXPECT_DOUBLE_EQ(base.autotune_ms.value(), 20);
  EXPECT_DOUBLE_EQ(base.kernel_cache_hits.value(), 2);
  EXPECT_DOUBLE_EQ(base.kernel_cache_misses.value(), 10);
  EXPECT_EQ(cost.baseline.records_with_pass_times, 3);
  // Per pass: median of (10, 12, 30) and of (0.5, 0.8, 0.3); most expensive first.
  ASSERT_EQ(cost.pass_times.size(), 3u);
  EXPECT_EQ(cost.pass_times[0].pass, "fusion");
  EXPECT_DOUBLE_EQ(cost.pass_times[0].ms.value(), 12);
  EXPECT_DOUBLE_EQ(cost.pass_times[1].ms.value(), 0.5);

  const AblationCompileCostRow& fusion = Row(cost, "disable fusion");
  EXPECT_DOUBLE_EQ(fusion.pass_ms.value(), 12);
  EXPECT_DOUBLE_EQ(fusion.pass_runs.value(), 2);
  EXPECT_DOUBLE_EQ(fusion.times.compile_ms.value(), 170);
  EXPECT_DOUBLE_EQ(fusion.compile_delta_ms.value(), 10);
  EXPECT_DOUBLE_EQ(fusion.ratio.value(), 1.5);
  EXPECT_TRUE(fusion.significant);
  // A pair costs both its passes.
  EXPECT_DOUBLE_EQ(Row(cost, "disable fusion + cse").pass_ms.value(), 12.5);
  EXPECT_DOUBLE_EQ(Row(cost, "disable fusion + cse").pass_runs.value(), 5);
  // Add-one variants measure something else: no row.
  EXPECT_EQ(cost.rows.size(), 4u);
  // The variants' records carry no cache counts.
  EXPECT_FALSE(fusion.times.kernel_cache_hits.has_value());
}

TEST(CompileCostTest, PlacesVariantsInQuadrants) {
  AblationCompileCost cost = BuildCompileCost(TypedRecords(Records()), Variants());
  // Split: 1% of the baseline's pipeline time (100 ms).
  EXPECT_DOUBLE_EQ(cost.cost_split_ms.value(), 1);
  EXPECT_EQ(Row(cost, "disable fusion").quadrant, "expensive and essential");
  EXPECT_EQ(Row(cost, "disable cse").quadrant, "cheap and useless");
  EXPECT_EQ(Row(cost, "disable dce").quadrant, "harmful");
  EXPECT_EQ(CompileCostQuadrant(100, 1.001, false, 6.5), "expensive and useless");
  EXPECT_EQ(CompileCostQuadrant(1, 1.2, true, 6.5), "cheap and essential");
  EXPECT_EQ(CompileCostQuadrant(NAN, 1.2, true, 6.5), "");
}

TEST(CompileCostTest, ACiWhollyBeyondTheThresholdIsAClearEffect) {
  // Too few pairs for Holm to reach significance, but the whole CI is +50%
  // or more: essential, not useless. A CI straddling the threshold is not.
  std::vector<nlohmann::json> records = Records();
  std::vector<AblationReportVariant> variants = Variants();
  for (AblationReportVariant& v : variants) v.significant = false;
  AblationCompileCost cost = BuildCompileCost(TypedRecords(records), variants, 0.01);
  for (const AblationCompileCostRow& row : cost.rows) {
    const double lo = row.ci_low.value_or(NAN);
    const bool clear = lo > 1.01 || (row.ci_high.has_value() && *row.ci_high < 0.99);
    EXPECT_EQ(row.clear_effect, clear) << row.variant;
    if (clear && row.ratio.value() > 1) {
      EXPECT_NE(row.quadrant.find("essential"), std::string::npos) << row.variant;
    }
  }
}

TEST(CompileCostTest, SplitsAtTheMedianPassTimeWithoutAPipelineTime) {
  std::vector<json> records = Records();
  for (json& r : records) r.erase("optimize_ms");
  AblationCompileCost cost = BuildCompileCost(TypedRecords(records), Variants());
  // The rows' pass times: 12, 0.5, 0.05, 12.5.
  EXPECT_DOUBLE_EQ(cost.cost_split_ms.value(), 6.25);
  EXPECT_FALSE(Row(cost, "disable fusion").compile_delta_ms.has_value());
}

TEST(CompileCostTest, ScatterPointsLandInTheirQuadrants) {
  AblationCompileCost cost = BuildCompileCost(TypedRecords(Records()), Variants());
  CompileCostPlot plot = LayOutCompileCostPlot(cost);
  ASSERT_EQ(plot.points.size(), 4u);
  std::map<std::string, CompileCostPoint> by_label;
  for (const CompileCostPoint& p : plot.points) {
    EXPECT_GE(p.x, 0);
    EXPECT_LE(p.x, plot.width);
    EXPECT_GE(p.y, 0);
    EXPECT_LE(p.y, plot.height);
    by_label[p.label] = p;
  }
  const CompileCostPoint& fusion = by_label["fusion"];
  EXPECT_GT(fusion.x, plot.split_x);  // expensive: right
  EXPECT_LT(fusion.y, plot.zero_y);   // slower without it: up
  EXPECT_TRUE(fusion.significant);
  const CompileCostPoint& cse = by_label["cse"];
  EXPECT_LT(cse.x, plot.split_x);               // cheap: left
  EXPECT_NEAR(cse.y, plot.zero_y, 0.02 * plot.height);  // no effect: on the zero line
  EXPECT_FALSE(cse.significant);
  EXPECT_GT(by_label["dce"].y, plot.zero_y);  // faster without it: down
  EXPECT_LT(by_label["dce"].x, cse.x);        // log scale keeps the order
  EXPECT_EQ(by_label["fusion + cse"].quadrant, "expensive and essential");
}

AblationReport ReportWith(const AblationCompileCost& cost) {
  AblationReport report;
  report.threshold = 0.01;
  report.compile_cost = cost;
  return report;
}

TEST(CompileCostTest, RendersTableAndPlot) {
  AblationReport report = ReportWith(BuildCompileCost(TypedRecords(Records()), Variants()));
  std::string md = RenderCompileCostMarkdown(report);
  EXPECT_THAT(md, HasSubstr("## Compile cost against run-time benefit"));
  EXPECT_THAT(md, HasSubstr("| fusion | 12 ms | 2 | +10 ms | – | +50.0% |"));
  EXPECT_THAT(md, HasSubstr("expensive and essential"));
  EXPECT_THAT(md, HasSubstr("hits / misses 2 / 10"));
  std::string html = RenderCompileCostHtml(report);
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr(">cheap and useless</text>"));
  EXPECT_THAT(html, HasSubstr(">expensive and essential</text>"));
  EXPECT_THAT(html, HasSubstr("<td>fusion + cse</td>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
}

TEST(CompileCostTest, KernelsLoadedFromThePersistentCacheAreReportedApart) {
  // A sweep with a persistent kernel cache: of each record's misses, some
  // were loaded rather than compiled; compile times stay as measured.
  std::vector<json> records = Records();
  for (size_t i = 0; i < records.size(); ++i) {
    records[i]["kernel_cache"] = {{"hits", 2}, {"misses", 10}, {"persistent_hits", 6 + i}, {"persistent_misses", 4}};
  }
  AblationCompileCost cost = BuildCompileCost(TypedRecords(records), Variants());
  EXPECT_DOUBLE_EQ(cost.baseline.times.kernel_cache_persistent_hits.value(), 7);  // median of 6, 7, 8
  EXPECT_DOUBLE_EQ(cost.baseline.times.compile_ms.value(), 160);
  EXPECT_DOUBLE_EQ(Row(cost, "disable fusion").times.kernel_cache_persistent_hits.value(), 9);
  std::string md = RenderCompileCostMarkdown(ReportWith(cost));
  EXPECT_THAT(md, HasSubstr("hits / misses 2 / 10 (7 loaded)"));
  EXPECT_THAT(md, HasSubstr("came from the persistent kernel cache"));
  EXPECT_THAT(md, HasSubstr("| +10 ms | 2 / 10 (9 loaded) |"));
  // Without a persistent cache, no such field or note.
  AblationCompileCost plain = BuildCompileCost(TypedRecords(Records()), Variants());
  EXPECT_FALSE(plain.baseline.times.kernel_cache_persistent_hits.has_value());
  EXPECT_FALSE(ordered_json(plain)["baseline"].contains("kernel_cache_persistent_hits"));
  EXPECT_THAT(RenderCompileCostMarkdown(ReportWith(plain)), Not(HasSubstr("persistent")));
}

TEST(CompileCostTest, OldSweepsWithoutTheFieldsRenderDashes) {
  // Records from before pass_times, autotune_ms and kernel_cache existed.
  std::vector<json> records = {Record("baseline", "baseline", 100, 60), Record("disable fusion", "disable-one", 90, 80),
                               Record("disable cse", "disable-one", 99, 61)};
  AblationCompileCost cost = BuildCompileCost(TypedRecords(records), Variants());
  EXPECT_FALSE(cost.baseline.times.autotune_ms.has_value());
  EXPECT_TRUE(ordered_json(cost)["baseline"]["autotune_ms"].is_null());  // written as null
  EXPECT_DOUBLE_EQ(cost.cost_split_ms.value(), 1);  // from the pipeline time, still known
  const AblationCompileCostRow& fusion = Row(cost, "disable fusion");
  EXPECT_FALSE(fusion.pass_ms.has_value());
  EXPECT_EQ(fusion.quadrant, "");
  EXPECT_DOUBLE_EQ(fusion.compile_delta_ms.value(), 10);  // still known
  // A variant with no records at all.
  EXPECT_FALSE(Row(cost, "disable dce").compile_delta_ms.has_value());
  AblationReport report = ReportWith(cost);
  std::string md = RenderCompileCostMarkdown(report);
  EXPECT_THAT(md, HasSubstr("| fusion | – | – | +10 ms | – | +50.0% |"));
  EXPECT_THAT(md, HasSubstr("| dce | – | – | – | – |"));
  std::string html = RenderCompileCostHtml(report);
  EXPECT_THAT(html, Not(HasSubstr("<svg")));
  EXPECT_THAT(html, HasSubstr("no plot"));
  EXPECT_TRUE(LayOutCompileCostPlot(cost).points.empty());
  // A report without the key at all renders nothing.
  EXPECT_EQ(RenderCompileCostMarkdown(AblationReport{}), "");
  EXPECT_EQ(RenderCompileCostHtml(AblationReport{}), "");
}

TEST(CompileCostTest, AblationReportCarriesAndRendersIt) {
  std::vector<json> records = Records();
  for (json& r : records) {
    json samples = json::array();
    for (int i = 0; i < 8; ++i) samples.push_back(1e6 * (r["kind"] == "baseline" ? 1.0 : 1.2) * (1 + 0.001 * i));
    r["samples"] = {{"kernel_ns", samples}, {"kernel_copy_ns", samples}, {"wall_ns", samples}};
    r["passes"] = json::array();
  }
  records[3]["passes"] = {"fusion"};
  ordered_json report = BuildAblationReport(json::object(), TypedRecords(records));
  ASSERT_TRUE(report.contains("compile_cost"));
  const AblationCompileCost cost = json(report["compile_cost"]).get<AblationCompileCost>();
  EXPECT_DOUBLE_EQ(Row(cost, "disable fusion").pass_ms.value(), 12);
  EXPECT_THAT(RenderAblationMarkdown(report), HasSubstr("## Compile cost against run-time benefit"));
  EXPECT_THAT(RenderAblationHtml(report), HasSubstr("<h2>Compile cost against run-time benefit</h2>"));
}

// report.json's "compile_cost" reads back to the same struct and the same
// bytes: numbers as computed (1.0 stays 1.0), nulls where unknown, the
// persistent-cache count only where a sweep had one.
TEST(CompileCostTest, RoundTripsThroughJson) {
  std::vector<json> records = Records();
  records[0]["kernel_cache"] = {{"hits", 2}, {"misses", 10}, {"persistent_hits", 6}};
  const AblationCompileCost cost = BuildCompileCost(TypedRecords(records), Variants());
  const ordered_json written = cost;
  const AblationCompileCost read = json(written).get<AblationCompileCost>();
  EXPECT_EQ(ordered_json(read).dump(), written.dump());
  EXPECT_EQ(written["rows"][0]["pass_runs"].dump(), "2.0");
  EXPECT_EQ(written["baseline"].back().dump(), "3");  // records_with_pass_times, last
}

TEST(CompileCostTest, ReadsOlderRowsAndRefusesMistypedKeys) {
  // A row from before "clear_effect": significance alone decides it.
  json cost = {{"rows", {{{"variant", "disable a"}, {"passes", {"a"}}, {"significant", true}}}}};
  AblationCompileCost read = cost.get<AblationCompileCost>();
  ASSERT_EQ(read.rows.size(), 1u);
  EXPECT_TRUE(read.rows[0].clear_effect);
  EXPECT_FALSE(read.rows[0].pass_ms.has_value());
  EXPECT_EQ(read.rows[0].PassesLabel(), "a");
  cost["rows"][0]["pass_ms"] = "12 ms";
  try {
    (void)cost.get<AblationCompileCost>();
    ADD_FAILURE() << "a string pass_ms was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("pass_ms"));
  }
}

}  // namespace
}  // namespace passlab
