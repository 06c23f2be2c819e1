// PriorityFusion and the GPU performance model. The first tests port XLA's
// xla/backends/gpu/transforms/priority_fusion_test.cc (names as there; the
// device is its RTXA6000, passlab's "A6000"); the rest are passlab's own,
// each checked on the evaluator by RunPass.
#include "passes/fusion/priority_fusion.h"

#include <gtest/gtest.h>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "passes/fusion/gpu_performance_model.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

std::unique_ptr<HloPassInterface> Pass(std::string device = "A6000") {
  PriorityFusionOptions o;
  o.device = std::move(device);
  return std::make_unique<PriorityFusion>(o);
}

// XLA: PriorityFusionTest.FuseWithSharedArgument.
TEST(PriorityFusionTest, FuseWithSharedArgument) {
  PassResult r = RunPass(Pass(), R"(
HloModule test_module
ENTRY main {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  subtract = f32[] subtract(p0, p1)
  compare = pred[] compare(subtract, subtract), direction=NE
  add = f32[] add(p0, p1)
  abs = f32[] abs(subtract)
  ROOT select = f32[] select(compare, add, abs)
})");
  EXPECT_TRUE(r.changed);
  const HloInstruction* root = r.module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kFusion) << r.text;
  EXPECT_EQ(root->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(r.module->entry_computation()->instruction_count(), 3) << r.text;
}

// XLA: PriorityFusionTest.EpilogueFusion — a loop fusion after a
// reduction fusion becomes its epilogue (kInput).
TEST(PriorityFusionTest, EpilogueFusion) {
  PassResult r = RunPass(Pass(), R"(
HloModule test_module
add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT add = f32[] add(p0, p1)
}
fused_computation.1 {
  p0 = f32[8,4,128,226]{3,2,1,0} parameter(0)
  c0 = f32[] constant(0)
  ROOT r0 = f32[8,4,128]{2,1,0} reduce(p0, c0), dimensions={3}, to_apply=add
}
fused_computation.2 {
  p0 = f32[8,4,128]{2,1,0} parameter(0)
  r1 = f32[8,4,128]{2,1,0} log(p0)
  ROOT r2 = f32[8,4,128]{2,1,0} log(r1)
}
ENTRY main {
  p0 = f32[8,4,128,226]{3,2,1,0} parameter(0)
  f1 = f32[8,4,128]{2,1,0} fusion(p0), kind=kInput, calls=%fused_computation.1
  ROOT fusion = f32[8,4,128]{2,1,0} fusion(f1), kind=kLoop, calls=%fused_computation.2
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %fusion = f32[8,4,128]{2,1,0} fusion(%p0), kind=kInput"}));
}

// XLA: PriorityFusionTest.DoNotFuseReduceIntoReduce — only the constant is
// fused (into each reduce).
TEST(PriorityFusionTest, DoNotFuseReduceIntoReduce) {
  PassResult r = RunPass(Pass(), R"(
HloModule test_module
add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT add = f32[] add(p0, p1)
}
ENTRY main {
  p0 = f32[8,4,128,226]{3,2,1,0} parameter(0)
  c0 = f32[] constant(0)
  r0 = f32[8,4,128]{2,1,0} reduce(p0, c0), dimensions={3}, to_apply=add
  ROOT r1 = f32[8,4]{1,0} reduce(r0, c0), dimensions={2}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %r0", "reduce(", "ROOT %r1", "reduce(", "ENTRY", "fusion(%p0)",
                               "kind=kInput", "ROOT", "fusion(%fusion)", "kind=kInput"}));
}

// XLA: PriorityFusionTest.DoNotFuseIntoRoot — the root broadcast is not
// fused into the add after it (which feeds an outfeed).
TEST(PriorityFusionTest, DoNotFuseIntoRoot) {
  PassResult r = RunPass(Pass(), R"(
HloModule test_module
ENTRY main {
  p.0 = u32[2]{0} parameter(0)
  p.1 = u32[] parameter(1)
  ROOT broadcast = u32[2]{0} broadcast(p.1), dimensions={}
  add = u32[2]{0} add(p.0, broadcast)
  tuple.1 = (u32[2]{0}) tuple(add)
  token.0 = token[] after-all()
  outfeed.6 = token[] outfeed(tuple.1, token.0), outfeed_shape=(u32[2]{0})
})");
  EXPECT_FALSE(r.changed) << r.text;
}

// XLA: PriorityFusionTest.ReductionEpilogueFusionRegressionTest, smaller:
// the producers and the epilogue convert join the reduce; the root bitcast
// (a lone bitcast consumer) stays outside.
TEST(PriorityFusionTest, ReductionWithProducersAndEpilogue) {
  PassResult r = RunPass(Pass(), R"(
HloModule test_module
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}
ENTRY main {
  v = f32[256]{0} parameter(0)
  m = bf16[512,256]{1,0} parameter(1)
  e = f32[256]{0} exponential(v)
  b = f32[512,256]{1,0} broadcast(e), dimensions={1}
  c = f32[512,256]{1,0} convert(m)
  mul = f32[512,256]{1,0} multiply(b, c)
  zero = f32[] constant(0)
  r = f32[512]{0} reduce(mul, zero), dimensions={1}, to_apply=add
  cv = bf16[512]{0} convert(r)
  ROOT bc = bf16[1,512]{1,0} bitcast(cv)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ENTRY", "kind=kInput", "ROOT %bc = bf16[1,512]{1,0} bitcast(%fusion"})) << r.text;
  EXPECT_EQ(r.module->entry_computation()->instruction_count(), 4) << r.text;
}

// A reduce whose result is broadcast back (softmax) is not fused into the
// broadcast: the kernel would become a loop kernel.
TEST(PriorityFusionTest, KeepsReductionOutOfBroadcastConsumer) {
  PassResult r = RunPass(Pass("H100"), R"(
HloModule softmax
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[64,128]{1,0} parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[64]{0} reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[64,128]{1,0} broadcast(mx), dimensions={0}
  sh = f32[64,128]{1,0} subtract(x, mb)
  ex = f32[64,128]{1,0} exponential(sh)
  zero = f32[] constant(0)
  sm = f32[64]{0} reduce(ex, zero), dimensions={1}, to_apply=add
  sb = f32[64,128]{1,0} broadcast(sm), dimensions={0}
  ROOT d = f32[64,128]{1,0} divide(ex, sb)
})");
  EXPECT_TRUE(r.changed);
  for (const HloInstruction* h : r.module->entry_computation()->instructions()) {
    if (h->opcode() != HloOpcode::kFusion) continue;
    // No kernel both reduces and then reads the reduction through a broadcast.
    const HloInstruction* hero = ReductionHeroOf(nullptr, *h);
    if (hero == nullptr) continue;
    for (const HloInstruction* u : hero->users()) EXPECT_NE(u->opcode(), HloOpcode::kBroadcast) << r.text;
  }
}

// An elementwise chain becomes one loop kernel.
TEST(PriorityFusionTest, FusesElementwiseChain) {
  PassResult r = RunPass(Pass("cpu"), R"(
HloModule chain
ENTRY main {
  a = f32[1024]{0} parameter(0)
  b = f32[1024]{0} parameter(1)
  s = f32[1024]{0} add(a, b)
  n = f32[1024]{0} negate(s)
  m = f32[1024]{0} multiply(n, a)
  ROOT t = f32[1024]{0} tanh(m)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.module->entry_computation()->instruction_count(), 3) << r.text;
  EXPECT_TRUE(Matches(r.text, {"ROOT %t.1 = f32[1024]{0} tanh", "ENTRY", "ROOT", "fusion(%a, %b), kind=kLoop"}))
      << r.text;
}

// Parameters and a lone op have nothing to fuse.
TEST(PriorityFusionTest, KeepsModuleWithoutProducers) {
  PassResult r = RunPass(Pass(), R"(
HloModule single
ENTRY main {
  a = f32[16]{0} parameter(0)
  ROOT n = f32[16]{0} negate(a)
})");
  EXPECT_FALSE(r.changed);
}

TEST(PriorityFusionTest, UnknownDeviceIsAnError) {
  auto m = ParseHloModule("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n");
  ASSERT_TRUE(m.ok());
  PriorityFusionOptions o;
  o.device = "V100";
  PriorityFusion pass(o);
  HloPassPipeline pipeline("test");
  pipeline.AddPass<PriorityFusion>(o);
  absl::StatusOr<bool> changed = pipeline.Run(**m);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(std::string(changed.status().message()).find("H100, H200, A100, A6000, cpu"), std::string::npos)
      << changed.status().message();
}

// --- The performance model.

TEST(GpuPerformanceModelTest, DeviceByNameKnowsTheTableAndListsItOnError) {
  for (const char* name : {"H100", "h200", "A100", "A6000", "cpu"}) EXPECT_TRUE(DeviceByName(name).ok()) << name;
  absl::StatusOr<DeviceDescription> bad = DeviceByName("tpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("H100, H200, A100, A6000, cpu"), std::string::npos);
  // H200 is an H100 with faster memory.
  EXPECT_GT(DeviceByName("H200")->memory_bandwidth, DeviceByName("H100")->memory_bandwidth);
}

TEST(GpuPerformanceModelTest, MemoryBoundKernelTimeFollowsBandwidth) {
  auto m = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[16777216]{0} parameter(0)
  b = f32[16777216]{0} parameter(1)
  ROOT s = f32[16777216]{0} add(a, b)
})");
  ASSERT_TRUE(m.ok());
  const HloInstruction& add = *(*m)->entry_computation()->root_instruction();
  for (const char* name : {"H100", "cpu"}) {
    DeviceDescription d = *DeviceByName(name);
    GpuPerformanceModel model(d);
    const KernelEstimate& e = model.EstimateRunTimeForInstruction(add);
    EXPECT_EQ(e.bytes_read, 2 * 64 * 1024 * 1024);
    EXPECT_EQ(e.bytes_written, 64 * 1024 * 1024);
    // 192 MiB at the device's bandwidth (the compute overlaps).
    const double memory = 3.0 * 64 * 1024 * 1024 / d.memory_bandwidth;
    EXPECT_NEAR(e.exec_time, memory, 0.1 * memory) << name;
    EXPECT_NEAR(EstimateKernelTime(add, d), e.exec_time + d.kernel_launch_overhead, 1e-12);
  }
}

// The issue's check: a module the H100 entry and the cpu entry fuse
// differently, each as its estimates favour. An expensive producer (power)
// read by three consumers: fusing recomputes it three times. The H100 has
// ~20 flops per byte of bandwidth and fuses (saving the producer's write
// and three reads); the CPU has ~5 and keeps it a kernel of its own.
TEST(GpuPerformanceModelTest, H100AndCpuFuseAnExpensiveSharedProducerDifferently) {
  const std::string hlo = R"(
HloModule devices
ENTRY main {
  x = f32[1048576]{0} parameter(0)
  y = f32[1048576]{0} parameter(1)
  a = f32[1048576]{0} parameter(2)
  b = f32[1048576]{0} parameter(3)
  c = f32[1048576]{0} parameter(4)
  p = f32[1048576]{0} power(x, y)
  ua = f32[1048576]{0} add(p, a)
  ub = f32[1048576]{0} multiply(p, b)
  uc = f32[1048576]{0} subtract(p, c)
  ROOT t = (f32[1048576]{0}, f32[1048576]{0}, f32[1048576]{0}) tuple(ua, ub, uc)
})";
  auto m = ParseHloModule(hlo);
  ASSERT_TRUE(m.ok());
  HloInstruction* p = nullptr;
  for (HloInstruction* h : (*m)->entry_computation()->instructions()) {
    if (h->name() == "p") p = h;
  }
  ASSERT_NE(p, nullptr);
  GpuPerformanceModel h100(*DeviceByName("H100"));
  GpuPerformanceModel cpu(*DeviceByName("cpu"));
  GpuPerformanceModel::RunTimes on_h100 = h100.EstimateRunTimes(*p, p->users());
  GpuPerformanceModel::RunTimes on_cpu = cpu.EstimateRunTimes(*p, p->users());
  EXPECT_LT(on_h100.time_fused, on_h100.time_unfused);
  EXPECT_GT(on_cpu.time_fused, on_cpu.time_unfused);

  PassResult fused = RunPass(Pass("H100"), hlo);
  EXPECT_TRUE(fused.changed);
  EXPECT_TRUE(Matches(fused.text, {"ENTRY", "fusion(%a, %x, %y)", "fusion(%b, %x, %y)", "fusion(%c, %x, %y)",
                                   "NOT:power(%x"}))
      << fused.text;
  PassResult kept = RunPass(Pass("cpu"), hlo);
  EXPECT_FALSE(kept.changed) << kept.text;
}

// Inside a fusion an expanding broadcast reads its operand once per output
// element (count_multiple_input_accesses); the first read comes from DRAM.
TEST(GpuPerformanceModelTest, BroadcastOperandUtilizationInAFusion) {
  auto m = ParseHloModule(R"(
HloModule m
fused {
  p0 = f32[128]{0} parameter(0)
  p1 = f32[64,128]{1,0} parameter(1)
  b = f32[64,128]{1,0} broadcast(p0), dimensions={1}
  ROOT m = f32[64,128]{1,0} multiply(b, p1)
}
ENTRY e {
  v = f32[128]{0} parameter(0)
  w = f32[64,128]{1,0} parameter(1)
  ROOT f = f32[64,128]{1,0} fusion(v, w), kind=kLoop, calls=fused
})");
  ASSERT_TRUE(m.ok());
  GpuPerformanceModel model(*DeviceByName("H100"));
  const KernelCost& cost = model.Cost(*(*m)->entry_computation()->root_instruction());
  ASSERT_EQ(cost.operand_utilization.size(), 2u);
  EXPECT_DOUBLE_EQ(cost.operand_utilization[0], 64.0);
  EXPECT_DOUBLE_EQ(cost.operand_utilization[1], 1.0);
  EXPECT_DOUBLE_EQ(cost.flops, 64 * 128 * 3);
}

// XLA:GPU's own estimates, from its priority_fusion_dump of the ResNet-50
// step on an H200 (test/conformance/data/xla_resnet50_step_h200.tar.xz:
// module_51636.jit_step.priority_fusion_dump.txt, update_priority steps):
// the priority of `producer` fused into its users, in microseconds with
// XLA's 1 us launch overhead per kernel.
GpuPerformanceModel::RunTimes H200RunTimes(const std::string& hlo, const std::string& producer) {
  auto m = ParseHloModule(hlo);
  EXPECT_TRUE(m.ok());
  HloInstruction* p = nullptr;
  for (HloInstruction* h : (*m)->entry_computation()->instructions()) {
    if (h->name() == producer) p = h;
  }
  EXPECT_NE(p, nullptr);
  GpuPerformanceModel model(*DeviceByName("H200"));
  GpuPerformanceModel::RunTimes t = model.EstimateRunTimes(*p, p->users());
  t.time_fused *= 1e6;
  t.time_unfused *= 1e6;
  return t;
}

// A column reduction launches as XLA's ColumnReductionFusion
// (backends/gpu/codegen/emitters/reduction.cc): a block per 64 columns of
// f32 (32 x vector size 2) over all rows, so few blocks and a bandwidth cut
// to blocks x 32 bytes a clock. XLA: reduce_sum.5064.0 (update_priority
// us_fused 9.3695, us_unfused 10.3778).
TEST(GpuPerformanceModelTest, ColumnReductionLaunchesAsXlasEmitter) {
  GpuPerformanceModel::RunTimes t = H200RunTimes(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2048,256]{1,0} parameter(0)
  z = f32[] constant(0)
  r = f32[256]{0} reduce(x, z), dimensions={0}, to_apply=add
  ROOT n = f32[256]{0} negate(r)
})", "r");
  EXPECT_NEAR(t.time_fused, 9.3695, 0.01 * 9.3695);
  EXPECT_NEAR(t.time_unfused, 10.3778, 0.01 * 10.3778);
}

// XLA's FindNonTrivialHero looks for a tiled transpose through elementwise
// ops of up to three operands, so multiply(transpose, broadcast) is a
// transpose kernel (coalesced, launched as TransposeFusion), not a loop
// kernel reading through a transpose. XLA: transpose.261.0 (us_fused 3.616,
// us_unfused 6.3585).
TEST(GpuPerformanceModelTest, TransposeHeroBehindABinaryOp) {
  const std::string hlo = R"(
HloModule m
ENTRY e {
  w = f32[1,1,2048,512]{3,2,1,0} parameter(0)
  c = f32[] constant(0.9)
  b = f32[512,1,1,2048]{3,2,1,0} broadcast(c), dimensions={}
  t = f32[512,1,1,2048]{3,2,1,0} transpose(w), dimensions={3,0,1,2}
  ROOT m = f32[512,1,1,2048]{3,2,1,0} multiply(t, b)
})";
  auto m = ParseHloModule(hlo);
  ASSERT_TRUE(m.ok());
  const HloInstruction& root = *(*m)->entry_computation()->root_instruction();
  EXPECT_EQ(EmitterKindOf(root.operand(0), root), KernelEmitterKind::kTranspose);
  EXPECT_EQ(EmitterKindOf(nullptr, root), KernelEmitterKind::kLoop);
  GpuPerformanceModel::RunTimes t = H200RunTimes(hlo, "t");
  EXPECT_NEAR(t.time_fused, 3.616, 0.01 * 3.616);
  EXPECT_NEAR(t.time_unfused, 6.3585, 0.01 * 6.3585);
}

// XLA's IsReadCoalescedHeuristic: only a transpose of the minor dimension
// breaks coalescing; {1,2,0,3} keeps the 512 minor floats together. XLA:
// subtract.50.0 (us_fused 6.893, us_unfused 11.8135).
TEST(GpuPerformanceModelTest, TransposeKeepingTheMinorDimensionReadsCoalesced) {
  GpuPerformanceModel::RunTimes t = H200RunTimes(R"(
HloModule m
ENTRY e {
  a = f32[512,3,3,512]{3,2,1,0} parameter(0)
  b = f32[512,3,3,512]{3,2,1,0} parameter(1)
  s = f32[512,3,3,512]{3,2,1,0} subtract(a, b)
  ROOT t = f32[3,3,512,512]{3,2,1,0} transpose(s), dimensions={1,2,0,3}
})", "s");
  EXPECT_NEAR(t.time_fused, 6.893, 0.01 * 6.893);
  EXPECT_NEAR(t.time_unfused, 11.8135, 0.01 * 11.8135);
}

// XLA's loop emitter unrolls only when there are more elements than the GPU
// has threads (ComputeLoopFusionConfig: threads_per_core_limit x cores), so
// 131072 elements run as 1024 blocks; and a bitcast touches no memory
// (HloCostAnalysis::HandleBitcast). XLA: broadcast.471.0 (us_fused
// 1.22625, us_unfused 2.44425) and mul.3010.0 (2.16375, 3.16375).
TEST(GpuPerformanceModelTest, LoopLaunchAndBitcastCostAsXla) {
  GpuPerformanceModel::RunTimes b = H200RunTimes(R"(
HloModule m
ENTRY e {
  x = f32[8,16,16,64]{3,2,1,0} parameter(0)
  v = f32[64]{0} parameter(1)
  b = f32[8,16,16,64]{3,2,1,0} broadcast(v), dimensions={3}
  ROOT m = f32[8,16,16,64]{3,2,1,0} multiply(x, b)
})", "b");
  EXPECT_NEAR(b.time_fused, 1.22625, 0.005 * 1.22625);
  EXPECT_NEAR(b.time_unfused, 2.44425, 0.005 * 2.44425);
  GpuPerformanceModel::RunTimes m = H200RunTimes(R"(
HloModule m
ENTRY e {
  x = f32[8,4,4,256]{3,2,1,0} parameter(0)
  y = f32[8,4,4,256]{3,2,1,0} parameter(1)
  z = f32[8,4,4,256]{3,2,1,0} parameter(2)
  m = f32[8,4,4,256]{3,2,1,0} multiply(x, y)
  a = f32[8,4,4,256]{3,2,1,0} add(m, z)
  c = f32[128,256]{1,0} bitcast(m)
  ROOT t = (f32[8,4,4,256]{3,2,1,0}, f32[128,256]{1,0}) tuple(a, c)
})", "m");
  EXPECT_NEAR(m.time_fused, 2.16375, 0.005 * 2.16375);
  EXPECT_NEAR(m.time_unfused, 3.16375, 0.005 * 3.16375);
}

}  // namespace
}  // namespace passlab
