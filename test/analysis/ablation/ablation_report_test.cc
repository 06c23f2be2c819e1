// The typed ablation report (analysis/ablation/ablation_report.h): the
// committed version-1 reports of docs/results/ read and written back
// unchanged, the version key, kept unknown keys, and errors that name the
// key.
#include "analysis/ablation/ablation_report.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace passlab {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;
using ::testing::HasSubstr;

std::string Source(const std::string& path) { return std::string(PASSLAB_SOURCE_DIR) + "/" + path; }

Json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

// Every committed report: read as version 1, written back with only the
// version added (numbers compared by value: 12 == 12.0).
TEST(AblationReportDocumentTest, ReadsAndRewritesTheCommittedVersionOneReports) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(Source("docs/results"))) {
    const std::filesystem::path path = entry.path() / "report.json";
    if (!std::filesystem::exists(path)) continue;
    ++files;
    SCOPED_TRACE(path.string());
    absl::StatusOr<AblationReport> report = ReadAblationReport(path.string());
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->schema_version, 1);
    const Json original = ReadJson(path.string());
    EXPECT_EQ(report->variants.size(), original["variants"].size());
    EXPECT_EQ(report->summary.variants, static_cast<int64_t>(original["variants"].size()));
    EXPECT_TRUE(report->extra.empty()) << report->extra.dump();
    Json written = Json(OrderedJson(*report));
    EXPECT_EQ(written["schema_version"], kAblationReportSchemaVersion);
    written.erase("schema_version");
    EXPECT_EQ(written, original);
  }
  EXPECT_EQ(files, 2);
}

TEST(AblationReportDocumentTest, ReadsTheFieldsOfACommittedReport) {
  absl::StatusOr<AblationReport> report =
      ReadAblationReport(Source("docs/results/h200-xla-resnet50/report.json"));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->metric, "kernel_ns");
  EXPECT_EQ(report->correction, "holm");
  const AblationReportVariant* v = report->FindVariant("disable conv-rewriter");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->kind, "disable-one");
  EXPECT_EQ(v->passes, std::vector<std::string>{"conv-rewriter"});
  EXPECT_EQ(v->outcome, "wrong-result");
  EXPECT_EQ(v->pairs, 12);
  EXPECT_TRUE(v->CheckFailed());
  EXPECT_FALSE(v->kernel_count.has_value());  // null in the file
  EXPECT_FALSE(v->kernel_diff_counts.has_value());
  EXPECT_EQ(report->summary.outcomes.at("crash"), 5);
  EXPECT_FALSE(report->aa.copies.empty());
  EXPECT_EQ(report->FindVariant("no such variant"), nullptr);
}

AblationReport SmallReport() {
  AblationReport r;
  r.manifest = OrderedJson{{"pipeline", "gpu"}, {"device", "cpu"}};
  r.baseline.median_ns = 1000;
  r.baseline.samples_ns = {1000, 1001};
  r.baseline.kernels.push_back({.name = "fusion.1", .kind = "kernel", .detail = "loop", .ns = 500, .calls = 1});
  AblationReportVariant v;
  v.name = "disable algsimp";
  v.kind = "disable-one";
  v.passes = {"algsimp"};
  v.outcome = "slower";
  v.ratio = 1.25;
  v.pairs = 4;
  v.comparison = "paired-rounds";
  v.kernel_diff.push_back({.name = "fusion.1", .baseline_ns = 500, .variant_ns = 700.5, .change = "changed", .host = true});
  v.kernel_diff_counts = AblationKernelDiffCounts{.changed = 1};
  v.kernel_times_ns = std::map<std::string, std::optional<double>>{{"fusion.1", 700.5}, {"fusion.2", std::nullopt}};
  v.check = OrderedJson{{"ok", false}, {"shares_baseline_mismatch", true}};
  r.variants.push_back(v);
  r.summary.variants = 1;
  r.summary.outcomes["slower"] = 1;
  r.warnings = {"a warning"};
  return r;
}

TEST(AblationReportDocumentTest, WritesTheVersionAfterTheSchemaAndEveryKeyOfARow) {
  const OrderedJson j = SmallReport();
  auto it = j.begin();
  EXPECT_EQ(it.key(), "schema");
  EXPECT_EQ((++it).key(), "schema_version");
  EXPECT_EQ(j["schema_version"], kAblationReportSchemaVersion);
  const OrderedJson& v = j["variants"][0];
  EXPECT_EQ(v["disabled"], v["passes"]);
  EXPECT_TRUE(v["p_value"].is_null());  // unknown: null, not absent
  EXPECT_TRUE(v["kernel_diff"][0]["host"].get<bool>());
  EXPECT_TRUE(v["kernel_times_ns"]["fusion.2"].is_null());
  EXPECT_TRUE(j["baseline"]["median_ns"].is_number_integer());  // integral ns
  EXPECT_EQ(j["summary"]["outcomes"].size(), 10u);             // every outcome
  EXPECT_EQ(j["summary"]["outcomes"].begin().key(), "slower");
}

// A hand-written or older report: only the schema and the rows' names are
// needed; the rest reads as defaults ("disabled" stands for "passes").
TEST(AblationReportDocumentTest, ReadsAMinimalReport) {
  const Json j = Json::parse(R"({"schema": "passlab.ablation/1", "baseline": {"median_ns": 100},
      "variants": [{"name": "disable x", "disabled": ["x"], "outcome": "crash", "ratio": null}]})");
  absl::StatusOr<AblationReport> r = ParseAblationReport(j, "x");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->schema_version, 1);
  EXPECT_EQ(r->baseline.median_ns, 100);
  ASSERT_EQ(r->variants.size(), 1u);
  EXPECT_EQ(r->variants[0].passes, std::vector<std::string>{"x"});
  EXPECT_EQ(r->variants[0].status, "ok");
  EXPECT_FALSE(r->variants[0].ratio.has_value());
  EXPECT_FALSE(r->compile_cost.has_value());
  EXPECT_TRUE(r->variants[0].extra.empty());  // "disabled" is known
}

TEST(AblationReportDocumentTest, RoundTripsKeepingKeyOrderAndUnknownKeys) {
  OrderedJson j = SmallReport();
  j["future_field"] = {{"x", 1}};
  j["variants"][0]["future_column"] = 3;
  absl::StatusOr<AblationReport> back = ParseAblationReport(j, "report.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->schema_version, kAblationReportSchemaVersion);
  EXPECT_EQ(back->extra["future_field"]["x"], 1);
  EXPECT_EQ(back->variants[0].extra["future_column"], 3);
  EXPECT_TRUE(back->variants[0].SharesBaselineMismatch());
  EXPECT_EQ(OrderedJson(*back).dump(), j.dump());
}

TEST(AblationReportDocumentTest, RefusesADocumentThatIsNoReport) {
  Json j = Json(OrderedJson(SmallReport()));
  j["variants"][0].erase("name");
  absl::StatusOr<AblationReport> r = ParseAblationReport(j, "dir/report.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("dir/report.json: report key 'variants[0]': variant has no 'name'"));

  j = Json(OrderedJson(SmallReport()));
  j["variants"][0]["kernel_diff"][0]["variant_ns"] = "fast";
  r = ParseAblationReport(j, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("key 'kernel_diff[0]': kernel change key 'variant_ns' must be a number, not string"));

  j = Json(OrderedJson(SmallReport()));
  j["threshold"] = "1%";
  r = ParseAblationReport(j, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("key 'threshold' must be a number, not string"));

  j = Json(OrderedJson(SmallReport()));
  j["schema"] = "passlab.ablation-compare/1";
  r = ParseAblationReport(j, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("not passlab.ablation/N"));

  EXPECT_FALSE(ParseAblationReport(Json::array(), "x").ok());
  EXPECT_EQ(ReadAblationReport("/nonexistent/report.json").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace passlab
