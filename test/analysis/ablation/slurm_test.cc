#include "analysis/ablation/slurm.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/ir/str_util.h"

namespace passlab {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

AblationVariant Variant(std::string name, bool required = false) {
  AblationVariant v;
  v.name = std::move(name);
  v.kind = "disable-one";
  v.passes = {v.name};
  v.disable = "@1";
  v.required = required;
  if (required) v.required_reason = "needed";
  return v;
}

class SlurmSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    sweep_.out_dir = dir_.string();
    sweep_.input_text = "HloModule m\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n";
    sweep_.block_size = 2;
    sweep_.plan = {Variant("a"), Variant("r", true), Variant("b"), Variant("c"), Variant("d"), Variant("e")};
    slurm_.partition = "gpu";
    slurm_.gres = "gpu:1";
    slurm_.time = "20";
    slurm_.array_parallelism = 3;
    slurm_.passlab_exe = "/opt/passlab's/passlab";
  }

  Json Plan() const { return Json::parse(Slurp(dir_ / "plan.json")); }

  // Appends records of task `task` for `variants` (a baseline first when
  // `baseline`), stamped with this directory's plan id unless `plan_id`.
  void Record(int task, const std::vector<std::string>& variants, bool baseline, std::string plan_id = "") {
    if (plan_id.empty()) plan_id = Plan()["plan_id"];
    std::ofstream out(dir_ / StrCat("results/task-", task, ".jsonl"), std::ios::app);
    if (baseline) {
      out << Json{{"variant", "baseline"}, {"kind", "baseline"}, {"task", task}, {"plan_id", plan_id},
                  {"node", StrCat("n", task)}, {"machine", {{"cpu", "EPYC"}}}}.dump()
          << "\n";
    }
    for (const std::string& v : variants) {
      out << Json{{"variant", v}, {"kind", "disable-one"}, {"passes", {v}}, {"task", task}, {"plan_id", plan_id},
                  {"status", "ok"}}.dump()
          << "\n";
    }
  }

  fs::path dir_;
  AblationOptions sweep_;
  SlurmOptions slurm_;
};

TEST(SplitIntoBlocksTest, EqualBlocksOfAtMostTheLimit) {
  using Ranges = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(SplitIntoBlocks(5, 2), (Ranges{{0, 2}, {2, 4}, {4, 5}}));
  EXPECT_EQ(SplitIntoBlocks(9, 8), (Ranges{{0, 5}, {5, 9}}));
  EXPECT_EQ(SplitIntoBlocks(3, 8), (Ranges{{0, 3}}));
  EXPECT_TRUE(SplitIntoBlocks(0, 8).empty());
  EXPECT_EQ(SplitIntoBlocks(2, 0), (Ranges{{0, 1}, {1, 2}})) << "a limit below 1 counts as 1";
}

TEST_F(SlurmSweepTest, WritesPlanTasksAndScripts) {
  ASSERT_TRUE(WriteSlurmSweep(sweep_, slurm_).ok());
  Json plan = Plan();
  // Five runnable variants in tasks of at most two; the required one is a
  // record of task 0, never a run.
  EXPECT_EQ(plan["tasks"], Json::parse(R"([["r","a","b"],["c","d"],["e"]])"));
  EXPECT_EQ(plan["variants"].size(), 6u);
  EXPECT_EQ(plan["run"]["repeats"], sweep_.repeats);
  EXPECT_EQ(plan["plan_id"].get<std::string>().size(), 16u);
  Json manifest = Json::parse(Slurp(dir_ / "manifest.json"));
  EXPECT_EQ(manifest["executor"], "slurm");
  EXPECT_EQ(manifest["plan_id"], plan["plan_id"]);
  EXPECT_EQ(Slurp(dir_ / "input.hlo"), sweep_.input_text);

  std::string script = Slurp(dir_ / "ablate.sbatch");
  for (const char* line : {"#SBATCH --array=0-2%3\n", "#SBATCH --partition=gpu\n", "#SBATCH --gres=gpu:1\n",
                           "#SBATCH --time=20\n", "#SBATCH --cpus-per-task=1\n"}) {
    EXPECT_NE(script.find(line), std::string::npos) << line << script;
  }
  // Paths are shell-quoted, quotes included.
  EXPECT_NE(script.find(StrCat("exec '/opt/passlab'\\''s/passlab' ablate --run-task \"$SLURM_ARRAY_TASK_ID\" --out '",
                               fs::absolute(dir_).string(), "'\n")),
            std::string::npos)
      << script;
  std::string merge = Slurp(dir_ / "merge.sbatch");
  EXPECT_NE(merge.find("ablate --merge '"), std::string::npos) << merge;
  EXPECT_EQ(merge.find("--gres"), std::string::npos) << "the merge needs no GPU";
}

TEST_F(SlurmSweepTest, SamePlanAgainIsFineAnotherIsRefused) {
  ASSERT_TRUE(WriteSlurmSweep(sweep_, slurm_).ok());
  const Json id = Plan()["plan_id"];
  slurm_.partition = "other";  // where it runs is not part of the plan
  EXPECT_TRUE(WriteSlurmSweep(sweep_, slurm_).ok());
  EXPECT_EQ(Plan()["plan_id"], id);
  sweep_.repeats = 20;
  absl::Status other = WriteSlurmSweep(sweep_, slurm_);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(std::string(other.message()).find("holds another plan"), std::string::npos) << other.message();
  EXPECT_EQ(Plan()["plan_id"], id) << "the refused plan changed nothing";
}

TEST_F(SlurmSweepTest, PairsAreRefused) {
  sweep_.pairs_top_k = 3;
  EXPECT_FALSE(WriteSlurmSweep(sweep_, slurm_).ok());
}

TEST_F(SlurmSweepTest, TaskStatesFromTheResultsFiles) {
  ASSERT_TRUE(WriteSlurmSweep(sweep_, slurm_).ok());
  Record(0, {"r"}, false);
  Record(0, {"a", "b"}, true);
  Record(1, {"c"}, true);  // killed before "d" was recorded
  std::ofstream(dir_ / "results/task-1.jsonl", std::ios::app) << "{\"variant\":\"d\",\"ki";  // torn write
  absl::StatusOr<SlurmSweepState> state = ReadSlurmSweep(dir_.string());
  ASSERT_TRUE(state.ok()) << state.status().message();
  ASSERT_EQ(state->tasks.size(), 3u);
  EXPECT_EQ(state->tasks[0].state(), "done");
  EXPECT_EQ(state->tasks[0].node, "n0");
  EXPECT_EQ(state->tasks[1].state(), "failed");
  EXPECT_EQ(state->tasks[1].done, 1);
  EXPECT_EQ(state->tasks[2].state(), "missing");
  EXPECT_EQ(state->Incomplete(), (std::vector<int>{1, 2}));
  EXPECT_EQ(state->records.size(), 6u) << "the torn line is skipped";

  const AblationManifest merged = MergedManifest(*state);
  EXPECT_EQ(merged.pipeline, sweep_.pipeline);  // the sweep's settings, typed
  EXPECT_EQ(merged.block_size, 2);
  const Json manifest = merged;
  EXPECT_EQ(manifest["schema_version"], kAblationSchemaVersion);
  EXPECT_EQ(manifest["executor"], "slurm");
  EXPECT_EQ(manifest["incomplete_tasks"], Json::parse("[1,2]"));
  EXPECT_EQ(manifest["tasks"][0]["machine"]["cpu"], "EPYC");
  EXPECT_EQ(manifest["tasks"][1]["state"], "failed");

  std::string status = RenderSlurmStatus(*state, false);
  EXPECT_NE(status.find("4/6 variants recorded; 3 task(s): 1 done, 0 pending or running, 1 failed, 1 missing"),
            std::string::npos)
      << status;
  EXPECT_NE(status.find("task 1  failed  1/2 variants  node n1"), std::string::npos) << status;
}

TEST_F(SlurmSweepTest, RecordsOfAnotherPlanAreRefused) {
  ASSERT_TRUE(WriteSlurmSweep(sweep_, slurm_).ok());
  Record(2, {"e"}, true);
  Record(2, {"e"}, false, "0123456789abcdef");
  absl::StatusOr<SlurmSweepState> state = ReadSlurmSweep(dir_.string());
  ASSERT_FALSE(state.ok());
  EXPECT_NE(std::string(state.status().message()).find("results/task-2.jsonl:3: a record of plan 0123456789abcdef"),
            std::string::npos)
      << state.status().message();
}

TEST_F(SlurmSweepTest, ResultsOfTasksThePlanDoesNotHaveAreRefused) {
  ASSERT_TRUE(WriteSlurmSweep(sweep_, slurm_).ok());
  std::ofstream(dir_ / "results/task-7.jsonl") << "\n";
  absl::StatusOr<SlurmSweepState> state = ReadSlurmSweep(dir_.string());
  ASSERT_FALSE(state.ok());
  EXPECT_NE(std::string(state.status().message()).find("task-7.jsonl"), std::string::npos) << state.status().message();
}

TEST_F(SlurmSweepTest, LocalSweepDirectoryIsNotASlurmOne) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "plan.json") << R"({"variants": []})";
  absl::StatusOr<SlurmSweepState> state = ReadSlurmSweep(dir_.string());
  ASSERT_FALSE(state.ok());
  EXPECT_NE(std::string(state.status().message()).find("holds a local sweep"), std::string::npos);
  EXPECT_FALSE(ReadSlurmSweep((dir_ / "nothing").string()).ok());
}

TEST_F(SlurmSweepTest, MergeLinksIrDiffsWrittenAfterTheTaskFinished) {
  ASSERT_TRUE(WriteSlurmSweep(sweep_, slurm_).ok());
  Record(1, {"c", "d"}, true);
  fs::create_directories(dir_ / "diffs");
  std::ofstream(dir_ / "diffs/c.diff") << "-a\n+b\n";  // "d" changed nothing: no diff
  absl::StatusOr<SlurmSweepState> state = ReadSlurmSweep(dir_.string());
  ASSERT_TRUE(state.ok()) << state.status().message();
  for (const Json& r : state->records) {
    if (r["variant"] == "c") {
      EXPECT_EQ(r["ir_diff"], "diffs/c.diff");
    }
    if (r["variant"] == "d" || r["variant"] == "baseline") {
      EXPECT_FALSE(r.contains("ir_diff")) << r.dump();
    }
  }
}

TEST_F(SlurmSweepTest, RunTaskChecksItsNumberAndThePlan) {
  ASSERT_TRUE(WriteSlurmSweep(sweep_, slurm_).ok());
  absl::Status out_of_range = RunSlurmTask(dir_.string(), 3, "/bin/false", false);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(std::string(out_of_range.message()).find("has tasks 0-2"), std::string::npos) << out_of_range.message();
  std::ofstream(dir_ / "input.hlo") << "HloModule changed\n";
  absl::Status changed = RunSlurmTask(dir_.string(), 0, "/bin/false", false);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(std::string(changed.message()).find("changed after the sweep was planned"), std::string::npos)
      << changed.message();
}

}  // namespace
}  // namespace passlab
