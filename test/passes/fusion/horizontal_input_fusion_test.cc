#include "passes/fusion/horizontal_input_fusion.h"
#include "passes/fusion/instruction_fusion.h"
#include "test/passes/fusion_test_util.h"

namespace passlab {
namespace {

constexpr char kTwoReductions[] = R"(
f1 {
  a = f32[16,64] parameter(0)
  n = f32[16,64] negate(a)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(n, z), dimensions={1}, to_apply=add
}
f2 {
  a = f32[16,64] parameter(0)
  e = f32[16,64] exponential(a)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(e, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p = f32[16,64] parameter(0)
  q = f32[16,64] parameter(1)
  r1 = f32[16] fusion(p), kind=kInput, calls=f1
  r2 = f32[16] fusion(q), kind=kInput, calls=f2
  ROOT s = f32[16] add(r1, r2)
})";

TEST(GpuHorizontalInputFusionTest, FusesIndependentReductionsFeedingOneConsumer) {
  PassResult r = RunPass(std::make_unique<GpuHorizontalInputFusion>(), std::string(kAddF32Reducer) + kTwoReductions);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountFusions(*r.module), 1) << r.text;
  const HloInstruction* f = r.module->entry_computation()->root_instruction()->operand(0)->operand(0);
  ASSERT_EQ(f->opcode(), HloOpcode::kFusion) << r.text;
  EXPECT_EQ(f->operand_count(), 2) << r.text;  // p and q: no shared input needed
  EXPECT_EQ(CountOpcode(*f->fused_instructions_computation(), HloOpcode::kReduce), 2) << r.text;
}

TEST(GpuHorizontalInputFusionTest, KeepsReductionsOfDifferentShapesOrDependentOnEachOther) {
  std::string hlo = std::string(kAddF32Reducer) + R"(
f1 {
  a = f32[16,64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(a, z), dimensions={1}, to_apply=add
}
f2 {
  a = f32[64,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(a, z), dimensions={0}, to_apply=add
}
f3 {
  a = f32[16,64] parameter(0)
  b = f32[16] parameter(1)
  bb = f32[16,64] broadcast(b), dimensions={0}
  m = f32[16,64] multiply(a, bb)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(m, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p = f32[16,64] parameter(0)
  q = f32[64,16] parameter(1)
  r1 = f32[16] fusion(p), kind=kInput, calls=f1
  r2 = f32[16] fusion(q), kind=kInput, calls=f2
  r3 = f32[16] fusion(p, r1), kind=kInput, calls=f3
  ROOT s = (f32[16], f32[16], f32[16]) tuple(r1, r2, r3)
})";
  // r1 and r2 reduce differently; r3 depends on r1.
  EXPECT_FALSE(RunPass(std::make_unique<GpuHorizontalInputFusion>(), hlo).changed);
}

TEST(GpuHorizontalInputFusionTest, CorpusModulesStayValidAndComputeTheSame) {
  // On the reduction fusions instruction fusion builds first.
  CorpusRunStats stats = RunOnCorpus([] {
    auto pipeline = std::make_unique<HloPassPipeline>("fusion-then-horizontal");
    pipeline->AddPass<GpuInstructionFusion>();
    pipeline->AddPass<GpuHorizontalInputFusion>();
    return pipeline;
  });
  if (stats.modules == 0) GTEST_SKIP() << "no corpus at ../shared/corpus";
  std::printf("gpu_horizontal_input_fusion on the corpus: %d modules, %d changed, %d evaluated\n", stats.modules,
              stats.changed, stats.evaluated);
  EXPECT_GT(stats.changed, 100);
}

}  // namespace
}  // namespace passlab
