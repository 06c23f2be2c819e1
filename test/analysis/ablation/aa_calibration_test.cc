// A/A calibration: the plan's copies, the report's A/A band (measured by the
// copies, or given, and applied to the other variants), the calibration
// file, and a simulation of the whole decision procedure on synthetic
// in-process samples (a 2% slowdown among A/A copies).
#include "analysis/ablation/aa_calibration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "analysis/ablation/plan.h"
#include "analysis/ablation/report.h"
#include "test/analysis/ablation/typed_records.h"

namespace passlab {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;
using ::testing::HasSubstr;

constexpr double kBaseNs = 5e6;

json Manifest() {
  return {{"pipeline", "gpu"},
          {"device", "cpu"},
          {"threads", 1},
          {"model", {{"name", "mlp"}, {"options", {{"batch", 2}}}}},
          {"machine", {{"cpu", "AMD EPYC"}, {"cores", 2}, {"host", "vm"}}}};
}

// One record timed beside its in-process control: `steps` steps, the
// control first in every second one, each step's time with a log-normal
// noise of `sigma` (independently for variant and control) and the
// variant `effect` times slower.
json InProcessRecord(const std::string& name, const std::string& kind, int steps, double effect, double sigma,
                     std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, sigma);
  json variant = json::array(), control = json::array(), first = json::array();
  for (int i = 0; i < steps; ++i) {
    const double machine = 1 + 0.05 * std::sin(i / 3.0);  // drift both see
    variant.push_back(kBaseNs * machine * effect * std::exp(noise(rng)));
    control.push_back(kBaseNs * machine * std::exp(noise(rng)));
    first.push_back(i % 2 == 1);
  }
  return {{"variant", name},
          {"kind", kind},
          {"passes", json::array()},
          {"block", 0},
          {"status", "ok"},
          {"samples", {{"kernel_ns", variant}}},
          {"control_samples", {{"kernel_ns", control}, {"control_first", first}}}};
}

// A sweep of `copies` A/A copies, plus (when `delayed`) one variant 2%
// slower, each with `steps` steps.
std::vector<json> Sweep(int copies, bool delayed, int steps, double sigma, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<json> records = {InProcessRecord("baseline", "baseline", steps, 1.0, sigma, rng)};
  records[0].erase("control_samples");
  for (const AblationVariant& v : PlanAaCopies(copies)) {
    records.push_back(InProcessRecord(v.name, v.kind, steps, 1.0, sigma, rng));
  }
  if (delayed) records.push_back(InProcessRecord("slow", "file", steps, 1.02, sigma, rng));
  return records;
}

const ordered_json& Variant(const ordered_json& report, const std::string& name) {
  for (const ordered_json& v : report["variants"]) {
    if (v["name"] == name) return v;
  }
  ADD_FAILURE() << "no variant " << name;
  static ordered_json none;
  return none;
}

TEST(AaPlanTest, CopiesAreTheUnfilteredPipeline) {
  std::vector<AblationVariant> plan = PlanAaCopies(3);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].name, "aa-copy-1");
  EXPECT_EQ(plan[2].name, "aa-copy-3");
  for (const AblationVariant& v : plan) {
    EXPECT_EQ(v.kind, kAaVariantKind);
    EXPECT_TRUE(v.disable.empty());
    EXPECT_TRUE(v.enable_only.empty());
    EXPECT_TRUE(v.passes.empty());
    EXPECT_FALSE(v.required);
  }
}

TEST(AaReportTest, CopiesMeasureTheBandAndADelayIsDetected) {
  const std::vector<json> records = Sweep(6, /*delayed=*/true, 24, 0.004, 7);
  ordered_json report = BuildAblationReport(Manifest(), TypedRecords(records));
  const ordered_json& aa = report["aa"];
  ASSERT_EQ(aa["copies"].size(), 6u);
  double largest = 0;
  for (const ordered_json& c : aa["copies"]) {
    largest = std::max(largest, std::abs(c["ratio"].get<double>() - 1));
    EXPECT_FALSE(c["significant"].get<bool>()) << c.dump();
    EXPECT_EQ(Variant(report, c["name"])["outcome"], "no-change");
  }
  EXPECT_DOUBLE_EQ(aa["measured_band"].get<double>(), largest);
  EXPECT_DOUBLE_EQ(aa["band"].get<double>(), largest);
  EXPECT_LT(largest, 0.01);
  EXPECT_EQ(aa["band_source"], "this sweep's 6 A/A copies");
  EXPECT_GE(aa["max_ci_deviation"].get<double>(), largest);
  EXPECT_EQ(Variant(report, "slow")["outcome"], "slower");
  // Every rendering says which band was used.
  EXPECT_THAT(RenderAblationMarkdown(report), HasSubstr("this sweep's 6 A/A copies"));
  EXPECT_THAT(RenderAblationMarkdown(report), HasSubstr("## A/A calibration"));
  EXPECT_THAT(RenderAblationHtml(report), HasSubstr("A/A calibration"));
  EXPECT_THAT(RenderAblationHtml(report), HasSubstr("this sweep&#39;s 6 A/A copies"));
}

TEST(AaReportTest, AChangeMustExceedTheBandToo) {
  const std::vector<json> records = Sweep(0, /*delayed=*/true, 24, 0.001, 3);
  // No copies and no calibration: the threshold alone.
  ordered_json plain = BuildAblationReport(Manifest(), TypedRecords(records));
  EXPECT_TRUE(plain["aa"]["band"].is_null());
  EXPECT_THAT(plain["aa"]["band_source"].get<std::string>(), HasSubstr("none"));
  EXPECT_EQ(Variant(plain, "slow")["outcome"], "slower");
  // A calibration's band of 3%: the 2% change no longer counts.
  ReportOptions calibrated;
  calibrated.aa_band = 0.03;
  calibrated.aa_band_source = "calibration file /x (6 A/A copies in /sweep)";
  ordered_json banded = BuildAblationReport(Manifest(), TypedRecords(records), calibrated);
  EXPECT_DOUBLE_EQ(banded["aa"]["band"].get<double>(), 0.03);
  EXPECT_EQ(banded["aa"]["band_source"], calibrated.aa_band_source);
  EXPECT_FALSE(Variant(banded, "slow")["significant"].get<bool>());
  EXPECT_EQ(Variant(banded, "slow")["outcome"], "no-change");
  EXPECT_THAT(RenderAblationMarkdown(banded), HasSubstr("calibration file /x"));
}

TEST(AaReportTest, OwnCopiesBeatACalibrationUnlessTheBandIsForced) {
  const std::vector<json> records = Sweep(4, /*delayed=*/true, 24, 0.002, 11);
  ReportOptions calibrated;
  calibrated.aa_band = 0.05;
  calibrated.aa_band_source = "calibration file /x";
  ordered_json own = BuildAblationReport(Manifest(), TypedRecords(records), calibrated);
  EXPECT_EQ(own["aa"]["band_source"], "this sweep's 4 A/A copies");
  EXPECT_EQ(Variant(own, "slow")["outcome"], "slower");
  calibrated.aa_band_forced = true;
  calibrated.aa_band_source = "--aa-band";
  ordered_json forced = BuildAblationReport(Manifest(), TypedRecords(records), calibrated);
  EXPECT_EQ(forced["aa"]["band_source"], "--aa-band");
  EXPECT_EQ(Variant(forced, "slow")["outcome"], "no-change");
  ReportOptions off;
  off.no_aa_band = true;
  ordered_json none = BuildAblationReport(Manifest(), TypedRecords(records), off);
  EXPECT_TRUE(none["aa"]["band"].is_null());
  EXPECT_TRUE(none["aa"]["measured_band"].is_number());  // still measured and shown
}

TEST(AaReportTest, ACopySlowedDownOnPurposeIsJudgedNotCalibratedWith) {
  std::vector<json> records = Sweep(6, /*delayed=*/false, 24, 0.004, 5);
  std::mt19937_64 rng(99);
  json slowed = InProcessRecord("aa-copy-7", kAaVariantKind, 24, 1.02, 0.004, rng);
  slowed["injected_delay"] = 0.02;  // passlab ablate --test-inject-delay aa-copy-7=2%
  records.push_back(slowed);
  ordered_json report = BuildAblationReport(Manifest(), TypedRecords(records));
  EXPECT_EQ(report["aa"]["copies"].size(), 6u);
  EXPECT_LT(report["aa"]["band"].get<double>(), 0.01);
  EXPECT_EQ(Variant(report, "aa-copy-7")["outcome"], "slower");
  EXPECT_DOUBLE_EQ(Variant(report, "aa-copy-7")["injected_delay"].get<double>(), 0.02);
}

// The decision procedure on 100 simulated sweeps of 6 A/A copies and one
// variant 2% slower (24 steps each, 0.5% noise per step on both sides): the
// slowdown must be found in at least 95 of them, and across all 600 A/A
// copies no more than 5% may come out significant.
TEST(AaReportTest, SimulatedTwoPercentDelayIsDetectedWithoutFalseAlarms) {
  int detected = 0, false_alarms = 0, copies = 0;
  ReportOptions options;
  options.bootstrap_resamples = 200;  // the verdict comes from the signed-rank test
  for (int trial = 0; trial < 100; ++trial) {
    ordered_json report = BuildAblationReport(Manifest(), TypedRecords(Sweep(6, true, 24, 0.005, 1000 + trial)), options);
    detected += Variant(report, "slow")["outcome"] == "slower";
    for (const ordered_json& c : report["aa"]["copies"]) {
      ++copies;
      false_alarms += c["significant"].get<bool>();
    }
  }
  EXPECT_GE(detected, 95);
  EXPECT_EQ(copies, 600);
  EXPECT_LE(false_alarms, 30);
}

class AaCalibrationFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("aa_calibration_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    path_ = (dir_ / "sub" / "aa_calibration.json").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(AaCalibrationFileTest, StoresLooksUpAndReplacesByKey) {
  const json key = AaCalibrationKey(Manifest().get<AblationManifest>());
  EXPECT_EQ(key["model"]["name"], "mlp");
  EXPECT_EQ(key["machine"]["cpu"], "AMD EPYC");
  EXPECT_EQ(key["device"]["device"], "cpu");
  EXPECT_EQ(key["pipeline"]["name"], "gpu");
  // A missing file holds nothing.
  absl::StatusOr<std::optional<AaCalibrationEntry>> none = LookupAaBand(path_, key);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());

  AaCalibrationEntry entry{.key = key, .band = 0.004, .copies = 6, .sweep_dir = "/s1", .measured_at = "t1"};
  ASSERT_TRUE(StoreAaBand(path_, entry).ok());
  json other_manifest = Manifest();
  other_manifest["model"]["name"] = "resnet18";
  AaCalibrationEntry other = entry;
  other.key = AaCalibrationKey(other_manifest.get<AblationManifest>());
  other.band = 0.02;
  ASSERT_TRUE(StoreAaBand(path_, other).ok());
  entry.band = 0.003;
  entry.sweep_dir = "/s2";
  ASSERT_TRUE(StoreAaBand(path_, entry).ok());  // replaces the first

  absl::StatusOr<std::optional<AaCalibrationEntry>> found = LookupAaBand(path_, key);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_DOUBLE_EQ((*found)->band, 0.003);
  EXPECT_EQ((*found)->sweep_dir, "/s2");
  EXPECT_THAT(DescribeAaCalibration(path_, **found), HasSubstr("6 A/A copies in /s2"));
  found = LookupAaBand(path_, other.key);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_DOUBLE_EQ((*found)->band, 0.02);
  std::ifstream in(path_);
  EXPECT_EQ(json::parse(in)["entries"].size(), 2u);

  // Another machine, device or pipeline is another key.
  json elsewhere = Manifest();
  elsewhere["threads"] = 2;
  EXPECT_FALSE(LookupAaBand(path_, AaCalibrationKey(elsewhere.get<AblationManifest>()))->has_value());
}

TEST_F(AaCalibrationFileTest, ForeignFileIsAClearError) {
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  std::ofstream(path_) << "{\"not\": \"a calibration\"}";
  absl::StatusOr<std::optional<AaCalibrationEntry>> r = LookupAaBand(path_, AaCalibrationKey(Manifest().get<AblationManifest>()));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("is not an A/A calibration file"));
  EXPECT_FALSE(StoreAaBand(path_, AaCalibrationEntry{.key = AaCalibrationKey(Manifest().get<AblationManifest>())}).ok());
}

}  // namespace
}  // namespace passlab
