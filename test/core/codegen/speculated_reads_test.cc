// Pad and reduce-window read an operand that is only moved (parameters
// through broadcast/transpose/slice/reverse/...) at a clamped index and
// select, without branches (SpeculatableRead, kernel_emitter.h); other
// operands keep the branch. Transpose kernels walk a group of outputs that
// reads its parameters in its own order by rows. Each case is checked
// against the evaluator, on odd sizes, padding of every kind and
// non-default layouts.
#include <gtest/gtest.h>

#include "test/core/codegen/codegen_test_util.h"

namespace passlab {
namespace {

using testing::ExpectFusedMatchesEvaluator;
using testing::ExpectMatchesEvaluator;

// The max-pool gradient's select chain as XLA:GPU's pipeline leaves it in
// the ResNet training steps (fusion.354 of ResNet-18): strided slices of a
// padded activation, compared and selected, next to the pooled maximum.
TEST(SpeculatedReadsTest, MaxPoolSelectChainOfPaddedSlices) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
ENTRY e {
  a = f32[2,9,11,5] parameter(0)
  z = f32[] constant(0)
  p = f32[2,11,13,5] pad(a, z), padding=0_0x1_1x1_1x0_0
  s0 = f32[2,5,6,5] slice(p), slice={[0:2], [0:9:2], [0:11:2], [0:5]}
  s1 = f32[2,5,6,5] slice(p), slice={[0:2], [0:9:2], [1:12:2], [0:5]}
  s2 = f32[2,5,6,5] slice(p), slice={[0:2], [2:11:2], [2:13:2], [0:5]}
  c0 = pred[2,5,6,5] compare(s0, s1), direction=GE
  m0 = f32[2,5,6,5] select(c0, s0, s1)
  c1 = pred[2,5,6,5] compare(m0, s2), direction=GE
  m1 = f32[2,5,6,5] select(c1, m0, s2)
  ninf = f32[] constant(-inf)
  rw = f32[2,5,6,5] reduce-window(a, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
  ROOT out = (pred[2,5,6,5], f32[2,5,6,5], f32[2,5,6,5]) tuple(c1, m1, rw)
})", {0, 0, 0});
}

// Negative and interior padding, a padding value read from a parameter, a
// transposed and reversed operand in another layout, a broadcast operand,
// and (for contrast) a pad of a computed value, which keeps its branch.
TEST(SpeculatedReadsTest, PadsOfMovedParametersAndOfComputedValues) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[6,4]{0,1} parameter(0)
  v = f32[] parameter(1)
  b = f32[3] parameter(2)
  t = f32[4,6] transpose(a), dimensions={1,0}
  r = f32[4,6] reverse(t), dimensions={0}
  p0 = f32[9,12] pad(r, v), padding=2_3_1x-1_2_1
  p1 = f32[7,3] pad(r, v), padding=-1_4x-2_-1
  bb = f32[3,5] broadcast(b), dimensions={0}
  p2 = f32[6,8] pad(bb, v), padding=1_2x0_3
  x = f32[4,6] exponential(r)
  p3 = f32[8,9] pad(x, v), padding=1_1_1x2_1
  ROOT out = (f32[9,12], f32[7,3], f32[6,8], f32[8,9]) tuple(p0, p1, p2, p3)
})", {1e-5, 1e-5, 4});
}

// Reduce-window inside a fusion on a moved parameter: strides, window and
// base dilation, padding on every side, an integer max; a reducer that is
// not in SpeculatableReducer's list and an operand that is computed keep
// the branch.
TEST(SpeculatedReadsTest, ReduceWindowsOfMovedAndComputedOperands) {
  ExpectFusedMatchesEvaluator(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
imax {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] maximum(x, y)
}
sub {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] subtract(x, y)
}
ENTRY e {
  a = f32[5,7]{0,1} parameter(0)
  i = s32[7,5] parameter(1)
  t = f32[7,5] transpose(a), dimensions={1,0}
  z = f32[] constant(0)
  r0 = f32[8,6] reduce-window(t, z), window={size=3x2 stride=1x2 pad=2_1x1_2 rhs_dilate=2x1 lhs_dilate=1x2}, to_apply=add
  mn = s32[] constant(-2147483648)
  r1 = s32[4,3] reduce-window(i, mn), window={size=3x3 stride=2x2 pad=1_1x1_1}, to_apply=imax
  r2 = f32[7,5] reduce-window(t, z), window={size=1x3 pad=0_0x1_1}, to_apply=sub
  l = f32[7,5] log(t)
  r3 = f32[7,5] reduce-window(l, z), window={size=3x1 pad=1_1x0_0}, to_apply=add
  ROOT out = (f32[8,6], s32[4,3], f32[7,5], f32[7,5]) tuple(r0, r1, r2, r3)
})", {1e-4, 1e-4, 8});
}

// An unfused pad and reduce-window (their operand is the parameter itself).
TEST(SpeculatedReadsTest, UnfusedPadAndReduceWindow) {
  ExpectMatchesEvaluator(R"(HloModule m
ENTRY e {
  a = f32[3,5,7] parameter(0)
  z = f32[] constant(-3)
  ROOT p = f32[4,13,6] pad(a, z), padding=0_1x2_1_1x-1_0
})", {0, 0, 0});
}

// ResNet-50's weight update with the old weight's transpose as a side
// output (fusion.331): the elementwise pair is walked by rows, the
// transpose in tiles. A second variant reads one parameter in another
// layout, so its elementwise group is not in order and keeps the tiles.
TEST(TransposeWalkTest, WeightUpdateWithTransposedSideOutput) {
  for (const char* layout : {"{3,2,1,0}", "{2,3,1,0}"}) {
    SCOPED_TRACE(layout);
    ExpectFusedMatchesEvaluator(std::string(R"(HloModule m
ENTRY e {
  w = f32[1,1,67,45] parameter(0)
  g = f32[1,1,67,45]{3,2,1,0} parameter(1)
  m = f32[1,1,67,45])") + layout + R"( parameter(2)
  b = f32[45] parameter(3)
  c9 = f32[] constant(0.9)
  k9 = f32[1,1,67,45] broadcast(c9), dimensions={}
  mm = f32[1,1,67,45] multiply(m, k9)
  bb = f32[1,1,67,45] broadcast(b), dimensions={3}
  gb = f32[1,1,67,45] add(g, bb)
  nm = f32[1,1,67,45] add(mm, gb)
  c1 = f32[] constant(0.1)
  k1 = f32[1,1,67,45] broadcast(c1), dimensions={}
  st = f32[1,1,67,45] multiply(nm, k1)
  nw = f32[1,1,67,45] subtract(w, st)
  t = f32[1,1,45,67] transpose(w), dimensions={0,1,3,2}
  ROOT out = (f32[1,1,67,45], f32[1,1,67,45], f32[1,1,45,67]) tuple(nw, nm, t)
})",
                                {1e-6, 1e-6, 4});
  }
}

}  // namespace
}  // namespace passlab
