// `passlab run --format json`'s typed report (analysis/run_report.h).
#include "analysis/run_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace passlab {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

RunReport Sample() {
  RunReport r;
  r.device = "cpu";
  r.pipeline = "gpu";
  r.repeats = 3;
  r.optimize_ms = 1.5;
  r.compile_ms = 2.25;
  r.kernel_ms = {1, 2, 3};
  r.wall_ms = {2, 3, 4};
  r.kernel_ms_median = 2;
  r.wall_ms_median = 3;
  r.arena_bytes = 4096;
  r.kernels.push_back({.name = "fusion", .computation = "main", .kind = "kernel", .detail = "loop", .calls = 1,
                       .total_ns = 10, .median_ns = 10, .share = 1, .bytes = 8, .flops = 4});
  r.inputs = "random arguments (seed 1)";
  r.peak_bytes = 1024;
  r.check = RunReportCheck{true, "outputs match", "ok"};
  return r;
}

TEST(RunReportTest, RoundTrips) {
  const Json j = Sample();
  EXPECT_EQ(j["schema_version"], kRunReportSchemaVersion);
  EXPECT_FALSE(j.contains("expect"));
  EXPECT_EQ(j["kernels"][0]["estimate_ns"], -1);
  EXPECT_EQ(Json(j.get<RunReport>()), j);
}

// A report printed before the version field (version 1) reads; unknown keys stay.
TEST(RunReportTest, ReadsVersionOne) {
  Json j = Sample();
  j.erase("schema_version");
  j["newer_field"] = 7;
  absl::StatusOr<RunReport> r = ParseRunReport(j, "run.json");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->schema_version, 1);
  EXPECT_EQ(r->extra["newer_field"], 7);
  EXPECT_EQ(r->kernels.at(0).name, "fusion");
}

TEST(RunReportTest, MissingKeyIsNamed) {
  Json j = Sample();
  j["kernels"][0].erase("total_ns");
  absl::StatusOr<RunReport> r = ParseRunReport(j, "run.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("run.json"));
  EXPECT_THAT(r.status().message(), HasSubstr("kernel has no 'total_ns'"));
}

}  // namespace
}  // namespace passlab
