#include "passes/gpu/tree_reduction_rewriter.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

TEST(TreeReductionRewriterTest, RowReductionSqrtPadding) {
  // n = 20000 > 16384: M = ceil(sqrt(20000)) = 142, Q = 141, padded to 20022.
  PassResult r = RunPass(std::make_unique<TreeReductionRewriter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[2,20000] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[2] reduce(p, z), dimensions={1}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[2,20022]{1,0} pad(%p, %z), padding=0_0x0_22", "s32[2,141,142]{2,1,0} reshape(",
                               "s32[2,141]{1,0} reduce(", "dimensions={2}", "ROOT", "s32[2]{0} reduce(",
                               "dimensions={1}"}))
      << r.text;
}

TEST(TreeReductionRewriterTest, ColumnReductionSqrtSplitWithoutPadding) {
  // d1 = 4900 > 4096: M = 70, Q = 70, no padding needed.
  PassResult r = RunPass(std::make_unique<TreeReductionRewriter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[4900,3] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3] reduce(p, z), dimensions={0}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"NOT:pad(", "s32[70,70,3]{2,1,0} reshape(%p)", "s32[70,3]{1,0} reduce(",
                               "dimensions={1}", "ROOT", "dimensions={0}"}))
      << r.text;
}

TEST(TreeReductionRewriterTest, RowReductionWithLargeBatchReducesMinorFirst) {
  // [R=16, K=3, R=10]: d0 = 16 > tile 8: reduce dim 2, then dim 0.
  PassResult r = RunPass(std::make_unique<TreeReductionRewriter>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[16,3,10] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(p, z), dimensions={0,2}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[16,3]{1,0} reduce(%p, %z), dimensions={2}", "ROOT", "f32[3]{0} reduce(",
                               "dimensions={0}"}))
      << r.text;
}

TEST(TreeReductionRewriterTest, KeepsRaceFreeReductions) {
  EXPECT_FALSE(RunPass(std::make_unique<TreeReductionRewriter>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[8,3,16384] parameter(0)
  q = f32[4096,5] parameter(1)
  z = f32[] constant(0)
  a = f32[3] reduce(p, z), dimensions={0,2}, to_apply=add
  b = f32[5] reduce(q, z), dimensions={0}, to_apply=add
  ROOT t = (f32[3], f32[5]) tuple(a, b)
})").changed);
}

TEST(TreeReductionRewriterTest, EdgeCaseHugeRowBecomesRaceFreeTree) {
  // 40000 elements with a trailing size-1 dim: the size-1 dim is not the one
  // split. Every reduce left must be race-free.
  PassResult r = RunPass(std::make_unique<TreeReductionRewriter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[40000,1] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[] reduce(p, z), dimensions={0,1}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountReduces(*r.module), 2) << r.text;
}

}  // namespace
}  // namespace passlab
