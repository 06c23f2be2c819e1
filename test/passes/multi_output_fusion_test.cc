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

TEST(GpuMultiOutputFusionTest, KeepsExpensiveProducerOutOfReductionsAndAvoidsCycles) {
  PassResult r = RunPass(std::make_unique<GpuMultiOutputFusion>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[8,32] parameter(0)
  x = f32[8,32] exponential(p)
  z = f32[] constant(0)
  r = f32[8] reduce(x, z), dimensions={1}, to_apply=add
  ROOT t = (f32[8], f32[8,32]) tuple(r, x)
})");
  EXPECT_FALSE(r.changed) << r.text;
  // m feeds n and c, and n feeds c: m cannot become an extra output of c's
  // kernel (n would read it from there and feed c: a cycle), but it can of
  // n's (c does not feed n).
  PassResult cyc = RunPass(std::make_unique<GpuMultiOutputFusion>(), R"(
ENTRY e {
  p = f32[32] parameter(0)
  m = f32[32] negate(p)
  n = f32[32] abs(m)
  c = f32[32] add(m, n)
  ROOT t = (f32[32], f32[32]) tuple(c, n)
})");
  EXPECT_TRUE(cyc.changed);
  ExpectModuleVerifies(cyc);
  const HloInstruction* c = cyc.module->entry_computation()->root_instruction()->operand(0);
  ASSERT_EQ(c->opcode(), HloOpcode::kAdd) << cyc.text;
  EXPECT_EQ(c->operand(0)->opcode(), HloOpcode::kGetTupleElement) << cyc.text;
  EXPECT_EQ(c->operand(0)->operand(0), c->operand(1)->operand(0)) << cyc.text;  // both from n's kernel
}

TEST(GpuMultiOutputFusionTest, CorpusModulesStayValidAndComputeTheSame) {
  CorpusRunStats stats = RunOnCorpus([] { return std::make_unique<GpuMultiOutputFusion>(); });
  if (stats.modules == 0) GTEST_SKIP() << "no corpus at ../shared/corpus";
  std::printf("multi_output_fusion on the corpus: %d modules, %d changed, %d evaluated\n", stats.modules,
              stats.changed, stats.evaluated);
  EXPECT_GT(stats.changed, 20);
}

}  // namespace
}  // namespace passlab
