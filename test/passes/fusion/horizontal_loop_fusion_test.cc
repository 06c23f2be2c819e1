#include "passes/fusion/horizontal_loop_fusion.h"
#include "passes/fusion/instruction_fusion.h"
#include "test/passes/fusion_test_util.h"

namespace passlab {
namespace {

// Two independent loop fusions (different shapes) and an s32 one, all
// feeding the root tuple.
constexpr char kThreeLoopFusions[] = R"(
f1 {
  a = f32[4,8] parameter(0)
  ROOT n = f32[4,8] negate(a)
}
f2 {
  a = f32[16] parameter(0)
  b = f32[16] parameter(1)
  ROOT m = f32[16] multiply(a, b)
}
f3 {
  a = s32[5] parameter(0)
  ROOT n = s32[5] negate(a)
}
ENTRY e {
  p = f32[4,8] parameter(0)
  q = f32[16] parameter(1)
  i = s32[5] parameter(2)
  x = f32[4,8] fusion(p), kind=kLoop, calls=f1
  y = f32[16] fusion(q, q), kind=kLoop, calls=f2
  z = s32[5] fusion(i), kind=kLoop, calls=f3
  ROOT t = (f32[4,8], f32[16], s32[5]) tuple(x, y, z)
})";

TEST(GpuHorizontalLoopFusionTest, ConcatenatesIndependentLoopFusionsAndSlicesTheOutputs) {
  PassResult r = RunPass(std::make_unique<GpuHorizontalLoopFusion>(), kThreeLoopFusions);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // x and y (f32) are fused; z (s32) stays on its own.
  EXPECT_EQ(CountFusions(*r.module), 2) << r.text;
  EXPECT_TRUE(Matches(r.text, {"f32[32]{0} reshape(", "f32[16]{0} reshape(", "f32[48]{0} concatenate(",
                               "f32[32]{0} slice(", "slice={[0:32]}", "f32[16]{0} slice(", "slice={[32:48]}",
                               "(f32[32]{0}, f32[16]{0}) fusion(", "f32[4,8]{1,0} bitcast(", "f32[16]{0} bitcast("}))
      << r.text;
}

TEST(GpuHorizontalLoopFusionTest, KeepsDependentOrLargeFusions) {
  PassResult r = RunPass(std::make_unique<GpuHorizontalLoopFusion>(), R"(
f1 {
  a = f32[16] parameter(0)
  ROOT n = f32[16] negate(a)
}
f2 {
  a = f32[16] parameter(0)
  ROOT e = f32[16] abs(a)
}
f3 {
  a = f32[512,1024] parameter(0)
  ROOT n = f32[512,1024] negate(a)
}
ENTRY e {
  p = f32[16] parameter(0)
  big = f32[512,1024] parameter(1)
  x = f32[16] fusion(p), kind=kLoop, calls=f1
  y = f32[16] fusion(x), kind=kLoop, calls=f2
  b = f32[512,1024] fusion(big), kind=kLoop, calls=f3
  ROOT t = (f32[16], f32[16], f32[512,1024]) tuple(x, y, b)
})");
  // y depends on x; b has more than 128 x 2048 elements.
  EXPECT_FALSE(r.changed) << r.text;
}

TEST(GpuHorizontalLoopFusionTest, CorpusModulesStayValidAndComputeTheSame) {
  // On the loop fusions instruction fusion builds first.
  CorpusRunStats stats = RunOnCorpus([] {
    auto pipeline = std::make_unique<HloPassPipeline>("fusion-then-horizontal");
    pipeline->AddPass<GpuInstructionFusion>();
    pipeline->AddPass<GpuHorizontalLoopFusion>();
    return pipeline;
  });
  if (stats.modules == 0) GTEST_SKIP() << "no corpus at ../shared/corpus";
  std::printf("gpu_horizontal_loop_fusion on the corpus: %d modules, %d changed, %d evaluated\n", stats.modules,
              stats.changed, stats.evaluated);
  EXPECT_GT(stats.changed, 100);
}

}  // namespace
}  // namespace passlab
