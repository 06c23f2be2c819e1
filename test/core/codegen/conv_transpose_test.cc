// The direct convolution loop nest (what runs when the conv rewriter is
// off) and the tiled transpose emitter, against the evaluator.
#include <gtest/gtest.h>

#include "test/core/codegen/codegen_test_util.h"

namespace passlab {
namespace {

using testing::ExpectFusedMatchesEvaluator;
using testing::ExpectMatchesEvaluator;

TEST(ConvolutionTest, Nhwc3x3PaddedStrided) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[2,9,7,3] parameter(0)
  k = f32[3,3,3,5] parameter(1)
  ROOT c = f32[2,5,4,5] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})", {1e-5, 1e-5, 16});
}

TEST(ConvolutionTest, NchwDilatedReversedAndNonDefaultLayout) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[1,2,8,6]{1,3,2,0} parameter(0)
  k = f32[4,2,2,3] parameter(1)
  ROOT c = f32[1,4,8,7]{1,3,2,0} convolution(x, k), window={size=2x3 pad=1_1x1_2 rhs_dilate=2x1 lhs_dilate=1x2 rhs_reversal=1x0}, dim_labels=bf01_oi01->bf01
})", {1e-5, 1e-5, 16});
}

TEST(ConvolutionTest, FeatureGroupsDepthwiseAndBatchGroups) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[2,6,6,4] parameter(0)
  k = f32[3,3,1,4] parameter(1)
  ROOT c = f32[2,6,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4
})", {1e-5, 1e-5, 16});
  // The filter gradient form: batch groups over the output features.
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = f32[4,5,5,3] parameter(0)
  k = f32[5,5,3,6] parameter(1)
  ROOT c = f32[2,1,1,6] convolution(x, k), window={size=5x5}, dim_labels=b01f_01io->b01f, batch_group_count=2
})", {1e-5, 1e-5, 16});
}

TEST(ConvolutionTest, Bf16InputsAndIntegerConvolution) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = bf16[1,5,5,2] parameter(0)
  k = bf16[2,2,2,3] parameter(1)
  ROOT c = bf16[1,4,4,3] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f
})", {2e-2, 2e-2, 2});
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  x = s32[1,5,2] parameter(0)
  k = s32[3,2,2] parameter(1)
  ROOT c = s32[1,3,2] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f
})", {0, 0, 0});
}

TEST(TransposeEmitterTest, TiledTransposeOddSizesAndLayouts) {
  EmitterKind kind;
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[67,45] parameter(0)
  t = f32[45,67] transpose(a), dimensions={1,0}
  ROOT n = f32[45,67] negate(t)
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[3,70,33,5]{3,1,2,0} parameter(0)
  t = f32[5,33,3,70]{0,2,3,1} transpose(a), dimensions={3,2,0,1}
  e = f32[5,33,3,70]{0,2,3,1} exponential(t)
  ROOT s = (f32[5,33,3,70]{0,2,3,1}, f32[5,33,3,70]{0,2,3,1}) tuple(e, t)
})", {1e-6, 1e-6, 4}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
  // Large enough to be split across threads.
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = s32[513,300] parameter(0)
  ROOT t = s32[300,513] transpose(a), dimensions={1,0}
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
}

// A reverse (or elementwise op) between the parameter and the transpose
// hero: the tiles span the output's minor dimension and the dimension read
// along the operand's minor one (both >= 16 here unless said otherwise, as
// XLA's GetDescriptionForTiledTransposeEmitter asks); the reverse only moves
// the index a tile element reads. Odd extents leave partial tiles on both
// tiled dimensions.
TEST(TransposeEmitterTest, ReverseThenTransposeMatchesEvaluator) {
  EmitterKind kind;
  // ResNet's flipped filters (dimensions={3,0,1,2} of the HWIO weight).
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[3,3,20,37] parameter(0)
  r = f32[3,3,20,37] reverse(a), dimensions={0,1}
  ROOT t = f32[37,3,3,20] transpose(r), dimensions={3,0,1,2}
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
  // Reversed along both tiled dimensions.
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[5,33,19] parameter(0)
  r = f32[5,33,19] reverse(a), dimensions={1,2}
  ROOT t = f32[19,5,33] transpose(r), dimensions={2,0,1}
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
  // Too small to tile as XLA would (square tiles): every dimension
  // reversed, then an elementwise op after the hero; and a preserved minor
  // dimension of 64 bits.
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[7,9,11] parameter(0)
  r = f32[7,9,11] reverse(a), dimensions={0,1,2}
  t = f32[11,9,7] transpose(r), dimensions={2,1,0}
  ROOT n = f32[11,9,7] negate(t)
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[5,11,2] parameter(0)
  r = f32[5,11,2] reverse(a), dimensions={0,2}
  ROOT t = f32[11,5,2] transpose(r), dimensions={1,0,2}
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
  // f16 (a 32-element tile along the read dimension) and f64 (8), with
  // non-default layouts on both sides.
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f16[3,70,45] parameter(0)
  r = f16[3,70,45] reverse(a), dimensions={0,2}
  ROOT t = f16[45,3,70] transpose(r), dimensions={2,0,1}
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f64[17,13,20]{0,2,1} parameter(0)
  r = f64[17,13,20]{0,2,1} reverse(a), dimensions={0,1}
  ROOT t = f64[20,17,13]{0,2,1} transpose(r), dimensions={2,0,1}
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
  // Unit dimensions on both sides: the tiles skip them.
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = s32[3,1,17,1,24] parameter(0)
  r = s32[3,1,17,1,24] reverse(a), dimensions={0,2}
  ROOT t = s32[1,24,3,17,1] transpose(r), dimensions={1,4,0,2,3}
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
  // A multi-output fusion: the reverse itself is an output too.
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[3,3,17,20] parameter(0)
  r = f32[3,3,17,20] reverse(a), dimensions={0,1}
  t = f32[20,3,3,17] transpose(r), dimensions={3,0,1,2}
  ROOT s = (f32[20,3,3,17], f32[3,3,17,20]) tuple(t, r)
})", {0, 0, 0}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
}

// Split across threads: bands of the read dimension at every position of the
// other dimensions, each band written by one task.
TEST(TransposeEmitterTest, ReverseThenTransposeSplitAcrossThreads) {
  CpuCompileOptions options;
  options.parallel_threshold_elements = 1;
  options.num_threads = 2;
  EmitterKind kind;
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[3,3,64,130] parameter(0)
  r = f32[3,3,64,130] reverse(a), dimensions={0,1}
  ROOT t = f32[130,3,3,64] transpose(r), dimensions={3,0,1,2}
})", {0, 0, 0}, options, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
  // The minor dimension (33 x 32 bits) stays minor (dimensions={2,0,1,3}):
  // walked in physical rows.
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[3,3,40,33] parameter(0)
  r = f32[3,3,40,33] reverse(a), dimensions={0,1}
  ROOT t = f32[40,3,3,33] transpose(r), dimensions={2,0,1,3}
})", {0, 0, 0}, options, &kind);
  EXPECT_EQ(kind, EmitterKind::kTranspose);
}

}  // namespace
}  // namespace passlab
