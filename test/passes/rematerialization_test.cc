#include "passes/prepare/rematerialization.h"

#include <string>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "passes/prepare/latency_hiding_scheduler.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<Rematerialization> Remat(int64_t limit) {
  return std::make_unique<Rematerialization>(RematerializationOptions{.memory_limit_bytes = limit});
}

int64_t EntryPeak(const HloModule& m) {
  const HloComputation* e = m.entry_computation();
  return EstimateSchedule(*e, e->instructions()).peak_live_bytes;
}

// b is used early (x) and late (s); exp/sqrt temporaries peak in between.
constexpr char kLateUse[] = R"(
HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  c = f32[] parameter(1)
  ROOT s = f32[] add(a, c)
}

ENTRY e {
  p = f32[1024] parameter(0)
  zero = f32[] constant(0)
  two = f32[] constant(2)
  b = f32[1024] broadcast(two), dimensions={}
  x = f32[1024] multiply(p, b)
  y1 = f32[1024] exponential(x)
  y2 = f32[1024] sqrt(y1)
  r1 = f32[] reduce(y2, zero), dimensions={0}, to_apply=add
  s = f32[] reduce(b, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[]) tuple(r1, s)
})";

TEST(RematerializationTest, RecomputesBroadcastNextToItsLateUse) {
  auto before = ParseHloModule(kLateUse);
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_EQ(EntryPeak(**before), 3 * 4096);  // b, x or y1, y1 or y2
  PassResult r = RunPass(Remat(10000), kLateUse);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%b = f32[1024]{0} broadcast(%two)", "%x = ", "%r1 = ",
                               "%b.remat = f32[1024]{0} broadcast(%two)", "%s = f32[] reduce(%b.remat, %zero)"}))
      << r.text;
  EXPECT_EQ(EntryPeak(*r.module), 2 * 4096);
  ExpectModuleVerifies(r);
}

TEST(RematerializationTest, MovesAValueWithOnlyLateUses) {
  std::string hlo = kLateUse;
  hlo.replace(hlo.find("multiply(p, b)"), 14, "multiply(p, p)");
  PassResult r = RunPass(Remat(10000), hlo);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%r1 = ", "%b.remat = f32[1024]{0} broadcast(%two)", "reduce(%b.remat, %zero)",
                               "NOT:%b = "}))
      << r.text;
  EXPECT_EQ(EntryPeak(*r.module), 2 * 4096);
}

TEST(RematerializationTest, DoesNothingWithoutALimit) {
  // The default: no memory limit, nothing to do (the pass counts why).
  EXPECT_FALSE(RunPass(std::make_unique<Rematerialization>(), kLateUse).changed);
  // A limit the schedule already meets.
  EXPECT_FALSE(RunPass(Remat(3 * 4096), kLateUse).changed);
}

TEST(RematerializationTest, NeedsASchedule) {
  std::string hlo = kLateUse;
  hlo.replace(hlo.find(", is_scheduled=true"), 19, "");
  EXPECT_FALSE(RunPass(Remat(1), hlo).changed);
}

TEST(RematerializationTest, KeepsValuesThatAreNotCheapToRecompute) {
  // b reads a full-size temporary: recomputing it would keep that live.
  std::string hlo = kLateUse;
  hlo.replace(hlo.find("b = f32[1024] broadcast(two), dimensions={}"), 43,
              "e0 = f32[1024] exponential(p)\n  b = f32[1024] negate(e0)");
  PassResult r = RunPass(Remat(1), hlo);
  EXPECT_FALSE(r.changed) << r.text;
}

// Corpus: schedule, then rematerialize under a 1-byte limit (as much as it
// can): every module still verifies, stays topological and computes the
// same values (CheckPassOnCorpus), and no computation's peak grows.
TEST(RematerializationTest, CorpusPeaksOnlyDropAndValuesStay) {
  auto schedule_then_remat = [] {
    auto p = std::make_unique<HloPassPipeline>("schedule-remat");
    p->AddPass<LatencyHidingScheduler>();
    p->AddPass<Rematerialization>(RematerializationOptions{.memory_limit_bytes = 1});
    return p;
  };
  CorpusPassStats stats = CheckPassOnCorpus(" broadcast(", schedule_then_remat);
  if (stats.candidates == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  EXPECT_GT(stats.evaluated, 50);

  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  int lowered = 0;
  int checked = 0;
  for (const auto& [name, text] : CorpusTextsWith(" broadcast(")) {
    if (++checked > 400) break;
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, options);
    if (!m.ok() || !VerifyModule(**m).ok()) continue;
    HloPassPipeline schedule("schedule");
    schedule.AddPass<LatencyHidingScheduler>();
    ASSERT_TRUE(schedule.Run(**m).ok()) << name;
    std::vector<std::pair<HloComputation*, int64_t>> peaks;
    for (HloComputation* c : (*m)->MakeComputationPostOrder()) {
      if (!c->IsFusionComputation()) peaks.emplace_back(c, EstimateSchedule(*c, c->instructions()).peak_live_bytes);
    }
    HloPassPipeline remat("remat");
    remat.AddPass<Rematerialization>(RematerializationOptions{.memory_limit_bytes = 1});
    absl::StatusOr<bool> changed = remat.Run(**m);
    ASSERT_TRUE(changed.ok()) << name << ": " << changed.status().message();
    EXPECT_TRUE(VerifyModule(**m).ok()) << name;
    for (const auto& [c, peak] : peaks) {
      int64_t after = EstimateSchedule(*c, c->instructions()).peak_live_bytes;
      EXPECT_LE(after, peak) << name << " " << c->name();
      lowered += after < peak ? 1 : 0;
    }
  }
  EXPECT_GT(lowered, 0);
  RecordProperty("lowered", lowered);
}

}  // namespace
}  // namespace passlab
