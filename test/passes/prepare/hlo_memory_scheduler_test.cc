// Tests of HloMemoryScheduler ("hlo-memory-scheduler"). Several follow XLA's
// xla/hlo/transforms/simplifiers/hlo_memory_scheduler_test.cc (named in
// each test); the GPU post-processing follows xla/service/gpu/
// gpu_hlo_schedule.cc (PostProcessSchedule).
#include "passes/prepare/hlo_memory_scheduler.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/codegen/compiled_kernel.h"
#include "core/ir/hlo_computation.h"
#include "core/backends/cpu/executable.h"
#include "test/instruction_evaluator.h"
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

// Schedules through a pipeline (changed audit, evaluator before/after) and
// checks that the result is a scheduled, topological, verified module.
PassResult Schedule(const std::string& hlo, const std::string& algorithm = "default", bool postprocess = true) {
  HloMemorySchedulerOptions options;
  options.algorithm = algorithm;
  options.gpu_postprocess = postprocess;
  PassResult r = RunPass(std::make_unique<HloMemoryScheduler>(options), hlo);
  if (r.module == nullptr) return r;
  EXPECT_TRUE(r.module->is_scheduled());
  ExpectTopological(*r.module, algorithm);
  ExpectModuleVerifies(r);
  return r;
}

const std::vector<std::string> kAlgorithms = {"default", "list", "dfs", "postorder"};

// XLA: HloSchedulingTest.LastUseScheduledFirst (run through the pass, so
// the default scheduler). add is the last use of ab: placing it before
// negate frees ab's buffer. Buffers are 168 bytes, param held throughout.
//   list: param exp negate ab add sub (exp has more users; then ab and
//         negate tie and the newer, negate, goes first): at add param, exp,
//         negate, ab and add are live: 840.
//   dfs:  param exp ab add negate sub (add's chain is larger): 672.
//   postorder: param ab exp add negate sub: 672.
// The default keeps dfs.
constexpr char kLastUse[] = R"(
HloModule m

ENTRY e {
  param = f32[42] parameter(0)
  ab = f32[42] abs(param)
  exp = f32[42] exponential(param)
  add = f32[42] add(ab, exp)
  negate = f32[42] negate(exp)
  ROOT sub = f32[42] subtract(add, negate)
})";

TEST(HloMemorySchedulerTest, SchedulesTheLastUseFirst) {
  PassResult r = Schedule(kLastUse);
  ASSERT_NE(r.module, nullptr);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(SimulatePeakMemory(*r.module), 672);
  EXPECT_EQ(Names(*r.module->entry_computation()),
            (std::vector<std::string>{"param", "exp", "ab", "add", "negate", "sub"}));
  PassResult list = Schedule(kLastUse, "list");
  ASSERT_NE(list.module, nullptr);
  EXPECT_EQ(Names(*list.module->entry_computation()),
            (std::vector<std::string>{"param", "exp", "negate", "ab", "add", "sub"}));
  EXPECT_EQ(SimulatePeakMemory(*list.module), 840);
  HloComputation* e = r.module->entry_computation();
  EXPECT_EQ(Names(*e).front(), "param");
  EXPECT_EQ(Names(*e).back(), "sub");
  EXPECT_LT(Position(*e, "add"), Position(*e, "negate")) << r.text;
}

// XLA: HloSchedulingTest.ListSchedulerHandlesAliasing. d and e are ready
// together; d is the last use of p1 (through the tuple t) and goes first.
constexpr char kAliasing[] = R"(
HloModule test_aliasing_module

ENTRY root {
  param = s32[1000] parameter(0)
  p0 = s32[1000] copy(param)
  p1 = s32[1000] copy(param)
  t = (s32[1000], s32[1000]) tuple(p0, p1)
  a = s32[1000] get-tuple-element(t), index=0
  b = s32[1000] get-tuple-element(t), index=1
  c = s32[1000] add(a, b)
  d = s32[1000] add(c, b)
  e = s32[1000] add(c, c)
  f = s32[1000] add(e, e)
  ROOT result = (s32[1000], s32[1000], s32[1000]) tuple(d, e, f)
})";

TEST(HloMemorySchedulerTest, ListSchedulerFollowsBuffersThroughTuples) {
  PassResult r = Schedule(kAliasing, "list");
  ASSERT_NE(r.module, nullptr);
  HloComputation* e = r.module->entry_computation();
  EXPECT_EQ(Names(*e).front(), "param");
  EXPECT_EQ(Names(*e).back(), "result");
  EXPECT_LT(Position(*e, "d"), Position(*e, "e")) << r.text;
}

TEST(HloMemorySchedulerTest, TupleDefinesItsPointerTable) {
  // XLA: HloSchedulingTest.TuplesAreAccountedCorrectly. Once abs_abs1 is
  // placed, `tuple` (defines its 8-byte pointer table, frees nothing) and
  // abs_abs2 (frees abs_const's 24 bytes, defines 24) are ready: 0 > -8.
  PassResult r = Schedule(R"(
HloModule m

ENTRY e {
  lit = f32[6] constant({1, 1, 1, 1, 1, 1})
  abs_const = f32[6] abs(lit)
  abs_abs1 = f32[6] abs(abs_const)
  tuple = (f32[6]) tuple(abs_abs1)
  tuple_elm = f32[6] get-tuple-element(tuple), index=0
  abs_abs2 = f32[6] abs(abs_const)
  ROOT add = f32[6] add(tuple_elm, abs_abs2)
})",
                          "list");
  ASSERT_NE(r.module, nullptr);
  HloComputation* e = r.module->entry_computation();
  EXPECT_LT(Position(*e, "abs_abs2"), Position(*e, "tuple")) << r.text;
}

TEST(HloMemorySchedulerTest, MultiOutputFusionDefinesEveryOutput) {
  // XLA: HloSchedulingTest.MultiOutputFusionAccountedCorrectly. The fusion
  // defines 16 (pointer table) + 20 + 20 bytes, exp 20: exp goes first.
  PassResult r = Schedule(R"(
HloModule m

fused {
  f1 = f32[5] parameter(0)
  f2 = f32[5] parameter(1)
  f3 = f32[5] parameter(2)
  fadd = f32[5] add(f1, f2)
  fmul = f32[5] multiply(fadd, f3)
  ROOT ft = (f32[5], f32[5]) tuple(fadd, fmul)
}

ENTRY e {
  c1 = f32[5] constant({1, 1, 1, 1, 1})
  c2 = f32[5] constant({1, 2, 3, 4, 5})
  c3 = f32[5] constant({0, 2, 4, 6, 8})
  fusion = (f32[5], f32[5]) fusion(c1, c2, c3), kind=kLoop, calls=fused
  tuple_elm = f32[5] get-tuple-element(fusion), index=0
  exp = f32[5] exponential(c3)
  ROOT add = f32[5] add(tuple_elm, exp)
})",
                          "list");
  ASSERT_NE(r.module, nullptr);
  HloComputation* e = r.module->entry_computation();
  EXPECT_LT(Position(*e, "exp"), Position(*e, "fusion")) << r.text;
  // The fusion computation keeps its order.
  EXPECT_EQ(Names(*r.module->GetComputationWithName("fused")),
            (std::vector<std::string>{"f1", "f2", "f3", "fadd", "fmul", "ft"}));
}

// The greedy list scheduler defers the 4 KiB broadcast behind the three
// 1 KiB unary ops (each "frees" more: -1024 > -4096), so all are live when
// it runs. Units: f32[256] = 1024 bytes; p and q (2048) live throughout;
// constants take no heap; the root tuple's pointer table is 32 bytes.
//   list:      zero q p s3 s2 s1 big red t
//              2048 +s3 +s2 +s1 = 5120, big: 9216, red: 10240 (peak), then
//              big dies: 6144, t: 6176.                       peak 10240
//   dfs:       p big zero red q s1 s2 s3 t (red first: its transitive size
//              5120 beats 1024; big before zero: 4096 > 0)
//              2048, big: 6144, red: 7168 (peak), big dies: 3072,
//              s1..s3: 6144, t: 6176.                         peak  7168
//   postorder: the same order as dfs here.                    peak  7168
// The default keeps the smallest: dfs (before postorder on a tie).
constexpr char kListLoses[] = R"(
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[256] parameter(0)
  q = f32[256] parameter(1)
  zero = f32[] constant(0)
  big = f32[4,256] broadcast(p), dimensions={1}
  red = f32[256] reduce(big, zero), dimensions={0}, to_apply=add
  s1 = f32[256] negate(q)
  s2 = f32[256] exponential(q)
  s3 = f32[256] cosine(q)
  ROOT t = (f32[256], f32[256], f32[256], f32[256]) tuple(red, s1, s2, s3)
})";

TEST(HloMemorySchedulerTest, DefaultKeepsTheSmallestSimulatedPeak) {
  PassResult list = Schedule(kListLoses, "list");
  PassResult dfs = Schedule(kListLoses, "dfs");
  PassResult post = Schedule(kListLoses, "postorder");
  PassResult chosen = Schedule(kListLoses, "default");
  ASSERT_NE(list.module, nullptr);
  ASSERT_NE(dfs.module, nullptr);
  ASSERT_NE(post.module, nullptr);
  ASSERT_NE(chosen.module, nullptr);
  EXPECT_EQ(Names(*list.module->entry_computation()),
            (std::vector<std::string>{"zero", "q", "p", "s3", "s2", "s1", "big", "red", "t"}));
  EXPECT_EQ(Names(*dfs.module->entry_computation()),
            (std::vector<std::string>{"p", "big", "zero", "red", "q", "s1", "s2", "s3", "t"}));
  EXPECT_EQ(Names(*post.module->entry_computation()), Names(*dfs.module->entry_computation()));
  EXPECT_EQ(SimulatePeakMemory(*list.module), 10240);
  EXPECT_EQ(SimulatePeakMemory(*dfs.module), 7168);
  EXPECT_EQ(SimulatePeakMemory(*post.module), 7168);
  EXPECT_EQ(Names(*chosen.module->entry_computation()), Names(*dfs.module->entry_computation()));
  EXPECT_EQ(SimulatePeakMemory(*chosen.module), 7168);
}

TEST(HloMemorySchedulerTest, DefaultKeepsListWhereItWins) {
  // Whatever the default picks for XLA's aliasing module is no worse, on
  // the simulated peak, than each algorithm on its own (XLA:
  // HloSchedulingTest.DefaultSchedulerRunsThreeSchedulers).
  PassResult chosen = Schedule(kAliasing, "default");
  ASSERT_NE(chosen.module, nullptr);
  int64_t peak = SimulatePeakMemory(*chosen.module);
  for (const std::string& a : {"list", "dfs", "postorder"}) {
    PassResult r = Schedule(kAliasing, a);
    ASSERT_NE(r.module, nullptr);
    EXPECT_LE(peak, SimulatePeakMemory(*r.module)) << a;
  }
}

TEST(HloMemorySchedulerTest, PeakCountsParametersOutputsAndLoopTemporaries) {
  // Entry: p (1024) from the start; init's pointer table (16) until the
  // loop; the loop's buffers (16 + 4 + 1024); while it runs, the body's own
  // temporaries: `big` (4096; red, j and t are the loop's outputs, the
  // parameter is the caller's buffer). 1024 + 16 + 1044 + 4096 = 6180.
  auto m = ParseHloModule(R"(
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  cp = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  bp = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[256] get-tuple-element(bp), index=1
  big = f32[4,256] broadcast(v), dimensions={1}
  zero = f32[] constant(0)
  red = f32[256] reduce(big, zero), dimensions={0}, to_apply=add
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[256]) tuple(j, red)
}

ENTRY e {
  p = f32[256] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[256]) tuple(zero, p)
  loop = (s32[], f32[256]) while(init), condition=cond, body=body
  ROOT out = f32[256] get-tuple-element(loop), index=1
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(SimulatePeakMemory(**m), 6180);
}

constexpr char kLoops[] = R"(
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  cp = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  bp = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[256] get-tuple-element(bp), index=1
  w = f32[256] negate(v)
  big = f32[4,256] broadcast(v), dimensions={1}
  zero = f32[] constant(0)
  red = f32[256] reduce(big, zero), dimensions={0}, to_apply=add
  one = s32[] constant(1)
  j = s32[] add(i, one)
  sum = f32[256] add(red, w)
  ROOT t = (s32[], f32[256]) tuple(j, sum)
}

on_true {
  x = f32[256] parameter(0)
  x1 = f32[256] exponential(x)
  x2 = f32[256] negate(x)
  ROOT x3 = f32[256] multiply(x1, x2)
}

on_false {
  y = f32[256] parameter(0)
  ROOT y1 = f32[256] abs(y)
}

ENTRY e {
  p = f32[256] parameter(0)
  k = pred[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[256]) tuple(zero, p)
  loop = (s32[], f32[256]) while(init), condition=cond, body=body
  lv = f32[256] get-tuple-element(loop), index=1
  c = f32[256] conditional(k, lv, p), true_computation=on_true, false_computation=on_false
  ROOT out = f32[256] add(c, lv)
})";

TEST(HloMemorySchedulerTest, SchedulesLoopBodiesAndBranches) {
  PassResult r = Schedule(kLoops, "list");
  ASSERT_NE(r.module, nullptr);
  EXPECT_TRUE(r.changed);
  // In the body, w (defines 1024) beats big (defines 4096), and red (frees
  // big's 4096, defines 1024) follows big at once.
  HloComputation* body = r.module->GetComputationWithName("body");
  ASSERT_NE(body, nullptr);
  EXPECT_LT(Position(*body, "w"), Position(*body, "big")) << r.text;
  EXPECT_EQ(Position(*body, "red"), Position(*body, "big") + 1) << r.text;
  // Branches are sequenced too (x1 and x2 both stay topological).
  HloComputation* on_true = r.module->GetComputationWithName("on_true");
  ASSERT_NE(on_true, nullptr);
  EXPECT_EQ(Names(*on_true).back(), "x3");
}

TEST(HloMemorySchedulerTest, EveryAlgorithmGivesTopologicalOrders) {
  // The loop module, the tuple module, and control predecessors: without
  // the edge b1 (frees nothing) would go after a2's chain.
  const std::string control = std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[1024] parameter(0)
  zero = f32[] constant(0)
  b1 = f32[1024] negate(p)
  a1 = f32[1024] exponential(p), control-predecessors={b1}
  a2 = f32[] reduce(a1, zero), dimensions={0}, to_apply=add
  b2 = f32[] reduce(b1, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[]) tuple(a2, b2)
})";
  for (const std::string& algorithm : kAlgorithms) {
    for (const std::string& hlo : {std::string(kLoops), std::string(kAliasing), std::string(kLastUse), control}) {
      PassResult r = Schedule(hlo, algorithm);
      ASSERT_NE(r.module, nullptr) << algorithm;
      for (const HloComputation* c : r.module->computations()) {
        EXPECT_EQ(c->instructions().size(), static_cast<size_t>(c->instruction_count()));
      }
    }
    PassResult r = Schedule(control, algorithm);
    ASSERT_NE(r.module, nullptr);
    HloComputation* e = r.module->entry_computation();
    EXPECT_LT(Position(*e, "b1"), Position(*e, "a1")) << algorithm << "\n" << r.text;
  }
}

TEST(HloMemorySchedulerTest, DfsVisitsTheHeavierOperandFirst) {
  // XLA's DFSMemoryScheduler: the root's operands by transitive fan-out
  // (both 0), then transitive size: the broadcast chain (4096 + 1024)
  // before the 1024-byte negate, although negate is the first operand.
  PassResult r = Schedule(std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[256] parameter(0)
  zero = f32[] constant(0)
  n = f32[256] negate(p)
  big = f32[4,256] broadcast(p), dimensions={1}
  red = f32[256] reduce(big, zero), dimensions={0}, to_apply=add
  ROOT r = f32[256] add(n, red)
})",
                          "dfs");
  ASSERT_NE(r.module, nullptr);
  EXPECT_EQ(Names(*r.module->entry_computation()),
            (std::vector<std::string>{"p", "big", "zero", "red", "n", "r"}));
  // The post order takes the operands as written.
  PassResult post = Schedule(std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[256] parameter(0)
  zero = f32[] constant(0)
  n = f32[256] negate(p)
  big = f32[4,256] broadcast(p), dimensions={1}
  red = f32[256] reduce(big, zero), dimensions={0}, to_apply=add
  ROOT r = f32[256] add(n, red)
})",
                             "postorder");
  ASSERT_NE(post.module, nullptr);
  EXPECT_EQ(Names(*post.module->entry_computation()),
            (std::vector<std::string>{"p", "n", "big", "zero", "red", "r"}));
}

constexpr char kAllReduce[] = R"(
HloModule m, num_partitions=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[1024] parameter(0)
  q = f32[1024] parameter(1)
  x = f32[1024] exponential(q)
  y = f32[1024] multiply(x, q)
  ars = f32[1024] all-reduce-start(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add%s
  ard = f32[1024] all-reduce-done(ars)
  ROOT r = f32[1024] add(ard, y)
})";

std::string AllReduceModule(const std::string& start_attributes) {
  std::string text = kAllReduce;
  text.replace(text.find("%s"), 2, start_attributes);
  return text;
}

CollectivePassResult ScheduleCollectives(const std::string& hlo, bool postprocess) {
  HloMemorySchedulerOptions options;
  options.gpu_postprocess = postprocess;
  CollectivePassResult r = RunCollectivePass(std::make_unique<HloMemoryScheduler>(options), hlo);
  if (r.module != nullptr) ExpectTopological(*r.module);
  return r;
}

TEST(HloMemorySchedulerTest, GpuPostProcessingMovesAsyncStartsEarlyAndDonesLate) {
  // gpu_hlo_schedule.cc PostprocessorToScheduleAsEarlyOrLateAsPossible:
  // the start right after its operand p, the done right before its user r.
  CollectivePassResult r = ScheduleCollectives(AllReduceModule(""), /*postprocess=*/true);
  ASSERT_NE(r.module, nullptr);
  HloComputation* e = r.module->entry_computation();
  EXPECT_EQ(Position(*e, "ars"), Position(*e, "p") + 1) << r.text;
  EXPECT_EQ(Position(*e, "ard") + 1, Position(*e, "r")) << r.text;
  EXPECT_LT(Position(*e, "ars"), Position(*e, "x")) << r.text;
}

TEST(HloMemorySchedulerTest, GpuPostProcessingKeepsSyncCollectivesTogether) {
  // PostprocessorToScheduleSyncCollectives: a start marked is_sync goes
  // right before its done, and the done is not moved late.
  CollectivePassResult r = ScheduleCollectives(
      AllReduceModule(R"(, backend_config={"collective_backend_config":{"is_sync":true}})"), /*postprocess=*/true);
  ASSERT_NE(r.module, nullptr);
  HloComputation* e = r.module->entry_computation();
  EXPECT_EQ(Position(*e, "ars") + 1, Position(*e, "ard")) << r.text;
  EXPECT_LT(Position(*e, "ard") + 1, Position(*e, "r")) << r.text;
}

TEST(HloMemorySchedulerTest, RejectsAnUnknownAlgorithm) {
  auto m = ParseHloModule(kLastUse);
  ASSERT_TRUE(m.ok());
  HloPassPipeline pipeline("test");
  HloMemorySchedulerOptions options;
  options.algorithm = "bfs";
  pipeline.AddPass<HloMemoryScheduler>(options);
  absl::StatusOr<bool> changed = pipeline.Run(**m);
  EXPECT_FALSE(changed.ok());
}

TEST(HloMemorySchedulerTest, SecondRunKeepsTheSchedule) {
  PassResult r = Schedule(kLoops);
  ASSERT_NE(r.module, nullptr);
  PrintOptions options;
  options.print_metadata = false;
  std::string once = PrintModule(*r.module, options);
  HloPassPipeline pipeline("again");
  pipeline.AddPass<HloMemoryScheduler>();
  absl::StatusOr<bool> changed = pipeline.Run(*r.module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(*changed) << PrintModule(*r.module, options);
  EXPECT_EQ(PrintModule(*r.module, options), once);
}

// TEST-ONLY: a "compiled kernel" that evaluates the instruction (as
// test/core/runtime/executable_test.cc does), so that the CPU runtime runs
// the scheduled module without the code generator.
class EvaluatorKernel : public CompiledKernel {
 public:
  EvaluatorKernel(const HloInstruction& inst, std::unique_ptr<InstructionEvaluator> ev)
      : name_(inst.name()), evaluator_(std::move(ev)) {}
  const std::string& name() const override { return name_; }
  EmitterKind emitter_kind() const override { return EmitterKind::kLoop; }
  void Run(absl::Span<void* const> buffers) const override {
    absl::Status s = evaluator_->Run(buffers);
    EXPECT_TRUE(s.ok()) << name_ << ": " << s.message();
  }

 private:
  std::string name_;
  std::unique_ptr<InstructionEvaluator> evaluator_;
};

TEST(HloMemorySchedulerTest, CpuRuntimeRunsTheScheduledModule) {
  for (const std::string& algorithm : kAlgorithms) {
    PassResult r = Schedule(kLoops, algorithm);
    ASSERT_NE(r.module, nullptr);
    std::vector<Literal> args = MakeRandomArguments(*r.module->entry_computation(), 77);
    absl::StatusOr<std::unique_ptr<Executable>> exe =
        Executable::Create(*r.module, [](const HloInstruction& inst) -> absl::StatusOr<std::unique_ptr<CompiledKernel>> {
          absl::StatusOr<std::unique_ptr<InstructionEvaluator>> ev = InstructionEvaluator::Create(inst);
          if (!ev.ok()) return ev.status();
          return std::unique_ptr<CompiledKernel>(new EvaluatorKernel(inst, std::move(*ev)));
        });
    ASSERT_TRUE(exe.ok()) << exe.status().message();
    absl::StatusOr<Literal> got = (*exe)->Run(args);
    ASSERT_TRUE(got.ok()) << got.status().message();
    absl::StatusOr<Literal> want = HloEvaluator().Evaluate(*r.module, args);
    ASSERT_TRUE(want.ok()) << want.status().message();
    absl::Status same = CompareLiterals(*want, *got, {.abs = 1e-5, .rel = 1e-5});
    EXPECT_TRUE(same.ok()) << algorithm << ": " << same.message();
  }
}

TEST(HloMemorySchedulerTest, CorpusSchedulesAreValidAndDefaultIsTheSmallestPeak) {
  std::vector<std::pair<std::string, std::string>> texts = CorpusTextsWith(" while(");
  std::vector<std::pair<std::string, std::string>> plain = CorpusTextsWith(" fusion(");
  if (texts.size() > 100) texts.resize(100);
  if (plain.size() > 100) plain.resize(100);
  texts.insert(texts.end(), plain.begin(), plain.end());
  if (texts.empty()) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  ParseOptions parse_options;
  parse_options.infer_shape = InferInstructionShape;
  int candidates = 0;
  for (const auto& [name, text] : texts) {
    absl::StatusOr<std::unique_ptr<HloModule>> probe = ParseHloModule(text, name, parse_options);
    if (!probe.ok() || !VerifyModule(**probe).ok()) continue;
    ++candidates;
    int64_t smallest = -1;
    int64_t chosen = -1;
    for (const std::string& algorithm : kAlgorithms) {
      absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, parse_options);
      ASSERT_TRUE(m.ok());
      HloMemorySchedulerOptions options;
      options.algorithm = algorithm;
      HloPassPipeline pipeline("corpus");
      pipeline.AddPass<HloMemoryScheduler>(options);
      absl::StatusOr<bool> changed = pipeline.Run(**m);
      ASSERT_TRUE(changed.ok()) << name << ": " << changed.status().message();
      EXPECT_TRUE((*m)->is_scheduled()) << name;
      absl::Status verified = VerifyModule(**m);
      EXPECT_TRUE(verified.ok()) << name << " " << algorithm << ": " << verified.message();
      ExpectTopological(**m, name + " " + algorithm);
      int64_t peak = SimulatePeakMemory(**m);
      if (algorithm == "default") {
        chosen = peak;
      } else if (smallest < 0 || peak < smallest) {
        smallest = peak;
      }
    }
    EXPECT_EQ(chosen, smallest) << name;
  }
  EXPECT_GT(candidates, 50);
  RecordProperty("candidates", candidates);
}

}  // namespace
}  // namespace passlab
