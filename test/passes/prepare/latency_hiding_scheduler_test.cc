#include "passes/prepare/latency_hiding_scheduler.h"

#include <string>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/collective_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

// Operands and control predecessors come before their users in every
// computation's instruction order (the schedule).
void ExpectTopological(const HloModule& m, const std::string& where = "") {
  for (const HloComputation* c : m.computations()) {
    absl::flat_hash_map<const HloInstruction*, size_t> position;
    std::vector<HloInstruction*> order = c->instructions();
    for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    for (size_t i = 0; i < order.size(); ++i) {
      for (const HloInstruction* op : order[i]->operands()) {
        EXPECT_LT(position.at(op), i) << where << ": " << order[i]->name() << " before its operand " << op->name();
      }
      for (const HloInstruction* pred : order[i]->control_predecessors()) {
        EXPECT_LT(position.at(pred), i) << where << ": " << order[i]->name() << " before its control predecessor "
                                        << pred->name();
      }
    }
  }
}

std::vector<std::string> Names(const HloComputation& c) {
  std::vector<std::string> names;
  for (const HloInstruction* i : c.instructions()) names.push_back(i->name());
  return names;
}

size_t Position(const HloComputation& c, const std::string& name) {
  std::vector<std::string> names = Names(c);
  return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

// Schedules through a pipeline (changed audit, multi-device evaluator
// before/after, verifier, text round trip) and checks the order.
CollectivePassResult Schedule(const std::string& hlo, LatencyHidingSchedulerOptions options = {}) {
  CollectivePassResult r = RunCollectivePass(std::make_unique<LatencyHidingScheduler>(options), hlo);
  if (r.module == nullptr) return r;
  EXPECT_TRUE(r.module->is_scheduled());
  ExpectTopological(*r.module);
  return r;
}

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(LatencyHidingSchedulerTest, MovesIndependentWorkBetweenAllReduceStartAndDone) {
  CollectivePassResult r = Schedule(std::string("HloModule m, num_partitions=2\n") + kAdd + R"(
ENTRY e {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  ars = f32[1024] all-reduce-start(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ard = f32[1024] all-reduce-done(ars)
  x = f32[1024] exponential(q)
  y = f32[1024] multiply(x, q)
  ROOT r = f32[1024] add(ard, y)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ars = ", "x = ", "y = ", "ard = ", "ROOT r"})) << r.text;
}

TEST(LatencyHidingSchedulerTest, OverlapsEveryAsyncKind) {
  // One pair per stream kind; the independent negate chain fills the gaps.
  CollectivePassResult r = Schedule(std::string("HloModule m, num_partitions=2\n") + kAdd + R"(
ENTRY e {
  p = f32[256] parameter(0)
  q = f32[256] parameter(1)
  ags = (f32[256], f32[512]) all-gather-start(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}
  agd = f32[512] all-gather-done(ags)
  cps = (f32[256], f32[256], u32[], u32[]) collective-permute-start(p), channel_id=2, source_target_pairs={{0,1},{1,0}}
  cpd = f32[256] collective-permute-done(cps)
  n1 = f32[256] negate(q)
  n2 = f32[256] exponential(n1)
  n3 = f32[256] negate(n2)
  sl = f32[256] slice(agd), slice={[0:256]}
  s1 = f32[256] add(sl, cpd)
  ROOT r = f32[256] add(s1, n3)
})");
  EXPECT_TRUE(r.changed);
  HloComputation* e = r.module->entry_computation();
  // Different collective kinds, different streams: both starts are issued
  // before any of the work.
  EXPECT_LT(Position(*e, "ags"), Position(*e, "n1")) << r.text;
  EXPECT_LT(Position(*e, "cps"), Position(*e, "n1")) << r.text;
  EXPECT_GT(Position(*e, "agd"), Position(*e, "n1")) << r.text;
  EXPECT_GT(Position(*e, "cpd"), Position(*e, "n1")) << r.text;
}

TEST(LatencyHidingSchedulerTest, HidesCopyStartAndAsyncStart) {
  PassResult r = RunPass(std::make_unique<LatencyHidingScheduler>(), R"(
HloModule m

wrapped {
  w = f32[4096] parameter(0)
  ROOT t = f32[4096] tanh(w)
}

ENTRY e {
  p = f32[4096] parameter(0)
  q = f32[4096] parameter(1)
  cs = (f32[4096], f32[4096], u32[]) copy-start(p)
  cd = f32[4096] copy-done(cs)
  as = ((f32[4096]), f32[4096], s32[]) async-start(q), calls=wrapped
  ad = f32[4096] async-done(as)
  x = f32[4096] sqrt(q)
  a = f32[4096] add(cd, ad)
  ROOT r = f32[4096] add(a, x)
})");
  EXPECT_TRUE(r.changed);
  ASSERT_NE(r.module, nullptr);
  ExpectTopological(*r.module);
  HloComputation* e = r.module->entry_computation();
  EXPECT_LT(Position(*e, "cs"), Position(*e, "x")) << r.text;
  EXPECT_LT(Position(*e, "as"), Position(*e, "x")) << r.text;
  EXPECT_GT(Position(*e, "cd"), Position(*e, "x")) << r.text;
  EXPECT_GT(Position(*e, "ad"), Position(*e, "x")) << r.text;
}

TEST(LatencyHidingSchedulerTest, IssuesTheStartBeforeIndependentWork) {
  // In the incoming order the independent work comes first; the chain that
  // feeds the start is preferred so that the work can hide its latency.
  CollectivePassResult r = Schedule(std::string("HloModule m, num_partitions=2\n") + kAdd + R"(
ENTRY e {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  x = f32[1024] exponential(q)
  y = f32[1024] multiply(x, q)
  a = f32[1024] negate(p)
  b = f32[1024] sqrt(a)
  ars = f32[1024] all-reduce-start(b), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ard = f32[1024] all-reduce-done(ars)
  ROOT r = f32[1024] add(ard, y)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"a = ", "b = ", "ars = ", "x = ", "y = ", "ard = "})) << r.text;
}

TEST(LatencyHidingSchedulerTest, OneCollectiveInFlightPerStreamByDefault) {
  // Two all-reduces on the collective stream: the second is issued after
  // the first is done; with two allowed in flight both go first.
  std::string hlo = std::string("HloModule m, num_partitions=2\n") + kAdd + R"(
ENTRY e {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  a1 = f32[1024] all-reduce-start(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  d1 = f32[1024] all-reduce-done(a1)
  a2 = f32[1024] all-reduce-start(q), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  d2 = f32[1024] all-reduce-done(a2)
  x = f32[1024] exponential(q)
  s = f32[1024] add(d1, d2)
  ROOT r = f32[1024] add(s, x)
})";
  CollectivePassResult one = Schedule(hlo);
  HloComputation* e = one.module->entry_computation();
  EXPECT_LT(Position(*e, "d1"), Position(*e, "a2")) << one.text;
  LatencyHidingSchedulerOptions two_in_flight;
  two_in_flight.max_in_flight_per_stream = 2;
  CollectivePassResult two = Schedule(hlo, two_in_flight);
  e = two.module->entry_computation();
  EXPECT_LT(Position(*e, "a2"), Position(*e, "d1")) << two.text;
  EXPECT_LT(Position(*e, "a2"), Position(*e, "x")) << two.text;
}

TEST(LatencyHidingSchedulerTest, MemoryLimitBoundsTheOverlap) {
  // Hiding the all-reduce behind exp+reduce keeps its f32[1024] result live
  // next to x: the peak doubles. The default budget (1.5x the incoming
  // peak) refuses that; a larger budget buys the overlap.
  std::string hlo = std::string("HloModule m, num_partitions=2\n") + kAdd + R"(
ENTRY e {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  c = f32[] constant(0)
  x = f32[1024] exponential(q)
  r1 = f32[] reduce(x, c), dimensions={0}, to_apply=add
  ars = f32[1024] all-reduce-start(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ard = f32[1024] all-reduce-done(ars)
  r2 = f32[] reduce(ard, c), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[]) tuple(r1, r2)
})";
  CollectivePassResult tight = Schedule(hlo);
  EXPECT_TRUE(Matches(tight.text, {"r1 = ", "ars = ", "ard = "})) << tight.text;
  HloComputation* e = tight.module->entry_computation();
  ScheduleEstimate kept = EstimateSchedule(*e, e->instructions());
  EXPECT_EQ(kept.peak_live_bytes, 4096 + 2 * 4);
  EXPECT_DOUBLE_EQ(kept.hidden_ns, 0);

  LatencyHidingSchedulerOptions roomy;
  roomy.memory_limit_bytes = 1 << 20;
  CollectivePassResult overlapped = Schedule(hlo, roomy);
  EXPECT_TRUE(Matches(overlapped.text, {"ars = ", "x = ", "r1 = ", "ard = "})) << overlapped.text;
  e = overlapped.module->entry_computation();
  ScheduleEstimate bought = EstimateSchedule(*e, e->instructions(), roomy);
  EXPECT_EQ(bought.peak_live_bytes, 2 * 4096 + 4);
  EXPECT_GT(bought.hidden_ns, 0);
  EXPECT_LT(bought.total_ns, kept.total_ns);
}

TEST(LatencyHidingSchedulerTest, WithoutAsyncOpsFreesBuffersEarly) {
  // The incoming order keeps both f32[1024] temporaries live at once; the
  // memory-aware order reduces one before computing the other.
  PassResult r = RunPass(std::make_unique<LatencyHidingScheduler>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[1024] parameter(0)
  zero = f32[] constant(0)
  a1 = f32[1024] exponential(p)
  b1 = f32[1024] negate(p)
  a2 = f32[] reduce(a1, zero), dimensions={0}, to_apply=add
  b2 = f32[] reduce(b1, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[]) tuple(a2, b2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"a1 = ", "a2 = ", "b1 = ", "b2 = "})) << r.text;
  HloComputation* e = r.module->entry_computation();
  // One temporary plus the two scalar results.
  EXPECT_EQ(EstimateSchedule(*e, e->instructions()).peak_live_bytes, 4096 + 2 * 4);
  ExpectModuleVerifies(r);
}

TEST(LatencyHidingSchedulerTest, OnlyMarksAnAlreadyGoodOrderScheduled) {
  // Nothing to improve: the order stays, only the flag changes; a second
  // run changes nothing.
  std::string hlo = R"(
ENTRY e {
  p = f32[16] parameter(0)
  a = f32[16] exponential(p)
  ROOT b = f32[16] negate(a)
})";
  PassResult r = RunPass(std::make_unique<LatencyHidingScheduler>(), hlo);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.module->is_scheduled());
  EXPECT_EQ(Names(*r.module->entry_computation()), (std::vector<std::string>{"p", "a", "b"}));
  HloPassPipeline again("again");
  again.AddPass<LatencyHidingScheduler>();
  absl::StatusOr<bool> changed = again.Run(*r.module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(*changed);
}

TEST(LatencyHidingSchedulerTest, RespectsControlPredecessors) {
  // Without the control edge b1 would be deferred behind a2 (it frees
  // nothing); the edge forces it before a1.
  PassResult r = RunPass(std::make_unique<LatencyHidingScheduler>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[1024] parameter(0)
  zero = f32[] constant(0)
  b1 = f32[1024] negate(p)
  a1 = f32[1024] exponential(p), control-predecessors={b1}
  a2 = f32[] reduce(a1, zero), dimensions={0}, to_apply=add
  b2 = f32[] reduce(b1, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[]) tuple(a2, b2)
})");
  ASSERT_NE(r.module, nullptr);
  ExpectTopological(*r.module);
  HloComputation* e = r.module->entry_computation();
  EXPECT_LT(Position(*e, "b1"), Position(*e, "a1")) << r.text;
}

TEST(LatencyHidingSchedulerTest, EdgeCaseSchedulesLoopBodiesAndKeepsFusionOrder) {
  CollectivePassResult r = Schedule(std::string("HloModule m, num_partitions=2\n") + kAdd + R"(
fused {
  f0 = f32[1024] parameter(0)
  f1 = f32[1024] negate(f0)
  f2 = f32[1024] exponential(f0)
  ROOT f3 = f32[1024] add(f1, f2)
}

cond {
  cp = (s32[], f32[1024], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  bp = (s32[], f32[1024], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[1024] get-tuple-element(bp), index=1
  w = f32[1024] get-tuple-element(bp), index=2
  ars = f32[1024] all-reduce-start(v), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ard = f32[1024] all-reduce-done(ars)
  fw = f32[1024] fusion(w), kind=kLoop, calls=fused
  one = s32[] constant(1)
  j = s32[] add(i, one)
  scale = f32[] constant(0.5)
  sb = f32[1024] broadcast(scale), dimensions={}
  v2 = f32[1024] multiply(ard, sb)
  ROOT t = (s32[], f32[1024], f32[1024]) tuple(j, v2, fw)
}

ENTRY e {
  p = f32[1024] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[1024], f32[1024]) tuple(zero, p, p)
  loop = (s32[], f32[1024], f32[1024]) while(init), condition=cond, body=body
  ROOT out = f32[1024] get-tuple-element(loop), index=1
})");
  EXPECT_TRUE(r.changed);
  HloComputation* body = r.module->GetComputationWithName("body");
  ASSERT_NE(body, nullptr);
  EXPECT_LT(Position(*body, "ars"), Position(*body, "fw")) << r.text;
  EXPECT_GT(Position(*body, "ard"), Position(*body, "fw")) << r.text;
  HloComputation* fused = r.module->GetComputationWithName("fused");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(Names(*fused), (std::vector<std::string>{"f0", "f1", "f2", "f3"}));
}

TEST(LatencyHidingSchedulerTest, ScheduleSurvivesTheTextRoundTrip) {
  CollectivePassResult r = Schedule(std::string("HloModule m, num_partitions=2\n") + kAdd + R"(
ENTRY e {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  ars = f32[1024] all-reduce-start(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ard = f32[1024] all-reduce-done(ars)
  x = f32[1024] exponential(q)
  ROOT r = f32[1024] add(ard, x)
})");
  std::string printed = PrintModule(*r.module);
  EXPECT_NE(printed.find("is_scheduled=true"), std::string::npos) << printed;
  absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseHloModule(printed, "scheduled.hlo");
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().message();
  EXPECT_TRUE((*reparsed)->is_scheduled());
  EXPECT_EQ(Names(*(*reparsed)->entry_computation()), Names(*r.module->entry_computation()));
  EXPECT_EQ(Names(*(*reparsed)->entry_computation()),
            (std::vector<std::string>{"p", "ars", "q", "x", "ard", "r"}));
}

TEST(LatencyHidingSchedulerTest, EstimateCountsHiddenAndExposedLatency) {
  auto m = ParseHloModule(std::string("HloModule m, num_partitions=2\n") + kAdd + R"(
ENTRY e {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  ars = f32[1024] all-reduce-start(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ard = f32[1024] all-reduce-done(ars)
  x = f32[1024] exponential(q)
  ROOT r = f32[1024] add(ard, x)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloComputation* e = (*m)->entry_computation();
  LatencyHidingSchedulerOptions o;  // latency 10000 + 4096 / 100; kernels 2000 + bytes / 2000
  double latency = o.collective_latency_ns + 4096 / o.collective_bytes_per_ns;
  double exp_cost = o.kernel_launch_ns + 8192 / o.memory_bytes_per_ns;
  double add_cost = o.kernel_launch_ns + 12288 / o.memory_bytes_per_ns;
  ScheduleEstimate serial = EstimateSchedule(*e, e->instructions(), o);
  EXPECT_DOUBLE_EQ(serial.hidden_ns, 0);
  EXPECT_DOUBLE_EQ(serial.exposed_ns, latency);
  EXPECT_DOUBLE_EQ(serial.total_ns, o.kernel_launch_ns + latency + exp_cost + add_cost);
  std::vector<HloInstruction*> overlapped = ScheduleComputation(*e, o);
  ScheduleEstimate best = EstimateSchedule(*e, overlapped, o);
  EXPECT_DOUBLE_EQ(best.hidden_ns, exp_cost);
  EXPECT_DOUBLE_EQ(best.exposed_ns, latency - exp_cost);
  EXPECT_EQ(best.overlapped_instructions, 1);
  EXPECT_LT(best.total_ns, serial.total_ns);
}

// Corpus: every module that parses and verifies still verifies after
// scheduling, each computation's order is topological, the printed schedule
// parses back to the same order, the model's estimate never gets worse, and
// where a pair had nothing between start and done while costed independent
// work existed, the schedule now hides latency.
TEST(LatencyHidingSchedulerTest, CorpusSchedulesStayValidAndHideLatency) {
  std::vector<std::pair<std::string, std::string>> texts = CorpusTextsWith("-start(");
  std::vector<std::pair<std::string, std::string>> plain = CorpusTextsWith(" fusion(");
  if (plain.size() > 150) plain.resize(150);
  texts.insert(texts.end(), plain.begin(), plain.end());
  if (texts.empty()) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  ParseOptions parse_options;
  parse_options.infer_shape = InferInstructionShape;
  LatencyHidingSchedulerOptions options;
  int candidates = 0, with_opportunity = 0, hidden = 0;
  for (const auto& [name, text] : texts) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, parse_options);
    if (!m.ok() || !VerifyModule(**m).ok()) continue;
    ++candidates;
    // Before: estimates of the incoming post orders, and whether some pair
    // sits back to back with costed work independent of it.
    std::vector<ScheduleEstimate> before;
    std::vector<bool> opportunity;
    std::vector<HloComputation*> computations;
    for (HloComputation* c : (*m)->MakeComputationPostOrder()) {
      if (c->IsFusionComputation()) continue;
      computations.push_back(c);
      std::vector<HloInstruction*> order = c->MakeInstructionPostOrder();
      before.push_back(EstimateSchedule(*c, order, options));
      bool found = false;
      for (size_t i = 0; i + 1 < order.size() && !found; ++i) {
        HloOpcode op = order[i]->opcode();
        bool start = op == HloOpcode::kAllReduceStart || op == HloOpcode::kAllGatherStart ||
                     op == HloOpcode::kCollectivePermuteStart || op == HloOpcode::kCopyStart;
        if (!start || order[i + 1]->operand_count() != 1 || order[i + 1]->operand(0) != order[i]) continue;
        // Costed work neither feeding the start nor using the done.
        absl::flat_hash_set<const HloInstruction*> related = {order[i], order[i + 1]};
        std::vector<const HloInstruction*> stack = {order[i]};
        while (!stack.empty()) {
          const HloInstruction* x = stack.back();
          stack.pop_back();
          for (const HloInstruction* op : x->operands()) {
            if (related.insert(op).second) stack.push_back(op);
          }
        }
        stack = {order[i + 1]};
        while (!stack.empty()) {
          const HloInstruction* x = stack.back();
          stack.pop_back();
          for (const HloInstruction* u : x->users()) {
            if (related.insert(u).second) stack.push_back(u);
          }
        }
        for (const HloInstruction* x : order) {
          HloOpcode xo = x->opcode();
          // Kernels: not free views, and not other async pairs (a
          // start-done pair is no work on the compute stream).
          bool costed = !(xo == HloOpcode::kParameter || xo == HloOpcode::kConstant ||
                          xo == HloOpcode::kGetTupleElement || xo == HloOpcode::kTuple || xo == HloOpcode::kBitcast ||
                          xo == HloOpcode::kAfterAll || xo == HloOpcode::kPartitionId ||
                          xo == HloOpcode::kReplicaId || HloOpcodeString(xo).ends_with("-start") ||
                          HloOpcodeString(xo).ends_with("-done") || HloOpcodeString(xo).ends_with("-update"));
          if (costed && !x->HasSideEffect() && !related.contains(x) && x->control_predecessors().empty() &&
              x->control_successors().empty()) {
            found = true;
            break;
          }
        }
      }
      opportunity.push_back(found);
    }
    HloPassPipeline pipeline("corpus");
    pipeline.AddPass<LatencyHidingScheduler>(options);
    absl::StatusOr<bool> changed = pipeline.Run(**m);
    ASSERT_TRUE(changed.ok()) << name << ": " << changed.status().message();
    EXPECT_TRUE((*m)->is_scheduled()) << name;
    absl::Status verified = VerifyModule(**m);
    EXPECT_TRUE(verified.ok()) << name << ": " << verified.message();
    ExpectTopological(**m, name);
    for (size_t k = 0; k < computations.size(); ++k) {
      HloComputation* c = computations[k];
      ScheduleEstimate after = EstimateSchedule(*c, c->instructions(), options);
      EXPECT_LE(after.total_ns, before[k].total_ns + 1e-6) << name << " " << c->name();
      if (!opportunity[k]) continue;
      ++with_opportunity;
      EXPECT_GT(after.hidden_ns, before[k].hidden_ns) << name << " " << c->name() << "\n" << PrintModule(**m);
      hidden += after.hidden_ns > before[k].hidden_ns ? 1 : 0;
    }
    absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseHloModule(PrintModule(**m), name, parse_options);
    ASSERT_TRUE(reparsed.ok()) << name << ": " << reparsed.status().message();
    EXPECT_TRUE((*reparsed)->is_scheduled()) << name;
    EXPECT_EQ(Names(*(*reparsed)->entry_computation()), Names(*(*m)->entry_computation())) << name;
  }
  EXPECT_GT(candidates, 100);
  EXPECT_GE(with_opportunity, 5);  // 5 computations when this test was written
  RecordProperty("candidates", candidates);
  RecordProperty("with_opportunity", with_opportunity);
  RecordProperty("hidden", hidden);
}

}  // namespace
}  // namespace passlab
