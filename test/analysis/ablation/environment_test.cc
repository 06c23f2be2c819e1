// A sweep's recorded environment and `passlab ablate --reproduce` (issue 29
// item 4): the collector's fields, "unknown" where a reader fails, the
// difference printer and the rerun's arguments.
#include "analysis/ablation/environment.h"

#include <gtest/gtest.h>

#include "analysis/ablation/report.h"

#include <filesystem>
#include <fstream>
#include <map>

namespace passlab {
namespace {

using Json = nlohmann::json;

// Readers over a fixed set of files, variables and command outputs.
EnvironmentReaders FakeReaders(std::map<std::string, std::string> files, std::vector<std::string> variables,
                               std::map<std::string, std::string> commands = {},
                               std::optional<std::string> kernel = std::nullopt) {
  EnvironmentReaders r;
  r.read_file = [files](const std::string& path) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
  r.variables = [variables] { return variables; };
  r.run = [commands](const std::string& command) -> std::optional<std::string> {
    for (const auto& [prefix, out] : commands) {
      if (command.rfind(prefix, 0) == 0) return out;
    }
    return std::nullopt;
  };
  r.kernel = [kernel] { return kernel; };
  r.now = [] { return std::time_t{1795000000}; };
  return r;
}

TEST(EnvironmentTest, CollectsEveryField) {
  Json env = CollectEnvironment(
      "/sweep",
      FakeReaders({{"/etc/os-release", "NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"},
                   {"/proc/cpuinfo", "processor\t: 0\nmodel name\t: AMD EPYC 9654\n"},
                   {"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n"},
                   {"/proc/driver/nvidia/version", "NVRM version: 580\n"},
                   {"/sweep/autotune.json", "{}"}},
                  {"OMP_NUM_THREADS=4", "PASSLAB_TRACE=1", "HOME=/root", "XLA_FLAGS=--xla_foo"},
                  {{"nvidia-smi", "1980 MHz, 2619 MHz, 1980 MHz\n"}}, "6.1.0-18-amd64"));
  for (const char* key : {"date", "build", "variables", "versions", "os", "kernel", "cpu", "cpu_governor",
                          "gpu_clocks", "autotune_cache_xxh64", "cwd"}) {
    EXPECT_TRUE(env.contains(key)) << key;
  }
  EXPECT_EQ(env["date"], "2026-11-18T11:06:40Z");
  EXPECT_EQ(env["os"], "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(env["kernel"], "6.1.0-18-amd64");
  EXPECT_EQ(env["cpu"], "AMD EPYC 9654");
  EXPECT_EQ(env["cpu_governor"], "performance");
  EXPECT_EQ(env["gpu_clocks"], "sm 1980 MHz, mem 2619 MHz (max sm 1980 MHz)");
  EXPECT_EQ(env["autotune_cache_xxh64"].get<std::string>().size(), 16u);
  // The fixed variables always (set or not), PASSLAB_* when set, nothing else.
  EXPECT_EQ(env["variables"]["OMP_NUM_THREADS"], "4");
  EXPECT_EQ(env["variables"]["OPENBLAS_NUM_THREADS"], "unset");
  EXPECT_EQ(env["variables"]["CUDA_VISIBLE_DEVICES"], "unset");
  EXPECT_EQ(env["variables"]["XLA_FLAGS"], "--xla_foo");
  EXPECT_EQ(env["variables"]["PASSLAB_TRACE"], "1");
  EXPECT_FALSE(env["variables"].contains("HOME"));
  for (const char* key : {"git_commit", "git_dirty", "build_type"}) EXPECT_TRUE(env["build"].contains(key)) << key;
  for (const char* key : {"llvm", "onednn", "openblas", "cuda_driver", "cuda_runtime", "cudnn", "cublas"}) {
    ASSERT_TRUE(env["versions"].contains(key)) << key;
    EXPECT_FALSE(env["versions"][key].get<std::string>().empty()) << key;
  }
}

TEST(EnvironmentTest, SaysUnknownWhereNothingCanBeRead) {
  Json env = CollectEnvironment("/sweep", FakeReaders({}, {}));
  EXPECT_EQ(env["os"], "unknown");
  EXPECT_EQ(env["kernel"], "unknown");
  EXPECT_EQ(env["cpu"], "unknown");
  EXPECT_EQ(env["cpu_governor"], "unknown");
  EXPECT_EQ(env["gpu_clocks"], "none");  // no NVIDIA driver
  EXPECT_EQ(env["autotune_cache_xxh64"], "none");
  EXPECT_EQ(env["variables"]["OMP_NUM_THREADS"], "unset");
}

TEST(EnvironmentTest, GpuClocksUnknownWithoutNvidiaSmi) {
  Json env = CollectEnvironment("/sweep", FakeReaders({{"/proc/driver/nvidia/version", "NVRM\n"}}, {}));
  EXPECT_EQ(env["gpu_clocks"], "unknown");
}

Json Manifest(const std::string& commit, bool dirty, const std::string& cudnn, const std::string& cores) {
  return {{"machine", {{"cores", cores}, {"gpu", {"NVIDIA H100"}}}},
          {"environment",
           {{"date", commit + "-date"},
            {"build", {{"git_commit", commit}, {"git_dirty", dirty}, {"build_type", "Release"}}},
            {"versions", {{"cudnn", cudnn}, {"llvm", "22.1.8"}}},
            {"autotune_cache_xxh64", commit}}}};
}

TEST(EnvironmentTest, DiffListsChangedFieldsByPath) {
  std::vector<EnvironmentDifference> d =
      DiffEnvironments(Manifest("abc", false, "9.1.0", "16"), Manifest("def", true, "9.2.0", "16"));
  ASSERT_EQ(d.size(), 3u);  // date and autotune hash left out
  EXPECT_EQ(d[0].field, "environment.build.git_commit");
  EXPECT_EQ(d[1].field, "environment.build.git_dirty");
  EXPECT_EQ(d[2].field, "environment.versions.cudnn");
  EXPECT_EQ(d[2].recorded, "9.1.0");
  EXPECT_EQ(d[2].now, "9.2.0");
}

TEST(EnvironmentTest, DiffMarksFieldsMissingOnOneSide) {
  Json old = {{"machine", {{"cores", 8}}}};  // an old manifest: no environment
  std::vector<EnvironmentDifference> d = DiffEnvironments(old, Manifest("abc", false, "9.1.0", "8"));
  ASSERT_FALSE(d.empty());
  bool saw_cudnn = false;
  for (const EnvironmentDifference& e : d) {
    if (e.field != "environment.versions.cudnn") continue;
    saw_cudnn = true;
    EXPECT_EQ(e.recorded, "–");
    EXPECT_EQ(e.now, "9.1.0");
  }
  EXPECT_TRUE(saw_cudnn);
}

TEST(EnvironmentTest, RendersBuildThenFields) {
  std::string text = RenderEnvironmentDifferences(Manifest("abc", false, "9.1.0", "16"),
                                                  Manifest("def", true, "9.2.0", "32"));
  EXPECT_NE(text.find("build: recorded abc (clean, Release); this build def (dirty, Release)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("environment: 2 field(s) differ"), std::string::npos) << text;
  EXPECT_NE(text.find("  environment.versions.cudnn: 9.1.0 -> 9.2.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  machine.cores: 16 -> 32\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("git_commit"), std::string::npos) << text;  // on the build line instead
}

TEST(EnvironmentTest, RendersSameWhenNothingDiffers) {
  std::string text = RenderEnvironmentDifferences(Manifest("abc", true, "9.1.0", "16"),
                                                  Manifest("abc", true, "9.1.0", "16"));
  EXPECT_NE(text.find("build: the same as recorded, abc (dirty, Release)"), std::string::npos) << text;
  EXPECT_NE(text.find("environment: the same as recorded"), std::string::npos) << text;
}

TEST(EnvironmentTest, ComparesOnlyTheMachineOfAnOlderSweep) {
  Json old = {{"machine", {{"cores", "16"}, {"gpu", {"NVIDIA H100"}}}}};
  std::string text = RenderEnvironmentDifferences(old, Manifest("abc", false, "9.1.0", "32"));
  EXPECT_NE(text.find("build: not recorded; this build abc (clean, Release)"), std::string::npos) << text;
  EXPECT_NE(text.find("environment: not recorded (an older sweep); comparing the machine only"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  machine.cores: 16 -> 32\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("environment.versions"), std::string::npos) << text;
}

TEST(EnvironmentTest, FlattensNestedObjectsAndScalarArrays) {
  auto fields = FlattenJsonFields("machine", Json{{"gpu", {"A", "B"}}, {"cpu", {{"model", "EPYC"}}}, {"cores", 8}});
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0], (std::pair<std::string, std::string>{"machine.cores", "8"}));
  EXPECT_EQ(fields[1], (std::pair<std::string, std::string>{"machine.cpu.model", "EPYC"}));
  EXPECT_EQ(fields[2], (std::pair<std::string, std::string>{"machine.gpu", "A, B"}));
}

// A manifest of pipeline gpu on the CPU with the given command line.
AblationManifest CommandManifest(std::optional<std::vector<std::string>> argv, std::optional<std::string> command) {
  AblationManifest m;
  m.pipeline = "gpu";
  m.device = "cpu";
  m.argv = std::move(argv);
  m.command = std::move(command);
  return m;
}

TEST(EnvironmentTest, ReproductionReplacesOut) {
  absl::StatusOr<std::vector<std::string>> args = ReproductionArguments(
      CommandManifest(std::vector<std::string>{"/old/passlab", "ablate", "--model", "mlp", "--out", "/old/dir",
                                               "--repeats", "4"},
                      "passlab ablate --model mlp --out /old/dir --repeats 4"),
      "/new");
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(*args, (std::vector<std::string>{"ablate", "--model", "mlp", "--out", "/new", "--repeats", "4"}));

  // Older manifests: the command, split at spaces.
  args = ReproductionArguments(CommandManifest(std::nullopt, "passlab ablate x.hlo --out=/old"), "/new");
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(*args, (std::vector<std::string>{"ablate", "x.hlo", "--out=/new"}));

  args = ReproductionArguments(CommandManifest(std::nullopt, "passlab ablate x.hlo"), "/new");  // no --out: added
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(*args, (std::vector<std::string>{"ablate", "x.hlo", "--out", "/new"}));

  EXPECT_FALSE(ReproductionArguments(CommandManifest(std::nullopt, std::nullopt), "/new").ok());
}

TEST(EnvironmentTest, RecordsAutotuneCacheHashAfterTheSweep) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "environment_test_sweep";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "manifest.json")
      << Json{{"pipeline", "gpu"}, {"device", "cpu"}, {"model", "mlp"},
              {"environment", {{"autotune_cache_xxh64", "none"}}}}.dump();
  std::ofstream(dir / "autotune.json") << "{\"entries\": []}";
  ASSERT_TRUE(RecordAutotuneCacheHash(dir.string()).ok());
  {
    std::ifstream in(dir / "manifest.json");
    Json m = Json::parse(in);
    EXPECT_NE(m["environment"]["autotune_cache_xxh64"], "none");
    EXPECT_EQ(m["environment"]["autotune_cache_xxh64"].get<std::string>().size(), 16u);
    EXPECT_EQ(m["model"], "mlp");  // the caller's part is kept
  }
  // A manifest that is not one (no pipeline) is an error naming the key.
  std::ofstream(dir / "manifest.json") << Json{{"environment", {{"autotune_cache_xxh64", "none"}}}}.dump();
  absl::Status bad = RecordAutotuneCacheHash(dir.string());
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.message()).find("'pipeline'"), std::string::npos) << bad;
  std::filesystem::remove_all(dir);
}

TEST(EnvironmentTest, ReportsShowTheEnvironmentAFieldARow) {
  Json manifest = Manifest("abc", false, "9.1.0", "16");
  manifest["argv"] = {"passlab", "ablate"};
  manifest["command"] = "passlab ablate";
  nlohmann::ordered_json report = BuildAblationReport(manifest, std::vector<AblationRecord>{});
  std::string md = RenderAblationMarkdown(report);
  EXPECT_NE(md.find("| environment.versions.cudnn | `9.1.0` |"), std::string::npos) << md;
  EXPECT_NE(md.find("| environment.build.git_dirty | `false` |"), std::string::npos) << md;
  EXPECT_NE(md.find("| machine.gpu | `NVIDIA H100` |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| argv |"), std::string::npos) << md;  // the command's row says it
  std::string html = RenderAblationHtml(report);
  EXPECT_NE(html.find("<th style=\"width:220px\">environment.build.git_commit</th><td><pre>abc</pre>"),
            std::string::npos);
}

}  // namespace
}  // namespace passlab
