// passlab ablate --compare: sweeps side by side (issue 29 item 3; how a
// gpu-2021 sweep is read beside a gpu one, issue 24 item 4).
#include "analysis/ablation/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace passlab {
namespace {

using Json = nlohmann::json;

AblationReportVariant Variant(const std::string& name, double ratio, bool significant, const std::string& outcome = "") {
  AblationReportVariant v;
  v.name = name;
  v.ratio = ratio;
  v.ci_low = ratio - 0.01;
  v.ci_high = ratio + 0.01;
  v.significant = significant;
  v.outcome = outcome.empty() ? (significant ? (ratio > 1 ? "slower" : "faster") : "no-change") : outcome;
  return v;
}

AblationReport Report(const std::string& pipeline, const std::string& device,
                      std::vector<AblationReportVariant> variants) {
  AblationReport r;
  r.manifest = {{"device", device}, {"model", {{"batch", 2}, {"name", "resnet18"}}}, {"pipeline", pipeline}};
  r.baseline.median_ns = 2.0e6;
  r.variants = std::move(variants);
  return r;
}

std::string ReportFile(const AblationReport& report) { return nlohmann::ordered_json(report).dump(); }

TEST(SpearmanTest, KnownValues) {
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ties get average ranks: x ranks 1,2.5,2.5,4; y ranks 1,2,3,4.
  // rho = cov / sqrt(var var) = 4.5 / sqrt(4.5 * 5) = 0.9487.
  EXPECT_NEAR(SpearmanCorrelation({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(4.5 * 5), 1e-12);
  EXPECT_TRUE(std::isnan(SpearmanCorrelation({1, 2}, {1, 2})));
  EXPECT_TRUE(std::isnan(SpearmanCorrelation({1, 1, 1}, {1, 2, 3})));
}

TEST(CompareTest, ThreeSweepsSideBySide) {
  AblationReport today = Report("gpu", "cpu",
                      {Variant("disable priority-fusion", 1.50, true), Variant("disable algsimp", 1.10, true),
                       Variant("disable dce", 1.00, false), Variant("disable cse", 0.97, true)});
  AblationReport seed = Report("gpu-2021", "cpu",
                     {Variant("disable fusion", 1.40, true), Variant("disable algsimp", 1.20, true),
                      Variant("disable dce", 1.01, false), Variant("disable cse", 1.02, true)});
  AblationReport gpu = Report("gpu", "cuda",
                    {Variant("disable priority-fusion", 1.80, true), Variant("disable algsimp", 1.05, true),
                     Variant("disable dce", 0.99, false), Variant("disable cse", 1.00, false, "wrong-result")});
  nlohmann::ordered_json c = CompareAblationReports({today, seed, gpu}, {"today", "2021", "cuda"});
  EXPECT_EQ(c["schema"], "passlab.ablation-compare/1");
  ASSERT_EQ(c["sweeps"].size(), 3u);
  // Every variant of any sweep is a row; a sweep without it has null there.
  ASSERT_EQ(c["variants"].size(), 5u);
  EXPECT_EQ(c["variants"][0]["name"], "disable priority-fusion");  // largest effect first (1.8)
  EXPECT_TRUE(c["variants"][0]["sweeps"][1].is_null());
  // 2021 against today: algsimp (+,+) and cse (-,+) are significant in
  // either; dce is in neither. Common: algsimp, dce, cse.
  const auto& a1 = c["agreement"][0];
  EXPECT_EQ(a1["sweep"], 1);
  EXPECT_EQ(a1["common_variants"], 3);
  EXPECT_EQ(a1["significant_in_either"], 2);
  EXPECT_EQ(a1["same_sign"], 1);
  ASSERT_EQ(a1["disagreeing"].size(), 1u);
  EXPECT_EQ(a1["disagreeing"][0], "disable cse");
  // ratios today (1.10, 1.00, 0.97) vs 2021 (1.20, 1.01, 1.02): ranks
  // (3,2,1) vs (3,1,2): rho = 0.5.
  EXPECT_NEAR(a1["spearman"].get<double>(), 0.5, 1e-12);
  // cuda against today: four common variants.
  const auto& a2 = c["agreement"][1];
  EXPECT_EQ(a2["common_variants"], 4);
  // The manifests differ in pipeline and device; the model is the same.
  std::vector<std::string> fields;
  for (const auto& d : c["manifest_differences"]) fields.push_back(d["field"]);
  EXPECT_EQ(fields, (std::vector<std::string>{"device", "pipeline"}));
  std::string md = RenderComparisonMarkdown(c);
  EXPECT_NE(md.find("| disable priority-fusion | **+50.0% [+49.0, +51.0]** | – | **+80.0% [+79.0, +81.0]** |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("WRONG"), std::string::npos);
  EXPECT_NE(md.find("opposite: disable cse"), std::string::npos) << md;
  EXPECT_NE(md.find("- pipeline: `gpu` / `gpu-2021` / `gpu`"), std::string::npos) << md;
}

TEST(CompareTest, DirectoriesAndErrors) {
  std::filesystem::path root = std::filesystem::temp_directory_path() / "passlab_compare_test";
  std::filesystem::remove_all(root);
  for (const char* d : {"a", "b", "bad"}) std::filesystem::create_directories(root / d);
  std::ofstream(root / "a" / "report.json") << ReportFile(Report("gpu", "cpu", {Variant("disable dce", 1.0, false)}));
  std::ofstream(root / "b" / "report.json")
      << ReportFile(Report("gpu-2021", "cpu", {Variant("disable dce", 1.1, true)}));
  std::ofstream(root / "bad" / "report.json") << "{\"schema\": \"something else\"}";
  absl::StatusOr<nlohmann::ordered_json> ok = CompareAblationSweeps({(root / "a").string(), (root / "b").string()});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)["sweeps"][0]["label"], "gpu resnet18 cpu");
  EXPECT_EQ((*ok)["sweeps"][1]["label"], "gpu-2021 resnet18 cpu");
  absl::StatusOr<nlohmann::ordered_json> one = CompareAblationSweeps({(root / "a").string()});
  EXPECT_FALSE(one.ok());
  absl::StatusOr<nlohmann::ordered_json> missing =
      CompareAblationSweeps({(root / "a").string(), (root / "nowhere").string()});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("nowhere/report.json"), std::string::npos);
  absl::StatusOr<nlohmann::ordered_json> bad = CompareAblationSweeps({(root / "a").string(), (root / "bad").string()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("not a passlab ablation report"), std::string::npos);
  // Two sweeps labelled alike get their directory names.
  absl::StatusOr<nlohmann::ordered_json> same = CompareAblationSweeps({(root / "a").string(), (root / "a").string()});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*same)["sweeps"][0]["label"], "a (gpu resnet18 cpu)");
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace passlab
