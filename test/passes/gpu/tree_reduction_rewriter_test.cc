#include "passes/gpu/tree_reduction_rewriter.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

// XLA's tree_reduction_rewriter_test.cc,
// RowReductionSingleDimensionNoBatchedDivisible: n = 50048 = 128 * 391; the
// search from floor(sqrt(n)) = 223 down finds no padding at 184, 136 and
// 128 (a power of two wins the tie), giving {391, 128}, swapped for
// vectorization to [128, 391].
TEST(TreeReductionRewriterTest, RowReductionDivisibleSplitsWithoutPadding) {
  PassResult r = RunPass(std::make_unique<TreeReductionRewriter>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  input = f32[50048] parameter(0)
  zero = f32[] constant(0)
  ROOT out = f32[] reduce(input, zero), dimensions={0}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"NOT:pad(", "f32[128,391]{1,0} bitcast(%input)", "f32[128]{0} reduce(",
                               "dimensions={1}", "ROOT", "f32[] reduce(", "dimensions={0}"}))
      << r.text;
}

// n = 20000 > 16384: 125 divides it (no padding), so {160, 125}; 125 is
// odd, so the pair swaps to [125, 160].
TEST(TreeReductionRewriterTest, RowReductionPrefersNoPadding) {
  PassResult r = RunPass(std::make_unique<TreeReductionRewriter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[2,20000] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[2] reduce(p, z), dimensions={1}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"NOT:pad(", "s32[2,125,160]{2,1,0} bitcast(%p)", "s32[2,125]{1,0} reduce(",
                               "dimensions={2}", "ROOT", "s32[2]{0} reduce(", "dimensions={1}"}))
      << r.text;
}

// XLA's VariadicReductionLargeRow: 100003 needs padding 2 (to 295 * 339);
// every input is padded with its own init value, and the outer reduce reads
// the inner one's elements.
TEST(TreeReductionRewriterTest, VariadicRowReductionPadsEachInput) {
  PassResult r = RunPass(std::make_unique<TreeReductionRewriter>(), R"(
argmax {
  running_max = f32[] parameter(0)
  running_max_idx = u32[] parameter(1)
  current_value = f32[] parameter(2)
  current_value_idx = u32[] parameter(3)
  cmp_code = pred[] compare(current_value, running_max), direction=GT
  new_max = f32[] select(cmp_code, current_value, running_max)
  new_idx = u32[] select(cmp_code, current_value_idx, running_max_idx)
  ROOT out = (f32[], u32[]) tuple(new_max, new_idx)
}

ENTRY main {
  input = f32[2,100003] parameter(0)
  idxs = u32[2,100003] iota(), iota_dimension=0
  zero = f32[] constant(0)
  zero_idx = u32[] constant(0)
  ROOT out = (f32[2], u32[2]) reduce(input, idxs, zero, zero_idx), dimensions={1}, to_apply=argmax
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[2,100005]{1,0} pad(%input, %zero), padding=0_0x0_2",
                               "f32[2,295,339]{2,1,0} bitcast(", "u32[2,100005]{1,0} pad(%idxs, %zero_idx)",
                               "(f32[2,295]{1,0}, u32[2,295]{1,0}) reduce(", "dimensions={2}", "get-tuple-element(",
                               "ROOT", "(f32[2]{0}, u32[2]{0}) reduce("}))
      << r.text;
}

TEST(TreeReductionRewriterTest, ColumnReductionSqrtSplitWithoutPadding) {
  // d1 = 4900 > 32 * 128: sqrt = 70 divides it.
  PassResult r = RunPass(std::make_unique<TreeReductionRewriter>(), std::string(kAddS32Reducer) + R"(
ENTRY e {
  p = s32[4900,3] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3] reduce(p, z), dimensions={0}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"NOT:pad(", "s32[70,70,3]{2,1,0} bitcast(%p)", "s32[70,3]{1,0} reduce(",
                               "dimensions={1}", "ROOT", "dimensions={0}"}))
      << r.text;
}

// XLA's RowReductionBatchedDimensionDoesNotFit: a batch block over 8:
// reduce the minor reduced dimension, then dimension 0; the new reduces are
// not split again.
TEST(TreeReductionRewriterTest, RowReductionWithLargeBatchReducesMinorFirst) {
  PassResult r = RunPass(std::make_unique<TreeReductionRewriter>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[16,3,64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(p, z), dimensions={0,2}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[16,3]{1,0} reduce(%p, %z), dimensions={2}", "ROOT", "f32[3]{0} reduce(",
                               "dimensions={0}"}))
      << r.text;
  EXPECT_EQ(CountReduces(*r.module), 2);
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

// XLA's NonCosequtiveReductionDims and the emitter's choice: neither the
// kept nor the reduced dimensions are consecutive, or a row is too narrow
// (10 elements: less than a warp and not dividing 32) for the reduction
// emitter; such reduces are not its to split.
TEST(TreeReductionRewriterTest, KeepsReductionsTheEmitterDoesNotTake) {
  EXPECT_FALSE(RunPass(std::make_unique<TreeReductionRewriter>(), std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[5,3,4,5] parameter(0)
  q = f32[16,3,10] parameter(1)
  z = f32[] constant(0)
  a = f32[5,4] reduce(p, z), dimensions={1,3}, to_apply=add
  b = f32[3] reduce(q, z), dimensions={0,2}, to_apply=add
  ROOT t = (f32[5,4], f32[3]) tuple(a, b)
})").changed);
}

}  // namespace
}  // namespace passlab
