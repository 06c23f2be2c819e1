#include "passes/fusion/instruction_fusion.h"
#include "test/passes/fusion_test_util.h"

namespace passlab {
namespace {

std::unique_ptr<HloPassInterface> Fusion(bool may_duplicate) {
  return std::make_unique<GpuInstructionFusion>(GpuInstructionFusionOptions{.may_duplicate = may_duplicate});
}

TEST(GpuInstructionFusionTest, FusesElementwiseChainIntoOneLoopFusion) {
  PassResult r = RunPass(Fusion(false), R"(
ENTRY e {
  p0 = f32[8,16] parameter(0)
  p1 = f32[8,16] parameter(1)
  a = f32[8,16] add(p0, p1)
  m = f32[8,16] multiply(a, p1)
  ROOT t = f32[8,16] tanh(m)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountFusions(*r.module), 1) << r.text;
  EXPECT_EQ(r.module->entry_computation()->instruction_count(), 3) << r.text;  // p0, p1, fusion
  EXPECT_TRUE(Matches(r.text, {"add(", "multiply(", "tanh(", "ROOT %fusion = f32[8,16]{1,0} fusion(", "kind=kLoop"}))
      << r.text;
}

TEST(GpuInstructionFusionTest, ReductionIsTheHeroOfAnInputFusion) {
  PassResult r = RunPass(Fusion(false), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[32,64] parameter(0)
  x = f32[32,64] exponential(p)
  z = f32[] constant(0)
  ROOT r = f32[32] reduce(x, z), dimensions={1}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(r.module->entry_computation()->instruction_count(), 2) << r.text;
  EXPECT_TRUE(Matches(r.text, {"exponential(", "constant(0)", "reduce(", "ROOT %fusion", "kind=kInput"})) << r.text;
}

TEST(GpuInstructionFusionTest, KeepsReduceOutOfItsElementwiseConsumers) {
  // softmax-like: the reduce is fused as a hero only; the broadcast of its
  // result goes into the consumer's loop fusion, never the reduce itself.
  PassResult r = RunPass(Fusion(true), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[16,128] parameter(0)
  z = f32[] constant(0)
  s = f32[16] reduce(p, z), dimensions={1}, to_apply=add
  b = f32[16,128] broadcast(s), dimensions={0}
  ROOT d = f32[16,128] divide(p, b)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  const HloInstruction* root = r.module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kFusion) << r.text;
  EXPECT_EQ(root->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(CountOpcode(*root->fused_instructions_computation(), HloOpcode::kReduce), 0) << r.text;
  EXPECT_EQ(CountOpcode(*root->fused_instructions_computation(), HloOpcode::kBroadcast), 1) << r.text;
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kFusion) << r.text;
  EXPECT_EQ(root->operand(1)->fusion_kind(), FusionKind::kInput) << r.text;
}

TEST(GpuInstructionFusionTest, DoesNotDuplicateExpensiveProducers) {
  const std::string hlo = R"(
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  x = f32[64] exponential(p)
  a = f32[64] add(x, q)
  m = f32[64] multiply(x, q)
  ROOT t = (f32[64], f32[64]) tuple(a, m)
})";
  for (bool may_duplicate : {false, true}) {
    PassResult r = RunPass(Fusion(may_duplicate), hlo);
    ExpectModuleVerifies(r);
    // exp stays a single op computed once; add and multiply stay unfused
    // (nothing fusible to absorb).
    EXPECT_FALSE(r.changed) << r.text;
    EXPECT_EQ(CountFusions(*r.module), 0) << r.text;
  }
}

TEST(GpuInstructionFusionTest, DuplicatesCheapBroadcastsOnlyWhenAllowed) {
  const std::string hlo = R"(
ENTRY e {
  p = f32[32,32] parameter(0)
  q = f32[32,32] parameter(1)
  v = f32[32] parameter(2)
  b = f32[32,32] broadcast(v), dimensions={1}
  a = f32[32,32] add(p, b)
  m = f32[32,32] multiply(q, b)
  ROOT t = (f32[32,32], f32[32,32]) tuple(a, m)
})";
  EXPECT_FALSE(RunPass(Fusion(false), hlo).changed);
  PassResult r = RunPass(Fusion(true), hlo);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // One broadcast inside each consumer's fusion, none left outside.
  EXPECT_EQ(CountFusions(*r.module), 2) << r.text;
  EXPECT_EQ(CountOpcode(*r.module->entry_computation(), HloOpcode::kBroadcast), 0) << r.text;
}

TEST(GpuInstructionFusionTest, DoesNotDuplicateWhenTheConsumerWouldReadMoreBytes) {
  // add(p, q) has two users: fusing it into one would make that consumer
  // read p and q (2 arrays) instead of the sum (1 array).
  PassResult r = RunPass(Fusion(true), R"(
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  a = f32[64] add(p, q)
  n = f32[64] negate(a)
  ROOT t = (f32[64], f32[64]) tuple(a, n)
})");
  EXPECT_FALSE(r.changed) << r.text;
}

TEST(GpuInstructionFusionTest, KeepsExpensiveProducerOutOfReusingConsumer) {
  // The broadcast reads each exp element 100 times.
  PassResult r = RunPass(Fusion(true), R"(
ENTRY e {
  p = f32[4] parameter(0)
  x = f32[4] exponential(p)
  ROOT b = f32[4,100] broadcast(x), dimensions={0}
})");
  EXPECT_FALSE(r.changed) << r.text;
}

TEST(GpuInstructionFusionTest, LeavesDotsConvolutionsAndLibraryCallsUnfused) {
  PassResult r = RunPass(Fusion(true), R"(
ENTRY e {
  p = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  n = f32[8,16] negate(p)
  d = f32[8,4] dot(n, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[8,4] custom-call(n, w), custom_call_target="my_library_call"
  a = f32[8,4] add(d, g)
  ROOT r = f32[8,4] maximum(a, a)
})");
  ExpectModuleVerifies(r);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(CountOpcode(*r.module->entry_computation(), HloOpcode::kDot), 1) << r.text;
  EXPECT_EQ(CountOpcode(*r.module->entry_computation(), HloOpcode::kCustomCall), 1) << r.text;
  EXPECT_EQ(CountOpcode(*r.module->entry_computation(), HloOpcode::kNegate), 1) << r.text;
  EXPECT_TRUE(Matches(r.text, {"add(", "maximum(", "ROOT %fusion"})) << r.text;
}

TEST(GpuInstructionFusionTest, FusesInsideWhileBodiesButNotReducers) {
  PassResult r = RunPass(Fusion(false), std::string(kAddF32Reducer) + R"(
cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[16] get-tuple-element(s), index=1
  y = f32[16] multiply(x, x)
  z = f32[16] negate(y)
  ROOT t = (s32[], f32[16]) tuple(j, z)
}
ENTRY e {
  z = s32[] constant(0)
  p = f32[16] parameter(0)
  init = (s32[], f32[16]) tuple(z, p)
  w = (s32[], f32[16]) while(init), condition=cond, body=body
  ROOT x = f32[16] get-tuple-element(w), index=1
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  const HloComputation* body = r.module->GetComputationWithName("body");
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(CountOpcode(*body, HloOpcode::kMultiply), 0) << r.text;
  EXPECT_EQ(CountOpcode(*body, HloOpcode::kFusion), 2) << r.text;  // j = i + 1, and negate(x * x)
  EXPECT_EQ(CountOpcode(*r.module->GetComputationWithName("add"), HloOpcode::kFusion), 0) << r.text;
}

TEST(GpuInstructionFusionTest, EdgeCaseOperandUsedTwiceAndScalarConstants) {
  PassResult r = RunPass(Fusion(true), R"(
ENTRY e {
  p = f32[10] parameter(0)
  c = f32[] constant(2)
  b = f32[10] broadcast(c), dimensions={}
  m = f32[10] multiply(p, b)
  ROOT a = f32[10] add(m, m)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(r.module->entry_computation()->instruction_count(), 2) << r.text;  // p, fusion
  const HloInstruction* root = r.module->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand_count(), 1) << r.text;
}

TEST(GpuInstructionFusionTest, CorpusModulesStayValidAndComputeTheSame) {
  CorpusRunStats stats = RunOnCorpus([] { return Fusion(true); });
  if (stats.modules == 0) GTEST_SKIP() << "no corpus at ../shared/corpus";
  std::printf("fusion on the corpus: %d modules, %d changed, %d evaluated\n", stats.modules, stats.changed,
              stats.evaluated);
  EXPECT_GT(stats.changed, 100);
  EXPECT_GT(stats.evaluated, 50);
}

}  // namespace
}  // namespace passlab
