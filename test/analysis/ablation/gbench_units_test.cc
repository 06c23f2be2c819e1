// The Google Benchmark rendering of a report (gbench.json): one time unit
// per file that keeps every time >= 1 (Google Benchmark's compare.py prints
// 0.15 ms as 0), and a context date even when the manifest has none.
#include <gtest/gtest.h>

#include "analysis/ablation/report.h"

namespace passlab {
namespace {

AblationReport Report(std::vector<double> baseline_ns, std::vector<double> variant_ns) {
  AblationReport r;
  r.manifest = {{"machine", {{"cores", 2}}}};
  r.baseline.samples_ns = std::move(baseline_ns);
  AblationReportVariant v;
  v.name = "disable dce";
  v.samples_ns = std::move(variant_ns);
  r.variants.push_back(std::move(v));
  return r;
}

TEST(GbenchUnitsTest, SubMillisecondStepsAreInMicroseconds) {
  nlohmann::ordered_json g = RenderAblationGbench(Report({150000, 152000}, {149000, 151000}));
  ASSERT_FALSE(g["benchmarks"].empty());
  for (const auto& b : g["benchmarks"]) {
    EXPECT_EQ(b["time_unit"], "us") << b.dump();
    if (b["run_type"] == "iteration") EXPECT_GE(b["real_time"].get<double>(), 1.0);
  }
  EXPECT_DOUBLE_EQ(g["benchmarks"][0]["real_time"].get<double>(), 150.0);
  // No date in the manifest: the rendering's own, ISO 8601 in UTC.
  const std::string date = g["context"]["date"];
  ASSERT_EQ(date.size(), 20u) << date;
  EXPECT_EQ(date[10], 'T');
  EXPECT_EQ(date.back(), 'Z');
}

TEST(GbenchUnitsTest, TheSmallestSampleChoosesTheUnitForTheWholeFile) {
  // A 5 ms baseline beside a 900 ns variant: every entry in ns.
  nlohmann::ordered_json g = RenderAblationGbench(Report({5e6, 5.1e6}, {900, 950}));
  for (const auto& b : g["benchmarks"]) EXPECT_EQ(b["time_unit"], "ns");
  // Seconds-long steps in seconds; the manifest's date is kept.
  AblationReport r = Report({2.5e9, 2.6e9}, {2.4e9, 2.45e9});
  r.manifest["environment"] = {{"date", "2026-11-27T10:00:00Z"}};
  nlohmann::ordered_json s = RenderAblationGbench(r);
  for (const auto& b : s["benchmarks"]) EXPECT_EQ(b["time_unit"], "s");
  EXPECT_DOUBLE_EQ(s["benchmarks"][0]["real_time"].get<double>(), 2.5);
  EXPECT_EQ(s["context"]["date"], "2026-11-27T10:00:00Z");
}

}  // namespace
}  // namespace passlab
