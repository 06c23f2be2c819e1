// The GUI's state API, driven the way the panels drive it, without a window:
// load, toggle, compile, select, run, emit, and the ablation report/sweep.
#include "gui/state/app_state.h"
#include "passes/autotune/library_call_autotuner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "passes/registry.h"

namespace passlab::gui {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// add(x, 0) for algsimp to fold, a duplicate for cse, a dead multiply for dce.
constexpr char kModule[] = R"(HloModule m
ENTRY e {
  x = f32[8,16] parameter(0)
  y = f32[16,4] parameter(1)
  z = f32[] constant(0)
  zb = f32[8,16] broadcast(z), dimensions={}
  a = f32[8,16] add(x, zb)
  t1 = f32[8,16] tanh(a)
  t2 = f32[8,16] tanh(a)
  s = f32[8,16] add(t1, t2)
  dead = f32[8,16] multiply(s, s)
  ROOT d = f32[8,4] dot(s, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

class AppStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("passlab_gui_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    file_ = (dir_ / "m.hlo").string();
    std::ofstream(file_) << kModule;
    InitAppState(state_, (dir_ / "recent.txt").string());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Occurrences of `pass` that run on the test module: it has one
  // partition, so the spmd-partitioner sub-pipeline skips it.
  std::vector<int64_t> Ids(std::string_view pass) const {
    std::vector<int64_t> ids;
    for (const PassOccurrence& o : state_.occurrences) {
      if (o.pass_name == pass && o.pipeline_path.find("spmd-partitioner") == std::string::npos) ids.push_back(o.id);
    }
    return ids;
  }
  std::vector<int64_t> AllIds(std::string_view pass) const {
    std::vector<int64_t> ids;
    for (const PassOccurrence& o : state_.occurrences) {
      if (o.pass_name == pass) ids.push_back(o.id);
    }
    return ids;
  }
  bool HasError(std::string_view where_part, std::string_view message_part) const {
    for (const LogEntry& e : state_.log) {
      if (e.level == LogLevel::kError && e.where.find(where_part) != std::string::npos &&
          e.message.find(message_part) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

  std::filesystem::path dir_;
  std::string file_;
  AppState state_;
};

TEST_F(AppStateTest, PipelineTreeHasEveryRegisteredOccurrence) {
  ASSERT_FALSE(state_.occurrences.empty());
  ASSERT_FALSE(state_.groups.empty());
  int64_t leaves = 0;
  for (const PipelineGroup& g : state_.groups) {
    for (const PipelineGroup::Item& item : g.items) leaves += item.is_group ? 0 : 1;
  }
  EXPECT_EQ(leaves, static_cast<int64_t>(state_.occurrences.size()));
  for (const PassOccurrence& o : state_.occurrences) {
    EXPECT_NE(FindRegisteredPass(o.pass_name), nullptr) << o.pass_name;
  }
  // The fixed point is a nested group under its sub-pipeline.
  bool nested = false;
  for (const PipelineGroup& g : state_.groups) nested |= g.path.ends_with("/simplification") && g.parent > 0;
  EXPECT_TRUE(nested);
}

TEST_F(AppStateTest, LoadCompilesAndRecordsPerOccurrenceBadges) {
  LoadFile(state_, file_);
  WaitUntilIdle(state_);
  ASSERT_NE(state_.loaded, nullptr);
  ASSERT_NE(state_.pipeline_result, nullptr);
  const PipelineResult& r = *state_.pipeline_result;
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_NE(r.optimized, nullptr);
  EXPECT_LT(r.instructions_after, r.instructions_before);
  // algsimp folded add(x, 0): its first occurrence changed the module and
  // removed instructions; dce removed the dead multiply.
  const OccurrenceResult& algsimp = r.occurrences[Ids("algsimp").front()];
  EXPECT_TRUE(algsimp.changed());
  EXPECT_GE(algsimp.runs, 1);
  EXPECT_LT(algsimp.delta_instructions, 0);
  bool dce_removed = false;
  for (int64_t id : Ids("dce")) dce_removed |= r.occurrences[id].delta_instructions < 0;
  EXPECT_TRUE(dce_removed);
  // The snapshot after the first algsimp no longer has the add of zero.
  std::shared_ptr<const std::string> before = r.Text(algsimp.fingerprint_before);
  std::shared_ptr<const std::string> after = r.Text(algsimp.fingerprint_after);
  ASSERT_NE(before, nullptr);
  ASSERT_NE(after, nullptr);
  EXPECT_THAT(*before, HasSubstr("%zb"));
  EXPECT_NE(*before, *after);
  // The fixed point reports its iterations.
  ASSERT_FALSE(r.fixed_points.empty());
  EXPECT_GE(r.fixed_points.front().iterations, 2);
  // The recent-files list remembers the file.
  ASSERT_FALSE(state_.recent_files.empty());
  EXPECT_EQ(std::filesystem::path(state_.recent_files.front()).filename(), "m.hlo");
}

TEST_F(AppStateTest, TogglingAPassSkipsItAndNamesItInTheCliFilter) {
  LoadFile(state_, file_);
  WaitUntilIdle(state_);
  SetPassEnabled(state_, "algsimp", false);
  EXPECT_EQ(DisableFilter(state_), "algsimp");
  EXPECT_FALSE(PassFullyEnabled(state_, "algsimp"));
  WaitUntilIdle(state_);  // auto-compile
  ASSERT_NE(state_.pipeline_result, nullptr);
  for (int64_t id : Ids("algsimp")) {
    EXPECT_EQ(state_.pipeline_result->occurrences[id].runs, 0);
    EXPECT_GE(state_.pipeline_result->occurrences[id].skipped_runs, 1);
  }
  SetPassEnabled(state_, "algsimp", true);
  // A pass that occurs more than once, with only its first occurrence on:
  // the filter names the others by id.
  std::string multi;
  for (const PassOccurrence& o : state_.occurrences) {
    if (Ids(o.pass_name).size() >= 2) {
      multi = o.pass_name;
      break;
    }
  }
  ASSERT_FALSE(multi.empty());
  std::vector<int64_t> ids = Ids(multi);
  SetPassEnabled(state_, multi, false);
  SetOccurrenceEnabled(state_, ids[0], true);
  std::string expected;
  for (int64_t id : AllIds(multi)) {
    if (id != ids[0]) expected += (expected.empty() ? "@" : ",@") + std::to_string(id);
  }
  EXPECT_EQ(DisableFilter(state_), expected);
  WaitUntilIdle(state_);
  EXPECT_GE(state_.pipeline_result->occurrences[ids[0]].runs, 1);
  EXPECT_EQ(state_.pipeline_result->occurrences[ids[1]].runs, 0);
  EXPECT_EQ(state_.pipeline_result->disable_filter, expected);
}

TEST_F(AppStateTest, PresetsSetEveryOccurrence) {
  state_.auto_compile = false;
  ApplyPreset(state_, PassPreset::kNone);
  for (char e : state_.enabled) EXPECT_FALSE(e);
  ApplyPreset(state_, PassPreset::kRequiredOnly);
  for (const PassOccurrence& o : state_.occurrences) {
    EXPECT_EQ(static_cast<bool>(state_.enabled[o.id]), FindRegisteredPass(o.pass_name)->required) << o.pass_name;
  }
  ApplyPreset(state_, PassPreset::kAll);
  EXPECT_EQ(DisableFilter(state_), "");
}

TEST_F(AppStateTest, SelectingAnOccurrenceGivesItsDiff) {
  LoadFile(state_, file_);
  WaitUntilIdle(state_);
  const int64_t id = Ids("algsimp").front();
  SelectOccurrence(state_, id);
  EXPECT_EQ(state_.selected_occurrence, id);
  const OccurrenceResult& o = state_.pipeline_result->occurrences[id];
  const PipelineResult& r = *state_.pipeline_result;
  // The first request starts the diff on a job (it may already be done when
  // the machine is idle, so only the cached result is checked).
  DiffFor(state_, o.fingerprint_before, o.fingerprint_after, r.Text(o.fingerprint_before), r.Text(o.fingerprint_after),
          true);
  WaitUntilIdle(state_);
  std::shared_ptr<const DiffModel> d = DiffFor(state_, o.fingerprint_before, o.fingerprint_after, nullptr, nullptr, true);
  ASSERT_NE(d, nullptr);
  EXPECT_GT(d->removed, 0);
  EXPECT_FALSE(d->line_change_starts.empty());
  EXPECT_EQ(d->line_change_starts.size(), d->row_change_starts.size());
  ASSERT_TRUE(d->has_structural) << d->structural_error;
  EXPECT_FALSE(d->structural.removed.empty());
  EXPECT_THAT(d->summary, HasSubstr("instructions"));
  // The selected run is algsimp's own first run: cse (later in the fixed
  // point) has not removed t2 yet; the span from its first to its last run
  // has. The dead multiply is gone before either: the "sharding-removal"
  // sub-pipeline ends with a dce, as XLA's does (gpu_compiler.cc,
  // RunSPMDPasses).
  ASSERT_GE(o.run_list.size(), 2u);
  EXPECT_EQ(state_.selected_run, o.FirstChangedRun());
  auto [run_before, run_after] = SelectedFingerprints(state_);
  EXPECT_EQ(run_before, o.run_list[state_.selected_run].fingerprint_before);
  EXPECT_THAT(*r.Text(run_before), Not(HasSubstr("%dead")));
  EXPECT_THAT(*r.Text(run_after), HasSubstr("%t2"));
  EXPECT_THAT(*r.Text(o.fingerprint_after), Not(HasSubstr("%dead")));
  SelectRun(state_, -1);
  EXPECT_EQ(SelectedFingerprints(state_), std::make_pair(o.fingerprint_before, o.fingerprint_after));
  // The text model of the result indexes definitions.
  TextFor(state_, o.fingerprint_after, r.Text(o.fingerprint_after));
  WaitUntilIdle(state_);
  std::shared_ptr<const TextModel> t = TextFor(state_, o.fingerprint_after, nullptr);
  ASSERT_NE(t, nullptr);
  int64_t line = t->FindDefinition("%d");
  ASSERT_GE(line, 0);
  EXPECT_THAT(std::string(t->lines[line]), HasSubstr("dot("));
}

TEST_F(AppStateTest, LoadErrorsLandInTheLogWithTheirLocation) {
  std::string bad = (dir_ / "bad.hlo").string();
  std::ofstream(bad) << "HloModule m\nENTRY e {\n  x = f32[2] frobnicate()\n}\n";
  LoadFile(state_, bad);
  WaitUntilIdle(state_);
  EXPECT_EQ(state_.loaded, nullptr);
  EXPECT_TRUE(HasError("load", "bad.hlo:3:")) << (state_.log.empty() ? "" : state_.log.back().message);
  LoadFile(state_, (dir_ / "missing.hlo").string());
  WaitUntilIdle(state_);
  EXPECT_TRUE(HasError("load", "cannot open"));
  LoadModel(state_, "no_such_model", {});
  WaitUntilIdle(state_);
  EXPECT_TRUE(HasError("load no_such_model", "no_such_model"));
}

TEST_F(AppStateTest, RunTimesEveryKernelAndFindsItsHlo) {
  LoadFile(state_, file_);
  WaitUntilIdle(state_);
  state_.run_settings.repeats = 2;
  StartRun(state_);
  WaitUntilIdle(state_);
  ASSERT_NE(state_.run_result, nullptr) << (state_.log.empty() ? "" : state_.log.back().message);
  const KernelSummary& s = state_.run_result->profile.summary;
  ASSERT_FALSE(s.rows.empty());
  EXPECT_EQ(state_.run_result->profile.wall_ms.size(), 2u);
  EXPECT_FALSE(state_.run_result->profile.last_step.empty());
  std::string hlo = KernelHlo(*state_.run_result, s.rows.front().name, s.rows.front().computation);
  EXPECT_THAT(hlo, HasSubstr(s.rows.front().name));
  EXPECT_EQ(state_.run_result->device, "cpu");
  EXPECT_EQ(state_.run_result->device_description, "cpu");
  EXPECT_TRUE(state_.run_status.ok()) << state_.run_status;
}

// RunSettings::args_dir (passlab-gui --args DIR): the run takes the real
// arguments through core/eval/arguments.h, and a directory that does not fit
// the module is the run's error.
TEST_F(AppStateTest, RunTakesRealArgumentsFromADirectory) {
  const std::string replay = std::string(PASSLAB_SOURCE_DIR) + "/test/cli/data/replay";
  LoadFile(state_, replay + "/module.hlo");
  WaitUntilIdle(state_);
  state_.run_settings.repeats = 2;
  state_.run_settings.args_dir = replay;
  StartRun(state_);
  WaitUntilIdle(state_);
  ASSERT_NE(state_.run_result, nullptr) << (state_.log.empty() ? "" : state_.log.back().message);
  EXPECT_TRUE(state_.run_status.ok()) << state_.run_status;
  state_.run_settings.args_dir = (dir_ / "no_such_dir").string();
  StartRun(state_);
  WaitUntilIdle(state_);
  EXPECT_FALSE(state_.run_status.ok());
  EXPECT_THAT(std::string(state_.run_status.message()), HasSubstr("not a directory of .npy files"));
}

TEST_F(AppStateTest, RunRowsCarryTheCostModelsEstimate) {
  LoadFile(state_, file_);
  WaitUntilIdle(state_);
  state_.run_settings.repeats = 2;
  StartRun(state_);
  WaitUntilIdle(state_);
  ASSERT_NE(state_.run_result, nullptr);
  // On the CPU, priority fusion's cpu entry estimates every kernel.
  EXPECT_EQ(state_.run_result->cost_model, "cpu");
  int64_t estimated = 0;
  for (const KernelSummaryRow& r : state_.run_result->profile.summary.rows) estimated += r.estimate_ns > 0;
  EXPECT_GT(estimated, 0);
}

TEST_F(AppStateTest, SwitchingPipelineRebuildsTheTreeAndRecompiles) {
  LoadFile(state_, file_);
  WaitUntilIdle(state_);
  EXPECT_EQ(state_.pipeline_name, "gpu");
  EXPECT_FALSE(Ids("priority-fusion").empty());
  EXPECT_TRUE(Ids("fusion_merger").empty());
  ASSERT_TRUE(SetPipeline(state_, "gpu-2021"));
  WaitUntilIdle(state_);
  EXPECT_EQ(state_.pipeline_name, "gpu-2021");
  EXPECT_TRUE(Ids("priority-fusion").empty());
  EXPECT_FALSE(Ids("fusion_merger").empty());
  EXPECT_EQ(state_.groups.front().path, "gpu-2021");
  // Every occurrence enabled again, and the module compiled with it.
  EXPECT_EQ(std::count(state_.enabled.begin(), state_.enabled.end(), 1),
            static_cast<int64_t>(state_.occurrences.size()));
  ASSERT_NE(state_.pipeline_result, nullptr);
  EXPECT_EQ(state_.pipeline_result->occurrences.size(), state_.occurrences.size());
  // An unknown name changes nothing and says why.
  EXPECT_FALSE(SetPipeline(state_, "gpu-2019"));
  EXPECT_EQ(state_.pipeline_name, "gpu-2021");
  EXPECT_TRUE(HasError("pipeline", "unknown pipeline 'gpu-2019'"));
}

// Without a driver, a device or the backend built (this is what CI has), a
// cuda run fails with the reason in the run status and the log, and a CPU
// run right after works. Where a GPU is present the cuda run must succeed.
TEST_F(AppStateTest, CudaRunNamesWhyItCannotRunAndTheCpuStillRuns) {
  LoadFile(state_, file_);
  WaitUntilIdle(state_);
  state_.run_settings.device = "cuda";
  state_.run_settings.repeats = 2;
  StartRun(state_);
  WaitUntilIdle(state_);
  if (state_.run_result != nullptr) {
    EXPECT_TRUE(state_.run_status.ok()) << state_.run_status;
    EXPECT_EQ(state_.run_result->device, "cuda");
    EXPECT_THAT(state_.run_result->device_description, ::testing::StartsWith("cuda:0"));
    EXPECT_EQ(state_.run_result->profile.wall_ms.size(), 2u);
    EXPECT_FALSE(state_.run_result->profile.summary.rows.empty());
  } else {
    ASSERT_FALSE(state_.run_status.ok());
    EXPECT_THAT(std::string(state_.run_status.message()),
                ::testing::ContainsRegex("^cuda: .*(no CUDA driver|no CUDA device|the cuda backend was not built)"));
    EXPECT_TRUE(HasError("run", std::string(state_.run_status.message())));
  }
  EXPECT_EQ(state_.run_job, nullptr);

  state_.run_settings.device = "cpu";
  StartRun(state_);
  WaitUntilIdle(state_);
  ASSERT_NE(state_.run_result, nullptr) << (state_.log.empty() ? "" : state_.log.back().message);
  EXPECT_TRUE(state_.run_status.ok()) << state_.run_status;
  EXPECT_EQ(state_.run_result->device, "cpu");
  EXPECT_FALSE(state_.run_result->profile.summary.rows.empty());
}

TEST_F(AppStateTest, UnknownRunDeviceIsLoggedAndStartsNothing) {
  EXPECT_TRUE(IsRunDevice("cpu"));
  EXPECT_TRUE(IsRunDevice("cuda"));
  EXPECT_FALSE(IsRunDevice("tpu"));
  LoadFile(state_, file_);
  WaitUntilIdle(state_);
  state_.run_settings.device = "tpu";
  StartRun(state_);
  EXPECT_EQ(state_.run_job, nullptr);
  EXPECT_TRUE(HasError("run", "unknown device 'tpu'"));
}

// Choosing the device also chooses where the algorithm pickers time: on a
// GPU they time cuDNN/cuBLASLt there and the module is recompiled; without
// one the log says why they stay on the CPU, and nothing recompiles.
TEST_F(AppStateTest, TheRunDeviceIsWhereTheAlgorithmPickersTime) {
  LoadFile(state_, file_);
  WaitUntilIdle(state_);
  SetRunDevice(state_, "cuda");
  EXPECT_EQ(state_.run_settings.device, "cuda");
  const std::optional<AlgorithmTimer>& timer = state_.autotune_timer;
  EXPECT_FALSE(CurrentAlgorithmTimer().has_value());  // the window's session, not the process
  if (timer.has_value()) {
    EXPECT_THAT(timer->device, ::testing::StartsWith("cuda:0"));
    EXPECT_NE(state_.compile_job, nullptr);  // recompiling with the device's choices
  } else {
    bool warned = false;
    for (const LogEntry& e : state_.log) {
      warned |= e.level == LogLevel::kWarning && e.where == "autotune" &&
                e.message.find("keep timing on cpu") != std::string::npos &&
                std::regex_search(e.message, std::regex("no CUDA driver|no CUDA device|the cuda backend was not built"));
    }
    EXPECT_TRUE(warned) << state_.log.back().message;
    EXPECT_EQ(state_.compile_job, nullptr);
  }
  WaitUntilIdle(state_);
  SetRunDevice(state_, "cpu");
  EXPECT_EQ(state_.run_settings.device, "cpu");
  EXPECT_FALSE(state_.autotune_timer.has_value());
  WaitUntilIdle(state_);
  SetRunDevice(state_, "tpu");
  EXPECT_EQ(state_.run_settings.device, "cpu");
  EXPECT_TRUE(HasError("run", "unknown device 'tpu'"));
}

TEST_F(AppStateTest, EmitterKeepsTheMlirAfterEveryEmitterPass) {
  LoadFile(state_, file_);
  WaitUntilIdle(state_);
  std::vector<std::string> candidates = EmitterCandidates(state_);
  ASSERT_FALSE(candidates.empty());
  StartEmitter(state_, candidates.front());
  WaitUntilIdle(state_);
  ASSERT_NE(state_.emitter_result, nullptr) << (state_.log.empty() ? "" : state_.log.back().message);
  const EmitterResult& e = *state_.emitter_result;
  EXPECT_EQ(e.kernel, candidates.front());
  ASSERT_GE(e.passes.size(), 2u);
  EXPECT_FALSE(e.passes.front().before.empty());
  EXPECT_THAT(e.passes.front().before, HasSubstr("func.func"));
  EXPECT_NE(e.passes.front().before, e.passes.back().after);
  StartEmitter(state_, "no_such_instruction");
  EXPECT_TRUE(HasError("emitter", "no_such_instruction"));
}

TEST_F(AppStateTest, ModelsLoadWithTheirOptions) {
  ModelOptions o;
  o.batch = 2;
  o.depth = 1;
  o.width = 8;
  LoadModel(state_, "mlp", o);
  WaitUntilIdle(state_);
  ASSERT_NE(state_.loaded, nullptr);
  EXPECT_EQ(state_.loaded->source.label, "mlp (batch 2, depth 1, width 8)");
  ASSERT_NE(state_.pipeline_result, nullptr);
  EXPECT_TRUE(state_.pipeline_result->status.ok()) << state_.pipeline_result->status;
}

}  // namespace
}  // namespace passlab::gui
