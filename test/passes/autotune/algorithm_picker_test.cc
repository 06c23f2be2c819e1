// GpuConvAlgorithmPicker and GemmAlgorithmPicker: the choice lands in
// backend_config and the runtime runs it; the cache (hits, save/load), the
// deny list and the autotune levels.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/cleanup/cleanup.h"
#include "core/ir/hlo_computation.h"
#include "core/libcall/library_call.h"
#include "core/runtime/library_call_runner.h"
#include "passes/autotune/gemm_algorithm_picker.h"
#include "passes/autotune/gpu_conv_algorithm_picker.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

constexpr char kConv[] = R"(
ENTRY e {
  x = f32[2,8,8,4] parameter(0)
  w = f32[3,3,4,8] parameter(1)
  c = (f32[2,8,8,8], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  ROOT v = f32[2,8,8,8] get-tuple-element(c), index=0
})";

constexpr char kGemm[] = R"(
ENTRY e {
  a = f32[4,6] parameter(0)
  b = f32[6,5] parameter(1)
  ROOT g = f32[4,5] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})";

HloInstruction* FindCall(const HloModule& m) {
  for (HloInstruction* i : m.entry_computation()->instructions()) {
    if (ClassifyLibraryCall(*i).has_value()) return i;
  }
  return nullptr;
}

int64_t ChosenConvAlgorithm(const HloModule& m) {
  absl::StatusOr<ConvBackendConfig> c = ParseConvBackendConfig(*FindCall(m));
  EXPECT_TRUE(c.ok());
  return c.ok() ? c->algo_id : -2;
}

std::vector<int64_t> ListedIds(const HloModule& m) {
  std::vector<int64_t> ids;
  absl::StatusOr<std::vector<LibraryAlgorithm>> list = ListAlgorithms(*FindCall(m));
  EXPECT_TRUE(list.ok());
  if (list.ok()) {
    for (const LibraryAlgorithm& a : *list) ids.push_back(a.id);
  }
  return ids;
}

PassResult RunConvPicker(AutotuneOptions options, const std::string& hlo = kConv) {
  PassResult r = RunPass(std::make_unique<GpuConvAlgorithmPicker>(std::move(options)), hlo);
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

TEST(GpuConvAlgorithmPickerTest, WritesTheChoiceThatTheRuntimeRuns) {
  AutotuneCache cache;
  PassResult r = RunConvPicker({.cache = &cache});
  ASSERT_TRUE(r.changed);
  int64_t chosen = ChosenConvAlgorithm(*r.module);
  std::vector<int64_t> listed = ListedIds(*r.module);
  EXPECT_NE(std::find(listed.begin(), listed.end(), chosen), listed.end()) << r.text;
  EXPECT_TRUE(Matches(r.text, {"\"algo_id\":\"" + std::to_string(chosen) + "\""})) << r.text;
  absl::StatusOr<std::unique_ptr<LibraryCallRunner>> runner = LibraryCallRunner::Create(*FindCall(*r.module));
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  EXPECT_EQ((*runner)->algorithm().id, chosen);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(GpuConvAlgorithmPickerTest, LevelZeroIsOff) {
  AutotuneCache cache;
  EXPECT_FALSE(RunConvPicker({.level = 0, .cache = &cache}).changed);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(GpuConvAlgorithmPickerTest, EveryLevelPicksAListedAlgorithm) {
  for (int level = 1; level <= 4; ++level) {
    AutotuneCache cache;
    PassResult r = RunConvPicker({.level = level, .cache = &cache});
    EXPECT_TRUE(r.changed) << "level " << level;
    std::vector<int64_t> listed = ListedIds(*r.module);
    EXPECT_NE(std::find(listed.begin(), listed.end(), ChosenConvAlgorithm(*r.module)), listed.end())
        << "level " << level;
  }
}

// Depthwise calls (8 channels, 8 groups) in every direction, as ConvRewriter
// makes them from feature- and batch-grouped convolutions: the picker times
// oneDNN's algorithms on them and records one, never the reference.
TEST(GpuConvAlgorithmPickerTest, TunesDepthwiseCallsOfEveryDirectionOnTheLibrary) {
  const std::string attrs =
      "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8";
  auto call = [&](const std::string& target, const std::string& a, const std::string& b, const std::string& out) {
    return "ENTRY e {\n  a = " + a + " parameter(0)\n  b = " + b + " parameter(1)\n  c = (" + out +
           ", u8[0]) custom-call(a, b), " + attrs + ", custom_call_target=\"" + target + "\"\n  ROOT v = " + out +
           " get-tuple-element(c), index=0\n}";
  };
  const std::string x = "f32[2,9,9,8]", w = "f32[3,3,1,8]", y = "f32[2,5,5,8]";
  for (const std::string& hlo : {call("__dnn$convForward", x, w, y), call("__dnn$convBackwardInput", y, w, x),
                                 call("__dnn$convBackwardFilter", x, y, w)}) {
    SCOPED_TRACE(hlo);
    AutotuneCache cache;
    PassResult r = RunConvPicker({.cache = &cache}, hlo);
    ASSERT_TRUE(r.changed) << r.text;
    int64_t chosen = ChosenConvAlgorithm(*r.module);
    std::vector<int64_t> listed = ListedIds(*r.module);
    EXPECT_NE(std::find(listed.begin(), listed.end(), chosen), listed.end()) << r.text;
    EXPECT_NE(chosen, static_cast<int64_t>(ConvAlgorithm::kReference)) << r.text;
  }
}

TEST(GpuConvAlgorithmPickerTest, CacheHitsAreKeyedByTextNotNames) {
  AutotuneCache cache;
  // A planted entry for this call is used without tuning.
  auto m = ParseHloModule(kConv, "planted.hlo");
  ASSERT_TRUE(m.ok());
  cache.Insert(AutotuneKey(*FindCall(**m)), {static_cast<int64_t>(ConvAlgorithm::kReference), "reference", 1});
  PassResult r = RunConvPicker({.cache = &cache});
  EXPECT_EQ(ChosenConvAlgorithm(*r.module), static_cast<int64_t>(ConvAlgorithm::kReference));
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.misses(), 0);
  // The same call under other names hits the same entry.
  std::string renamed = R"(
ENTRY other {
  input = f32[2,8,8,4] parameter(0)
  filter = f32[3,3,4,8] parameter(1)
  call = (f32[2,8,8,8], u8[0]) custom-call(input, filter), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  ROOT value = f32[2,8,8,8] get-tuple-element(call), index=0
})";
  RunConvPicker({.cache = &cache}, renamed);
  EXPECT_EQ(cache.hits(), 2);
}

TEST(GpuConvAlgorithmPickerTest, CacheSavesAndLoadsThroughAFile) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("passlab_autotune_" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(path);
  AutotuneCache first;
  PassResult r = RunConvPicker({.cache = &first, .cache_path = path.string()});
  ASSERT_TRUE(std::filesystem::exists(path));
  AutotuneCache second;
  ASSERT_TRUE(second.Load(path.string()).ok());
  ASSERT_EQ(second.size(), 1u);
  std::optional<AutotuneResult> entry = second.Find(AutotuneKey(*FindCall(*r.module)));
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->algorithm, ChosenConvAlgorithm(*r.module));
  // A second process (a fresh cache) tunes nothing: it loads the file.
  AutotuneCache third;
  RunConvPicker({.cache = &third, .cache_path = path.string()});
  EXPECT_EQ(third.hits(), 1);
  EXPECT_EQ(third.misses(), 0);
  std::filesystem::remove(path);
}

TEST(GpuConvAlgorithmPickerTest, DenyListRemovesAlgorithms) {
  AutotuneCache cache;
  auto m = ParseHloModule(kConv, "deny.hlo");
  ASSERT_TRUE(m.ok());
  std::vector<int64_t> listed = ListedIds(**m);
  // Deny everything but the last listed algorithm, for this call only.
  AlgorithmDenyEntry entry{"__dnn$convForward", {}};
  for (size_t i = 0; i + 1 < listed.size(); ++i) entry.algorithms.push_back(listed[i]);
  PassResult r = RunConvPicker({.cache = &cache, .deny_list = {entry}});
  EXPECT_EQ(ChosenConvAlgorithm(*r.module), listed.back());
  // Denying every algorithm leaves the call to the runtime's default.
  entry.algorithms = listed;
  AutotuneCache fresh;
  EXPECT_FALSE(RunConvPicker({.cache = &fresh, .deny_list = {entry}}).changed);
}

TEST(GpuConvAlgorithmPickerTest, DenyListFileIsRead) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("passlab_deny_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(path);
    // Every convolution algorithm (as-backward-filter is 4, tap-gemm 5,
    // im2col-gemm 6).
    out << R"({"entries": [{"hlo": "convForward", "algorithms": [0, 1, 2, 3, 4, 5, 6]}]})";
  }
  absl::StatusOr<std::vector<AlgorithmDenyEntry>> deny = LoadDenyList(path.string());
  ASSERT_TRUE(deny.ok()) << deny.status().message();
  ASSERT_EQ(deny->size(), 1u);
  EXPECT_EQ((*deny)[0].algorithms.size(), 7u);
  AutotuneCache cache;
  EXPECT_FALSE(RunConvPicker({.cache = &cache, .deny_list_path = path.string()}).changed);
  std::filesystem::remove(path);
  EXPECT_FALSE(LoadDenyList(path.string()).ok());
}

TEST(GpuConvAlgorithmPickerTest, LevelFourRejectsAlgorithmsThatDisagreeWithTheReference) {
  // A tolerance no difference can meet: every algorithm after the reference
  // (the first that ran) is rejected as a wrong result.
  auto m = ParseHloModule(kConv, "check.hlo");
  ASSERT_TRUE(m.ok());
  std::vector<int64_t> listed = ListedIds(**m);
  AutotuneCache cache;
  absl::StatusOr<AutotuneOutcome> outcome =
      AutotuneLibraryCall(*FindCall(**m), {.level = 4, .cache = &cache, .tolerance = -1});
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->result.algorithm, listed.front());
  if (listed.size() > 2) {  // more than one library algorithm (the reference is not a candidate)
    ASSERT_FALSE(outcome->rejected.empty());
    EXPECT_NE(outcome->rejected[0].find("differs from the reference algorithm"), std::string::npos)
        << outcome->rejected[0];
  }
  // Level 3 does not check.
  AutotuneCache other;
  outcome = AutotuneLibraryCall(*FindCall(**m), {.level = 3, .cache = &other, .tolerance = -1});
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->rejected.empty());
}

TEST(GpuConvAlgorithmPickerTest, AnInstalledDeviceTimerTunesOnTheDevice) {
  // A stand-in for the CUDA runtime's timer: three "device" algorithms, the
  // second fastest, one failing; the deny list reaches it as ids.
  std::vector<int64_t> denied_seen;
  int calls = 0;
  AlgorithmTimer timer;
  timer.device = "fake:0 (test device)";
  timer.time = [&](const HloInstruction& call, const AutotuneOptions& options, const std::vector<int64_t>& denied) {
    ++calls;
    denied_seen = denied;
    EXPECT_EQ(options.level, 4);
    std::vector<AlgorithmTiming> t(3);
    t[0].algorithm = {10, "dev#10"};
    t[0].median_ns = 500;
    t[1].algorithm = {11, "dev#11"};
    t[1].median_ns = 200;
    t[2].algorithm = {12, "dev#12"};
    t[2].status = absl::InternalError("wrote outside its buffers (red zone modified)");
    return absl::StatusOr<std::vector<AlgorithmTiming>>(t);
  };
  auto m = ParseHloModule(kConv, "device.hlo");
  ASSERT_TRUE(m.ok());
  AutotuneCache cache;
  // A choice made on the CPU is not reused on the device (keys name it).
  absl::StatusOr<AutotuneOutcome> cpu = AutotuneLibraryCall(*FindCall(**m), {.level = 1, .cache = &cache});
  ASSERT_TRUE(cpu.ok()) << cpu.status().message();
  SetAlgorithmTimer(timer);
  absl::Cleanup back_to_the_cpu = [] { SetAlgorithmTimer(std::nullopt); };
  AutotuneOptions options{.level = 4, .cache = &cache};
  options.deny_list = {{"", {7}}, {"no-such-call", {8}}};
  absl::StatusOr<AutotuneOutcome> device = AutotuneLibraryCall(*FindCall(**m), options);
  ASSERT_TRUE(device.ok()) << device.status().message();
  EXPECT_FALSE(device->from_cache);
  EXPECT_EQ(device->result.algorithm, 11);
  EXPECT_EQ(device->result.time_ns, 200);
  EXPECT_EQ(denied_seen, std::vector<int64_t>{7});
  ASSERT_EQ(device->rejected.size(), 1u);
  EXPECT_NE(device->rejected[0].find("dev#12: wrote outside"), std::string::npos) << device->rejected[0];
  // The second time: the device's cache entry, no timing.
  device = AutotuneLibraryCall(*FindCall(**m), options);
  ASSERT_TRUE(device.ok());
  EXPECT_TRUE(device->from_cache);
  EXPECT_EQ(device->result.algorithm, 11);
  EXPECT_EQ(calls, 1);
  // A timer error names the call and the device.
  timer.device = "fake:1 (broken)";
  timer.time = [](const HloInstruction&, const AutotuneOptions&, const std::vector<int64_t>&) {
    return absl::StatusOr<std::vector<AlgorithmTiming>>(absl::UnavailableError("device lost"));
  };
  SetAlgorithmTimer(timer);
  device = AutotuneLibraryCall(*FindCall(**m), options);
  SetAlgorithmTimer(std::nullopt);
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("autotuning on fake:1 (broken): device lost"), std::string::npos)
      << device.status().message();
  // Back on the CPU: its own entry again.
  cpu = AutotuneLibraryCall(*FindCall(**m), {.level = 1, .cache = &cache});
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(cpu->from_cache);
  EXPECT_NE(cpu->result.algorithm, 11);
}

TEST(GemmAlgorithmPickerTest, WritesSelectedAlgorithmAndSkipsTunedCalls) {
  AutotuneCache cache;
  PassResult r = RunPass(std::make_unique<GemmAlgorithmPicker>(AutotuneOptions{.cache = &cache}), kGemm);
  ASSERT_TRUE(r.changed);
  // The faster of oneDNN's sgemm (2) and OpenBLAS (0); never the reference.
  const bool dnn = Matches(r.text, {"\"selected_algorithm\":\"2\""});
  EXPECT_TRUE(dnn || Matches(r.text, {"\"selected_algorithm\":\"0\""})) << r.text;
  absl::StatusOr<std::unique_ptr<LibraryCallRunner>> runner = LibraryCallRunner::Create(*FindCall(*r.module));
  ASSERT_TRUE(runner.ok());
  EXPECT_EQ((*runner)->algorithm().name, dnn ? "onednn" : "blas");
  // Already chosen: left alone; and the convolution picker ignores gemms.
  PrintOptions options;
  options.print_metadata = false;
  std::string tuned = PrintModule(*r.module, options);
  EXPECT_FALSE(RunPass(std::make_unique<GemmAlgorithmPicker>(AutotuneOptions{.cache = &cache}), tuned).changed);
  EXPECT_FALSE(RunPass(std::make_unique<GpuConvAlgorithmPicker>(AutotuneOptions{.cache = &cache}), kGemm).changed);
}

}  // namespace
}  // namespace passlab
