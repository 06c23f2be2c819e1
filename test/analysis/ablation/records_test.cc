// The typed sweep documents (analysis/ablation/records.h): round trips, the
// committed version-1 files of docs/results/ read as they are, and errors
// that name the key.
#include "analysis/ablation/records.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace passlab {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

std::string Source(const std::string& path) { return std::string(PASSLAB_SOURCE_DIR) + "/" + path; }

AblationRecord FullRecord() {
  AblationRecord r;
  r.variant = "disable algsimp";
  r.kind = "disable-one";
  r.passes = std::vector<std::string>{"algsimp"};
  r.disable = "algsimp";
  r.enable_only = "";
  r.block = 3;
  r.status = "ok";
  r.compile_ms = 12.5;
  r.check = Json{{"ok", true}, {"message", "outputs match"}};
  r.samples = AblationSamples{.kernel_ns = {100, 101.5},
                              .wall_ns = {200, 201},
                              .kernel_cpu_ns = {99, 100},
                              .kernel_steps_ns = {{"fusion.1", {60, 61.5}}, {"custom-call.2", {40, 40}}}};
  r.control_samples = AblationSamples{.kernel_ns = {99, 100}, .control_first = {false, true}};
  r.kernels = std::vector<AblationKernel>{{.name = "fusion.1", .kind = "kernel", .detail = "loop", .calls = 2, .ns = 50}};
  r.peak_rss_bytes = 1 << 20;
  r.task = 1;
  r.plan_id = "abc";
  r.extra = Json{{"future_field", {{"x", 1}}}};
  return r;
}

TEST(AblationRecordsTest, RecordRoundTrips) {
  const AblationRecord r = FullRecord();
  const Json j = r;
  EXPECT_EQ(j["schema_version"], kAblationSchemaVersion);
  EXPECT_EQ(j["future_field"]["x"], 1);  // unknown keys are written back
  // Integral nanoseconds stay JSON integers, as the worker sent them.
  EXPECT_TRUE(j["samples"]["kernel_ns"][0].is_number_integer());
  EXPECT_FALSE(j["samples"].contains("kernel_copy_ns"));  // empty: absent
  const AblationRecord back = j.get<AblationRecord>();
  EXPECT_EQ(Json(back), j);
  EXPECT_EQ(back.samples->kernel_ns, r.samples->kernel_ns);
  EXPECT_EQ(back.samples->kernel_steps_ns, r.samples->kernel_steps_ns);
  EXPECT_EQ(back.samples->kernel_cpu_ns, r.samples->kernel_cpu_ns);
  EXPECT_EQ(back.control_samples->control_first, r.control_samples->control_first);
  EXPECT_EQ(back.kernels->at(0).calls, 2);
  EXPECT_EQ(back.task, 1);
  EXPECT_FALSE(back.error.has_value());
}

TEST(AblationRecordsTest, ManifestRoundTrips) {
  AblationManifest m;
  m.pipeline = "gpu";
  m.device = "cpu";
  m.command = "passlab ablate --model mlp";
  m.repeats = 10;
  m.seed = 1;
  m.test_inject_delay = std::map<std::string, double>{{"disable dce", 0.05}};
  m.extra = Json{{"model", {{"name", "mlp"}}}};
  const Json j = m;
  EXPECT_EQ(j["schema_version"], kAblationSchemaVersion);
  EXPECT_EQ(j["model"]["name"], "mlp");
  EXPECT_EQ(Json(j.get<AblationManifest>()), j);
}

// The committed sweeps were written before the version field: version 1.
TEST(AblationRecordsTest, ReadsVersionOneSweepOfPasslab) {
  const std::string dir = Source("docs/results/h200-passlab-resnet50-gpu");
  absl::StatusOr<std::vector<AblationRecord>> records = ReadAblationRecordLines(dir + "/results.jsonl");
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 25u);
  int baselines = 0;
  for (const AblationRecord& r : *records) {
    EXPECT_EQ(r.schema_version, 1);
    EXPECT_EQ(r.StatusOrOk(), "ok") << r.variant;
    ASSERT_TRUE(r.samples.has_value()) << r.variant;
    EXPECT_FALSE(r.samples->kernel_ns.empty());
    EXPECT_TRUE(r.extra.empty()) << r.variant << ": " << r.extra.dump();  // every key is known
    baselines += r.kind == "baseline";
  }
  EXPECT_EQ(baselines, 1);
  // Reading and writing loses nothing: the same keys and values (plus the version).
  std::ifstream in(dir + "/results.jsonl");
  std::string line;
  std::getline(in, line);
  Json original = Json::parse(line);
  Json rewritten = (*records)[0];
  rewritten.erase("schema_version");
  EXPECT_EQ(rewritten, original);

  absl::StatusOr<AblationManifest> manifest = ReadAblationManifest(dir + "/manifest.json");
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(manifest->schema_version, 1);
  EXPECT_EQ(manifest->pipeline, "gpu");
  EXPECT_EQ(manifest->device, "cuda");
  EXPECT_EQ(manifest->repeats, 24);
  EXPECT_EQ(manifest->extra["model"]["name"], "resnet50");
}

// The XLA sweep's records (bench/xla_ablation.py) have fewer keys and some failures.
TEST(AblationRecordsTest, ReadsVersionOneSweepOfXla) {
  const std::string dir = Source("docs/results/h200-xla-resnet50");
  absl::StatusOr<std::vector<AblationRecord>> records = ReadAblationRecordLines(dir + "/results.jsonl");
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->size(), 31u);
  int failed = 0;
  for (const AblationRecord& r : *records) failed += r.StatusOrOk() != "ok" && r.error.has_value();
  EXPECT_EQ(failed, 7);
  absl::StatusOr<AblationManifest> manifest = ReadAblationManifest(dir + "/manifest.json");
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(manifest->extra["schema"].is_string(), true);
}

TEST(AblationRecordsTest, MissingKeyNamesFileLineAndKey) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "records_missing_key";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "results.jsonl").string();
  {
    std::ofstream out(path);
    out << Json(FullRecord()).dump() << "\n" << R"({"kind":"disable-one","status":"ok"})" << "\n";
  }
  absl::StatusOr<std::vector<AblationRecord>> records = ReadAblationRecordLines(path);
  ASSERT_FALSE(records.ok());
  EXPECT_THAT(records.status().message(), HasSubstr(path + ":2: record has no 'variant'"));
}

TEST(AblationRecordsTest, WrongTypeNamesTheKey) {
  Json j = FullRecord();
  j["samples"]["kernel_ns"][1] = "fast";
  absl::StatusOr<AblationRecord> r = ParseAblationRecord(j, "results.jsonl:7");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("results.jsonl:7"));
  EXPECT_THAT(r.status().message(), HasSubstr("kernel_ns[1]"));
  absl::StatusOr<AblationManifest> m = ParseAblationManifest(Json{{"pipeline", "gpu"}}, "manifest.json");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("manifest.json: manifest has no 'device'"));
}

TEST(AblationRecordsTest, TornLastLineIsSkipped) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "records_torn";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "results.jsonl").string();
  {
    std::ofstream out(path);
    out << Json(FullRecord()).dump() << "\n" << R"({"variant":"x","ki)";
  }
  absl::StatusOr<std::vector<AblationRecord>> records = ReadAblationRecordLines(path);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->size(), 1u);
}

// The capped kernel time (issue 27 item 2): a spike of one kernel in one
// step is cut to that kernel's median + 3 scaled MADs; a kernel slower in
// every step keeps all of it; a kernel missing from some steps is summed
// as it is; without one entry per step for every kernel there is none and
// "kernel_ns" is the stored sums.
TEST(AblationRecordsTest, CappedKernelTimeCutsOneKernelsSpikes) {
  AblationSamples s;
  // fusion.1: ~100 with small noise and one 400 spike in step 3.
  // custom-call.2: 50 in every step. while.body: only in steps 0 and 4.
  s.kernel_steps_ns = {{"fusion.1", {100, 101, 99, 400, 100, 102}},
                       {"custom-call.2", {50, 50, 50, 50, 50, 50}},
                       {"while.body", {7, 0, 0, 0, 9, 0}}};
  s.kernel_ns = {157, 151, 149, 450, 159, 152};
  const std::vector<double> capped = s.CappedKernelNs();
  ASSERT_EQ(capped.size(), 6u);
  // fusion.1's median is 100.5, its MAD 1 (scaled: 1.4826): cap 104.95.
  EXPECT_NEAR(capped[3], 100.5 + 3 * 1.4826 + 50, 1e-9);
  for (size_t i : {0, 1, 2, 4, 5}) EXPECT_DOUBLE_EQ(capped[i], s.kernel_ns[i]) << i;
  EXPECT_EQ(s.Metric("kernel_ns"), capped);
  EXPECT_EQ(s.Metric("kernel_raw_ns"), s.kernel_ns);

  // Slower in every step: nothing to cap.
  AblationSamples slow;
  slow.kernel_steps_ns = {{"fusion.1", {130, 131, 129, 130}}};
  slow.kernel_ns = {130, 131, 129, 130};
  EXPECT_EQ(slow.CappedKernelNs(), slow.kernel_ns);

  // A row shorter than the steps: no capped sums; kernel_ns as stored.
  AblationSamples partial;
  partial.kernel_ns = {10, 11, 12};
  partial.kernel_steps_ns = {{"fusion.1", {10, 11}}};
  EXPECT_TRUE(partial.CappedKernelNs().empty());
  EXPECT_EQ(partial.Metric("kernel_ns"), partial.kernel_ns);
  EXPECT_TRUE(partial.Metric("cycles").empty());
}

}  // namespace
}  // namespace passlab
