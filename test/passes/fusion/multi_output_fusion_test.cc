#include "passes/fusion/multi_output_fusion.h"
#include "test/passes/fusion_test_util.h"

namespace passlab {
namespace {

TEST(GpuMultiOutputFusionTest, FusesSiblingReductionsSharingAnInput) {
  // Sum and sum of squares of the same rows (batch-norm statistics).
  PassResult r = RunPass(std::make_unique<GpuMultiOutputFusion>(), std::string(kAddF32Reducer) + R"(
fsq {
  a = f32[16,128] parameter(0)
  m = f32[16,128] multiply(a, a)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(m, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p = f32[16,128] parameter(0)
  z = f32[] constant(0)
  s = f32[16] reduce(p, z), dimensions={1}, to_apply=add
  q = f32[16] fusion(p), kind=kInput, calls=fsq
  ROOT t = (f32[16], f32[16]) tuple(s, q)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountFusions(*r.module), 1) << r.text;
  const HloInstruction* f = r.module->entry_computation()->root_instruction()->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), HloOpcode::kFusion) << r.text;
  EXPECT_EQ(f->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(f->operand_count(), 2) << r.text;  // p and z
  EXPECT_EQ(CountOpcode(*f->fused_instructions_computation(), HloOpcode::kReduce), 2) << r.text;
  EXPECT_TRUE(Matches(r.text, {"ROOT", "tuple(", "(f32[16]{0}, f32[16]{0}) fusion(", "get-tuple-element(",
                               "get-tuple-element("}))
      << r.text;
}

TEST(GpuMultiOutputFusionTest, KeepsSiblingsThatIterateDifferently) {
  // Row and column reductions of one input; and siblings where one depends
  // on the other.
  PassResult r = RunPass(std::make_unique<GpuMultiOutputFusion>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[16,128] parameter(0)
  z = f32[] constant(0)
  rows = f32[16] reduce(p, z), dimensions={1}, to_apply=add
  cols = f32[128] reduce(p, z), dimensions={0}, to_apply=add
  n = f32[16,128] negate(p)
  a = f32[16,128] add(p, n)
  ROOT t = (f32[16], f32[128], f32[16,128]) tuple(rows, cols, a)
})");
  EXPECT_FALSE(r.changed) << r.text;
}

TEST(GpuMultiOutputFusionTest, FusesProducerIntoReductionAsExtraOutput) {
  // m = p * q is used by a reduction and returned: one kernel writes m and
  // reduces it (seed 003's producer-consumer diagram).
  PassResult r = RunPass(std::make_unique<GpuMultiOutputFusion>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[8,32] parameter(0)
  q = f32[8,32] parameter(1)
  m = f32[8,32] multiply(p, q)
  z = f32[] constant(0)
  r = f32[8] reduce(m, z), dimensions={1}, to_apply=add
  ROOT t = (f32[8], f32[8,32]) tuple(r, m)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountFusions(*r.module), 1) << r.text;
  EXPECT_EQ(CountOpcode(*r.module->entry_computation(), HloOpcode::kMultiply), 0) << r.text;
  EXPECT_TRUE(Matches(r.text, {"multiply(", "reduce(", "ROOT", "tuple(", "(f32[8]{0}, f32[8,32]{1,0}) fusion(",
                               "kind=kInput"}))
      << r.text;
}

// XLA multi_output_fusion.cc fuses a producer into a consumer that does
// not reach it through another operand; the producer then feeds the other
// users from the fusion. Here m feeds n and c, and n feeds c: walking from
// the root, n becomes an extra output of c's kernel, then m (only read by
// that kernel now) is fused in as well.
TEST(GpuMultiOutputFusionTest, FusesProducersIntoConsumerWithoutCycles) {
  PassResult r = RunPass(std::make_unique<GpuMultiOutputFusion>(), R"(
ENTRY e {
  p = f32[32] parameter(0)
  m = f32[32] negate(p)
  n = f32[32] abs(m)
  c = f32[32] add(m, n)
  ROOT t = (f32[32], f32[32]) tuple(c, n)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountFusions(*r.module), 1) << r.text;
  const HloInstruction* root = r.module->entry_computation()->root_instruction();
  ASSERT_EQ(root->operand(0)->opcode(), HloOpcode::kGetTupleElement) << r.text;
  EXPECT_EQ(root->operand(0)->operand(0), root->operand(1)->operand(0)) << r.text;  // one kernel
  EXPECT_EQ(CountOpcode(*r.module->entry_computation(), HloOpcode::kNegate), 0) << r.text;
}

// XLA multi_output_fusion_test.cc SiblingFusionBitcastAndLoopFusionNotFused
// and DoNotFuseRoot: a bitcast is no multi-output root, an effective scalar
// no profitable shared operand, and a fusion with one user that is no
// multi-output fusion was already judged by FusionMerger.
TEST(GpuMultiOutputFusionTest, KeepsBitcastSiblingsScalarsAndSingleUserProducers) {
  EXPECT_FALSE(RunPass(std::make_unique<GpuMultiOutputFusion>(), R"(
HloModule m
f {
  p0.1 = f32[64,160] parameter(0)
  bitcast = f32[64,1,160] bitcast(p0.1)
  ROOT exp = f32[64,1,160] exponential(bitcast)
}
ENTRY main {
  param_0 = f32[64,160] parameter(0)
  fusion = f32[64,1,160] fusion(param_0), kind=kLoop, calls=f
  bitcast = f32[160,1,64] bitcast(param_0)
  ROOT t = (f32[160,1,64], f32[64,1,160]) tuple(bitcast, fusion)
})").changed);
  EXPECT_FALSE(RunPass(std::make_unique<GpuMultiOutputFusion>(), R"(
HloModule m
f {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
g {
  p = f32[] parameter(0)
  ROOT e = f32[] exponential(p)
}
ENTRY main {
  param_0 = f32[] parameter(0)
  a = f32[] fusion(param_0), kind=kLoop, calls=f
  b = f32[] fusion(param_0), kind=kLoop, calls=g
  ROOT t = (f32[], f32[]) tuple(a, b)
})").changed);
}

// XLA multi_output_fusion_test.cc OverlappingRead and NoOverlappingRead:
// siblings reading a large operand through slices share a kernel only when
// the slices overlap.
TEST(GpuMultiOutputFusionTest, FusesSiblingsOnlyWhenTheirSlicesOverlap) {
  auto module = [](const char* second_slice) {
    return std::string(R"(
HloModule m
f1 {
  p0.1 = f32[100,200] parameter(0)
  slice.0 = f32[50,100] slice(p0.1), slice={[0:50],[50:150]}
  mul = f32[50,100] multiply(slice.0, slice.0)
  exp = f32[50,100] exponential(slice.0)
  ROOT tuple = (f32[50,100], f32[50,100]) tuple(mul, exp)
}
f2 {
  p0.2 = f32[100,200] parameter(0)
  slice.1 = f32[50,100] slice(p0.2), slice=)") +
           second_slice + R"(
  const.2 = f32[] constant(0)
  broadcast = f32[50,100] broadcast(const.2), dimensions={}
  ROOT add = f32[50,100] add(slice.1, broadcast)
}
ENTRY e {
  p0 = f32[100,200] parameter(0)
  fusion.1 = (f32[50,100], f32[50,100]) fusion(p0), kind=kLoop, calls=f1
  gte0 = f32[50,100] get-tuple-element(fusion.1), index=0
  gte1 = f32[50,100] get-tuple-element(fusion.1), index=1
  fusion.2 = f32[50,100] fusion(p0), kind=kLoop, calls=f2
  ROOT root = (f32[50,100], f32[50,100], f32[50,100]) tuple(gte0, gte1, fusion.2)
})";
  };
  PassResult overlapping = RunPass(std::make_unique<GpuMultiOutputFusion>(), module("{[30:80],[20:120]}"));
  EXPECT_TRUE(overlapping.changed);
  ExpectModuleVerifies(overlapping);
  EXPECT_EQ(CountFusions(*overlapping.module), 1) << overlapping.text;
  EXPECT_FALSE(RunPass(std::make_unique<GpuMultiOutputFusion>(), module("{[0:50],[150:200]}")).changed);
}

// XLA multi_output_fusion_test.cc MultipleTransposes and
// TiledReduceTranspose: two tiled transposes of one input share a kernel
// (the op joins the fusion as a second output); a tiled transpose and a
// tiled reduction do not.
TEST(GpuMultiOutputFusionTest, FusesTiledTransposesButNotWithReductions) {
  PassResult r = RunPass(std::make_unique<GpuMultiOutputFusion>(), R"(
HloModule m
fused_computation {
  param_0.1 = f32[16,32] parameter(0)
  s.1 = f32[16,32] sqrt(param_0.1)
  ROOT t.1 = f32[32,16] transpose(s.1), dimensions={1,0}
}
ENTRY main {
  p = f32[16,32] parameter(0)
  fusion = f32[32,16] fusion(p), kind=kInput, calls=fused_computation
  t1 = f32[32,16] transpose(p), dimensions={1,0}
  ROOT t = (f32[32,16], f32[32,16]) tuple(fusion, t1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"sqrt(", "transpose(", "transpose(", "ROOT", "tuple(",
                               "(f32[32,16]{1,0}, f32[32,16]{1,0}) fusion(%p), kind=kInput"}))
      << r.text;
  EXPECT_FALSE(RunPass(std::make_unique<GpuMultiOutputFusion>(), std::string(kAddF32Reducer) + R"(
fused_computation {
  param_0.1 = f32[16,32] parameter(0)
  s.1 = f32[16,32] sqrt(param_0.1)
  ROOT t.1 = f32[32,16] transpose(s.1), dimensions={1,0}
}
ENTRY main {
  p = f32[16,32] parameter(0)
  fusion = f32[32,16] fusion(p), kind=kInput, calls=fused_computation
  z = f32[] constant(0)
  r1 = f32[32] reduce(p, z), dimensions={0}, to_apply=add
  ROOT t = (f32[32,16], f32[32]) tuple(fusion, r1)
})").changed);
}

// XLA multi_output_fusion_test.cc ReduceAndLoopDifferentShape: a loop
// fusion and a reduction whose input is a bitcast of the loop's shape share
// a kernel; the merged instructions are named "<name>.clone.1" as in XLA.
TEST(GpuMultiOutputFusionTest, FusesReductionOfBitcastWithLoopSibling) {
  PassResult r = RunPass(std::make_unique<GpuMultiOutputFusion>(), std::string(kAddF32Reducer) + R"(
fused_reduction {
  p = f32[10,20] parameter(0)
  z = f32[] constant(0)
  e = f32[10,20] exponential(p)
  b = f32[200] bitcast(e)
  ROOT r = f32[] reduce(b, z), dimensions={0}, to_apply=add
}
fused_elementwise {
  p = f32[10,20] parameter(0)
  ROOT r = f32[10,20] sqrt(p)
}
ENTRY computation {
  p = f32[10,20] parameter(0)
  o1 = f32[10,20] fusion(p), kind=kLoop, calls=fused_elementwise
  o2 = f32[] fusion(p), kind=kInput, calls=fused_reduction
  ROOT out = (f32[10,20], f32[]) tuple(o1, o2)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"sqrt(", "e.clone.1 = f32[10,20]{1,0} exponential(", "reduce(", "ROOT", "tuple(",
                               "(f32[10,20]{1,0}, f32[]) fusion(%p), kind=kInput, calls=%fused_elementwise"}))
      << r.text;
}

TEST(GpuMultiOutputFusionTest, KeepsProducerWhenTheConsumerWaitsOnAnotherOfItsUsers) {
  // d3 must run after n (a control predecessor), and n reads d0: fusing d0
  // into d3's fusion would make the fusion wait on n, which waits on the
  // fusion (a cycle). The corpus's copy_insertion_test.cc module with a
  // "Pin" custom call showed it.
  PassResult r = RunPass(std::make_unique<GpuMultiOutputFusion>(), R"(
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  w = f32[16,16] parameter(2)
  d0 = f32[16] add(p0, p1)
  d1 = f32[16] add(p1, p1)
  n = f32[16] dot(d0, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  d3 = f32[16] add(d0, d1), control-predecessors={n}
  ROOT t = (f32[16], f32[16]) tuple(d3, n)
})");
  EXPECT_FALSE(r.changed) << r.text;
  ExpectModuleVerifies(r);
}

// Layout assignment makes a transpose a bitcast and leaves the data
// movement to a copy (XLA:GPU's layout assignment); without XLA's layout
// normalization that copy is the transpose, and a transpose and a row
// reduction do not share a kernel (XLA's FusionHeroesAreCompatible).
TEST(GpuMultiOutputFusionTest, KeepsAReductionApartFromALayoutChangingCopySibling) {
  PassResult r = RunPass(std::make_unique<GpuMultiOutputFusion>(), R"(
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
reduce_fusion {
  p = f32[64,256]{1,0} parameter(0)
  t = f32[64,256]{1,0} tanh(p)
  z = f32[] constant(0)
  ROOT s = f32[64]{0} reduce(t, z), dimensions={1}, to_apply=add
}
copy_fusion {
  p = f32[64,256]{1,0} parameter(0)
  tr = f32[256,64]{0,1} transpose(p), dimensions={1,0}
  ROOT c = f32[256,64]{1,0} copy(tr)
}
ENTRY e {
  a = f32[64,256]{1,0} parameter(0)
  s = f32[64]{0} fusion(a), kind=kInput, calls=reduce_fusion
  c = f32[256,64]{1,0} fusion(a), kind=kLoop, calls=copy_fusion
  ROOT o = (f32[64]{0}, f32[256,64]{1,0}) tuple(s, c)
})");
  EXPECT_FALSE(r.changed) << r.text;
}

TEST(GpuMultiOutputFusionTest, CorpusModulesStayValidAndComputeTheSame) {
  CorpusRunStats stats = RunOnCorpus([] { return std::make_unique<GpuMultiOutputFusion>(); });
  if (stats.modules == 0) GTEST_SKIP() << "no corpus at ../shared/corpus";
  std::printf("multi_output_fusion on the corpus: %d modules, %d changed, %d evaluated\n", stats.modules,
              stats.changed, stats.evaluated);
  EXPECT_GT(stats.changed, 20);
}

// XLA's ProducerCandidateIsFusible asks the performance model
// (EstimateRunTimesForMultiOutputFusion) and rejects a producer-consumer
// multi-output fusion that "will execute slower if fused" (XLA:
// MultiOutputFusionTest.CostBasedNoMerge, a chain of reduce-windows): here
// the consumer's 9x9 window would recompute the producer's transcendental
// chain 81 times per element. Without a device (the seed era's pipeline)
// it is fused.
TEST(GpuMultiOutputFusionTest, CostModelRejectsAProducerTheConsumerRereads) {
  const std::string hlo = std::string(kAddF32Reducer) + R"(
fused_p {
  x = f32[512,512]{1,0} parameter(0)
  e = f32[512,512]{1,0} exponential(x)
  t = f32[512,512]{1,0} tanh(e)
  l = f32[512,512]{1,0} log(t)
  ROOT w = f32[512,512]{1,0} power(l, x)
}
fused_c {
  p0 = f32[512,512]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[512,512]{1,0} reduce-window(p0, z), window={size=9x9 pad=4_4x4_4}, to_apply=add
}
ENTRY e {
  x = f32[512,512]{1,0} parameter(0)
  p = f32[512,512]{1,0} fusion(x), kind=kLoop, calls=fused_p
  c = f32[512,512]{1,0} fusion(p), kind=kLoop, calls=fused_c
  ROOT r = (f32[512,512]{1,0}, f32[512,512]{1,0}) tuple(p, c)
})";
  PassResult kept = RunPass(std::make_unique<GpuMultiOutputFusion>(), hlo);
  EXPECT_FALSE(kept.changed) << kept.text;
  PassResult fused = RunPass(std::make_unique<GpuMultiOutputFusion>(MultiOutputFusionOptions{.device = ""}), hlo);
  EXPECT_TRUE(fused.changed) << fused.text;
  EXPECT_TRUE(Matches(fused.text, {"ENTRY", "(f32[512,512]{1,0}, f32[512,512]{1,0}) fusion(%x)"})) << fused.text;
}

}  // namespace
}  // namespace passlab
