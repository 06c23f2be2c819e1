// AlgebraicSimplifier rules ported from XLA's own tests
// (xla/hlo/transforms/simplifiers/algebraic_simplifier_test.cc, test named in
// each comment). Like XLA's fixture, each runs one sweep unless the XLA test
// wraps the pass in HloPassFix; RunPass also checks values before and after.
#include "core/verify/hlo_verifier.h"
#include "passes/registry.h"
#include "passes/simplifiers/algebraic_simplifier.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

AlgebraicSimplifierOptions OneSweep() {
  AlgebraicSimplifierOptions o;
  o.run_to_fixed_point = false;
  return o;
}

PassResult Simplify(const std::string& hlo, AlgebraicSimplifierOptions options = OneSweep()) {
  return RunPass(std::make_unique<AlgebraicSimplifier>(options), hlo);
}

// MinimumWithInfinityLhs: min(inf, x) => x, even when inf is an f16 constant.
TEST(AlgsimpXlaRulesTest, MinimumWithInfinityFolds) {
  PassResult r = Simplify(R"(HloModule test
ENTRY main {
  x = f16[] constant(inf)
  y = f32[] parameter(0)
  ROOT min = f32[] minimum(x, y)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %y = f32[] parameter(0)"})) << r.text;
}

// MinimumWithInfinityLhsAndRhsF16Type: the other operand must have the
// result's type; constants are not moved to the right of min/max.
TEST(AlgsimpXlaRulesTest, KeepsMinimumWithMixedTypes) {
  PassResult r = Simplify(R"(HloModule test
ENTRY main {
  x = f32[] constant(inf)
  y = f16[] parameter(0)
  ROOT min = f32[] minimum(x, y)
})");
  EXPECT_FALSE(r.changed) << r.text;
}

// MinimumOfMinimum2 and MaximumOfMaximum3.
TEST(AlgsimpXlaRulesTest, NestedMinMaxFold) {
  PassResult r = Simplify(R"(HloModule test
ENTRY main {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  min1 = f32[] minimum(x, y)
  ROOT min = f32[] minimum(min1, x)
})");
  EXPECT_TRUE(Matches(r.text, {"ROOT %min1 = f32[] minimum(%x, %y)"})) << r.text;
  r = Simplify(R"(HloModule test
ENTRY main {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  max1 = f32[] maximum(x, y)
  ROOT max = f32[] maximum(y, max1)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %max = f32[] maximum(%y, %x)"})) << r.text;
}

// ExpOfZero (run to a fixed point, as XLA's test does: the broadcast sinks
// below the exponential first).
TEST(AlgsimpXlaRulesTest, ExpOfZeroIsOne) {
  AlgebraicSimplifierOptions fixed_point;
  PassResult r = Simplify(R"(HloModule test
ENTRY main {
  z = f32[] constant(0)
  b = f32[3] broadcast(z), dimensions={}
  ROOT e = f32[3] exponential(b)
})", fixed_point);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[] constant(1)", "ROOT %broadcast", "f32[3]{0} broadcast(", "NOT:exponential"})) << r.text;
}

// TrivialReduceWindow_Max, TrivialReduceWindowWithPad and
// TrivialReduceWindowWithUnsupported.
TEST(AlgsimpXlaRulesTest, TrivialReduceWindowBecomesElementwise) {
  const std::string reducer = R"(HloModule test
max {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT max = f32[] maximum(p0, p1)
}
)";
  PassResult r = Simplify(reducer + R"(
ENTRY test {
  p = f32[16,32] parameter(0)
  constant = f32[] constant(-inf)
  ROOT reduce-window = f32[19,39] reduce-window(p, constant), window={size=1x1 pad=1_2x3_4}, to_apply=max
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"broadcast(%constant)", "maximum(%p, %broadcast)",
                               "ROOT %pad = f32[19,39]{1,0} pad(%maximum, %constant), padding=1_2x3_4"}))
      << r.text;
  PassResult keep = Simplify(reducer + R"(
ENTRY test {
  p = f32[16,32] parameter(0)
  constant = f32[] constant(-inf)
  ROOT a = f32[19,20] reduce-window(p, constant), window={size=1x1 pad=1_2x3_4 stride=1x2}, to_apply=max
})");
  EXPECT_FALSE(keep.changed) << keep.text;
}

// ReduceWindowCumSumBroadcastOfConstantWithSlice.
TEST(AlgsimpXlaRulesTest, CumulativeSumOfConstantIsAMultiply) {
  PassResult r = Simplify(R"(HloModule m
add_f32 {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT a = f32[] add(p0, p1)
}
ENTRY test {
  c = f32[] constant(2)
  b = f32[20,20] broadcast(c), dimensions={}
  slice = f32[10,10] slice(b), slice={[5:15], [5:15]}
  reshape = f32[100] reshape(slice)
  c_zero = f32[] constant(0)
  ROOT rw = f32[100] reduce-window(reshape, c_zero), window={size=100 pad=99_0}, to_apply=add_f32
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"iota()", "ROOT %multiply = f32[100]{0} multiply("})) << r.text;
}

// SliceReverse: slice(reverse(x)) => reverse(slice(x)).
TEST(AlgsimpXlaRulesTest, SliceOfReverseBecomesReverseOfSlice) {
  PassResult r = Simplify(R"(HloModule module
ENTRY test {
  param = f32[6,7,32] parameter(0)
  constant = f32[] constant(0)
  pad = f32[8,7,32] pad(param, constant), padding=1_1x0_0x0_0
  rev = f32[8,7,32] reverse(pad), dimensions={0,2}
  slice = f32[1,7,32] slice(rev), slice={[2:3:1], [0:7:1], [0:32:1]}
  ROOT tuple = (f32[1,7,32]) tuple(slice)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"slice(%pad), slice={[5:6], [0:7], [0:32]}", "reverse(%slice.1), dimensions={0,2}"}))
      << r.text;
}

// SliceOfPad, SliceOfPadLow.
TEST(AlgsimpXlaRulesTest, SliceOfPadSlicesTheOperandOrTheValue) {
  const std::string head = R"(HloModule module
ENTRY test {
  param = f32[3,4] parameter(0)
  constant = f32[] constant(0.0)
  pad = f32[8,10] pad(f32[3,4] param, f32[] constant), padding=3_2x1_5
)";
  PassResult inside = Simplify(head + "  ROOT slice = f32[2,3] slice(f32[8,10] pad), slice={[4:6],[2:5]}\n}\n");
  EXPECT_TRUE(Matches(inside.text, {"ROOT %slice.1 = f32[2,3]{1,0} slice(%param), slice={[1:3], [1:4]}"}))
      << inside.text;
  PassResult padding = Simplify(head + "  ROOT slice = f32[1,1] slice(f32[8,10] pad), slice={[2:3],[0:1]}\n}\n");
  EXPECT_TRUE(Matches(padding.text, {"ROOT %broadcast = f32[1,1]{1,0} broadcast(%constant)"})) << padding.text;
}

// DynamicUpdateSliceOfBroadcastToPadOob: out-of-bounds starts are clamped.
TEST(AlgsimpXlaRulesTest, DynamicUpdateSliceOfBroadcastBecomesPad) {
  PassResult r = Simplify(R"(HloModule module
ENTRY f {
  constant.546 = f32[] constant(0)
  broadcast.467 = f32[2]{0} broadcast(constant.546), dimensions={}
  parameter.1 = f32[1]{0} parameter(0)
  constant.551 = s32[] constant(2)
  ROOT dynamic-update-slice.44 = f32[2]{0} dynamic-update-slice(broadcast.467, parameter.1, constant.551)
})");
  EXPECT_TRUE(Matches(r.text, {"ROOT %pad = f32[2]{0} pad(%parameter.1, %constant.546), padding=1_0"})) << r.text;
}

// DynamicSliceTrivialIndices.
TEST(AlgsimpXlaRulesTest, DynamicSliceOfFullDimStartsAtZero) {
  PassResult r = Simplify(R"(HloModule module
ENTRY f {
  %operand = s32[2,2] parameter(0)
  %index = u32[] parameter(1)
  ROOT %dynamic-slice = s32[2,1] dynamic-slice(%operand, %index, %index), dynamic_slice_sizes={2,1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"u32[] constant(0)", "dynamic-slice(%operand, %constant, %index)"})) << r.text;
}

// SimplifyBitcastConvertChain and SimplifyTautologicalBitcastConvert.
TEST(AlgsimpXlaRulesTest, BitcastConvertChainsCollapse) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  p0 = s16[10] parameter(0)
  b1 = bf16[10] bitcast-convert(p0)
  b2 = u16[10] bitcast-convert(b1)
  b3 = f16[10] bitcast-convert(b2)
  ROOT out = s16[10] bitcast-convert(b3)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %bitcast-convert", "s16[10]{0} bitcast-convert(%p0)"})) << r.text;
}

// CommuteReduceAndBroadcast.
TEST(AlgsimpXlaRulesTest, ReduceOfBroadcastOverItsOperandDims) {
  PassResult r = Simplify(R"(HloModule m
region_0.1 {
  a = f32[] parameter(1)
  b = f32[] parameter(0)
  ROOT s = f32[] add(b, a)
}
ENTRY fused_computation {
  param_0.4 = f32[8,16] parameter(0)
  bcast = f32[4,2,8,16] broadcast(param_0.4), dimensions={2,3}
  constant.0 = f32[] constant(0)
  ROOT reduce_sum.0 = f32[4,2] reduce(bcast, constant.0), dimensions={2,3}, to_apply=region_0.1
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[] reduce(%param_0.4, %constant.0), dimensions={0,1}",
                               "ROOT %broadcast = f32[4,2]{1,0} broadcast(%reduce)"}))
      << r.text;
}

// ReduceOfNegate: sum(-x) => -sum(x) for floats with a zero init.
TEST(AlgsimpXlaRulesTest, ReduceOfNegateNegatesTheSum) {
  PassResult r = Simplify(R"(HloModule m
add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT r = f32[] add(p0, p1)
}
ENTRY test {
  p = f32[5,7,11] parameter(0)
  n = f32[5,7,11] negate(p)
  z = f32[] constant(0)
  ROOT r = f32[7] reduce(n, z), dimensions={0,2}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"reduce(%p, %z)", "ROOT %negate = f32[7]{0} negate("})) << r.text;
}

// HoistTransposeOfReshape and HoistTransposeOfReshapeDisabled.
TEST(AlgsimpXlaRulesTest, HoistsTransposeOfReshapeWhenEnabled) {
  const std::string hlo = R"(HloModule m
ENTRY test {
  p = f32[10,20,1200] parameter(0)
  r1 = f32[10,20,30,40] reshape(p)
  t1 = f32[10,30,40,20] transpose(r1), dimensions={0,2,3,1}
  ROOT r2 = f32[10,1200,20] reshape(t1)
})";
  EXPECT_FALSE(Simplify(hlo).changed);
  AlgebraicSimplifierOptions hoist = OneSweep();
  hoist.enable_hoist_transpose_of_reshape = true;
  PassResult r = Simplify(hlo, hoist);
  EXPECT_TRUE(Matches(r.text, {"f32[10,20,1200]{2,1,0} reshape(%p)", "transpose(%reshape), dimensions={0,2,1}"}))
      << r.text;
}

// ImagWithNonComplexInput / RealWithNonComplexInput.
TEST(AlgsimpXlaRulesTest, RealAndImagOfRealValues) {
  PassResult r = Simplify(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  re = f32[4] real(p)
  im = f32[4] imag(p)
  ROOT t = (f32[4], f32[4]) tuple(re, im)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[] constant(0)", "tuple(%p, %broadcast)"})) << r.text;
}

// MultipleDotStrengthReductions: matrix-vector dots become multiply + reduce,
// with one scalar add computation per accumulation type.
TEST(AlgsimpXlaRulesTest, MatrixVectorDotsBecomeReduces) {
  PassResult r = Simplify(R"(HloModule test
ENTRY test {
  a = c64[2,2] parameter(0)
  b = c64[2] parameter(1)
  cd = c64[2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f64[2,2] parameter(2)
  d = f64[2] parameter(3)
  dd = f64[2] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple = (c64[2], f64[2]) tuple(cd, dd)
})");
  EXPECT_TRUE(r.changed);
  ASSERT_NE(r.module, nullptr);
  EXPECT_EQ(r.module->computation_count(), 3) << r.text;
  EXPECT_TRUE(Matches(r.text, {"NOT: dot("})) << r.text;
}

// NoDotToMultiplyRewriteWithPrecisionConfigAlgorithm: dots with an
// algorithm other than f32 stay.
TEST(AlgsimpXlaRulesTest, KeepsDotWithPrecisionAlgorithm) {
  PassResult r = Simplify(R"(HloModule test
ENTRY dot {
  a = f32[128]{0} parameter(0)
  b = f32[128]{0} parameter(1)
  ROOT dot = f32[128,128]{1,0} dot(a, b), algorithm=dot_tf32_tf32_f32
})");
  EXPECT_FALSE(r.changed) << r.text;
}

// AddSubSameInt / SubAddSame: integer cancellations, floats only with fast math.
TEST(AlgsimpXlaRulesTest, CancelsAddAndSubtractOfTheSameOperand) {
  PassResult ints = Simplify(R"(HloModule m
ENTRY main {
  p0 = s32[] parameter(0)
  p1 = s32[] parameter(1)
  sub = s32[] subtract(p1, p0)
  ROOT add = s32[] add(p0, sub)
})");
  EXPECT_TRUE(Matches(ints.text, {"ROOT %p1 = s32[] parameter(1)"})) << ints.text;
  PassResult floats = Simplify(R"(HloModule m
ENTRY main {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  sub = f32[] subtract(p1, p0)
  ROOT add = f32[] add(p0, sub)
})");
  EXPECT_FALSE(floats.changed) << floats.text;
}

// SelectGtCompare-style predicate selects: select(a > b, a, b) => a | b.
TEST(AlgsimpXlaRulesTest, PredicateSelectOfCompareIsLogic) {
  PassResult r = Simplify(R"(HloModule m
ENTRY main {
  a = pred[4] parameter(0)
  b = pred[4] parameter(1)
  c = pred[4] compare(a, b), direction=GT
  ROOT s = pred[4] select(c, a, b)
})");
  EXPECT_TRUE(Matches(r.text, {"ROOT %or = pred[4]{0} or(%a, %b)"})) << r.text;
}

// UnsignedDivideByPowerOf2 / UnsignedRemainderByPowerOf2.
TEST(AlgsimpXlaRulesTest, UnsignedDivideAndRemainderByPowerOfTwo) {
  PassResult r = Simplify(R"(HloModule m
ENTRY main {
  p = u32[4] parameter(0)
  c = u32[] constant(8)
  b = u32[4] broadcast(c), dimensions={}
  d = u32[4] divide(p, b)
  m = u32[4] remainder(p, b)
  ROOT t = (u32[4], u32[4]) tuple(d, m)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"shift-right-logical(%p,", "and(%p,"})) << r.text;
}

// GatherOfPad: the gather reads the unpadded operand and the result is padded.
TEST(AlgsimpXlaRulesTest, GatherOfPadBecomesPadOfGather) {
  PassResult r = Simplify(R"(HloModule module
ENTRY %entry {
  par.0 = f32[6,3]{1,0} parameter(0)
  constant.0 = f32[] constant(0)
  pad = f32[6,5]{1,0} pad(par.0, constant.0), padding=0_0x0_2
  start_indices = s32[4,1]{1,0} parameter(1)
  ROOT gather = f32[4,5]{1,0} gather(pad, start_indices), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"gather(%par.0, %start_indices)", "slice_sizes={1,3}", "ROOT %pad.1 = f32[4,5]{1,0} pad("}))
      << r.text;
}

// DotAssociativeReorder (use_associative_reordering): (A.B).C => A.(B.C)
// when it cuts the flops; DotRightDotContractBatchReorder: contracting the
// inner dot's batch dim stops every dot rewrite.
TEST(AlgsimpXlaRulesTest, ReassociatesDotChainsWhenCheaper) {
  AlgebraicSimplifierOptions o = OneSweep();
  o.use_associative_reordering = true;
  o.associative_reordering_threshold = 1.5;
  PassResult r = Simplify(R"(HloModule module
ENTRY test {
  a = f32[2,3,4,5] parameter(0)
  b = f32[6,7,5] parameter(1)
  c = f32[4,7] parameter(2)
  inner_dot = f32[2,3,4,6,7] dot(a,b), lhs_contracting_dims={3}, rhs_contracting_dims={2}
  ROOT outer_dot = f32[2,3,6] dot(inner_dot,c), lhs_contracting_dims={2,4}, rhs_contracting_dims={0,1}
})", o);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"dot(%b, %c)", "ROOT", "dot(%a, %dot"})) << r.text;
  PassResult keep = Simplify(R"(HloModule module
ENTRY test {
  a = f32[8,6,12] parameter(0)
  b = f32[8,6,4] parameter(1)
  c = f32[8,4,12] parameter(2)
  inner = f32[8,6,12] dot(b, c), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT outer = f32[12,12] dot(a, inner), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
})", o);
  EXPECT_FALSE(keep.changed) << keep.text;
}

// UnnestConcatenate and ConcatToBroadcast-style concatenate rules.
TEST(AlgsimpXlaRulesTest, ConcatenatesUnnestAndMergeSlices) {
  PassResult r = Simplify(R"(HloModule m
ENTRY main {
  p = f32[6,4] parameter(0)
  q = f32[2,4] parameter(1)
  s0 = f32[2,4] slice(p), slice={[0:2], [0:4]}
  s1 = f32[3,4] slice(p), slice={[2:5], [0:4]}
  inner = f32[4,4] concatenate(q, q), dimensions={0}
  ROOT c = f32[9,4] concatenate(s0, s1, inner), dimensions={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %concatenate = f32[9,4]{1,0} concatenate(%s0, %s1, %q, %q)"})) << r.text;
}

// Negative padding becomes a pad of the positive part and a slice.
TEST(AlgsimpXlaRulesTest, NegativePaddingBecomesSlice) {
  PassResult r = Simplify(R"(HloModule m
ENTRY main {
  p = f32[6] parameter(0)
  z = f32[] constant(0)
  ROOT pd = f32[6] pad(p, z), padding=-1_1
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[7]{0} pad(%p, %z), padding=0_1", "ROOT %slice = f32[6]{0} slice(%pad), slice={[1:7]}"}))
      << r.text;
}

// CopyReshape-style layout rules: without layout sensitivity a copy is
// removed; with it, a copy that moves no bytes becomes a bitcast.
TEST(AlgsimpXlaRulesTest, CopiesAreRemovedOrBecomeBitcasts) {
  const std::string hlo = R"(HloModule m
ENTRY main {
  p = f32[4,1,8]{2,1,0} parameter(0)
  ROOT c = f32[4,1,8]{2,0,1} copy(p)
})";
  PassResult plain = Simplify(hlo);
  EXPECT_TRUE(Matches(plain.text, {"ROOT %p = "})) << plain.text;
  AlgebraicSimplifierOptions layout = OneSweep();
  layout.is_layout_sensitive = true;
  PassResult sensitive = Simplify(hlo, layout);
  EXPECT_TRUE(Matches(sensitive.text, {"ROOT %bitcast = f32[4,1,8]{2,0,1} bitcast(%p)"})) << sensitive.text;
}

// AllGatherOfBroadcast and AllReduceSumOfBroadcastS32: collectives of a
// broadcast constant are broadcasts (a sum scales by the group size).
TEST(AlgsimpXlaRulesTest, CollectivesOfBroadcastConstants) {
  PassResult r = Simplify(R"(HloModule m, replica_count=4
add {
  p0 = s32[] parameter(0)
  p1 = s32[] parameter(1)
  ROOT a = s32[] add(p0, p1)
}
ENTRY test {
  z = s32[] constant(2)
  b = s32[4,4] broadcast(z), dimensions={}
  ar = s32[4,4] all-reduce(b), to_apply=add, replica_groups={{0,1,2,3}}
  ag = s32[16,4] all-gather(b), dimensions={0}, replica_groups={{0,1,2,3}}
  ROOT t = (s32[4,4], s32[16,4]) tuple(ar, ag)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"s32[] constant(8)", "NOT:all-reduce(", "NOT:all-gather("})) << r.text;
}

// The registry builds the pass from XLA's option names (as the conformance
// runner does for AlgebraicSimplifierOptions set by XLA's tests).
TEST(AlgsimpXlaRulesTest, RegistryTakesXlaOptionNames) {
  const PassRegistryEntry* entry = FindRegisteredPass("algsimp");
  ASSERT_NE(entry, nullptr);
  PassOptionValues values = entry->NewOptions();
  ASSERT_TRUE(values.Set("algsimp", "run_to_fixed_point", "false").ok());
  ASSERT_TRUE(values.Set("algsimp", "enable_hoist_transpose_of_reshape", "true").ok());
  ASSERT_TRUE(values.Set("algsimp", "associative_reordering_threshold", "1.5").ok());
  EXPECT_FALSE(values.Set("algsimp", "enable_hoist_transpose_of_reshpe", "true").ok());
  AlgebraicSimplifierOptions o = AlgebraicSimplifier::OptionsFrom(values);
  EXPECT_FALSE(o.run_to_fixed_point);
  EXPECT_TRUE(o.enable_hoist_transpose_of_reshape);
  EXPECT_DOUBLE_EQ(o.associative_reordering_threshold, 1.5);
  EXPECT_TRUE(o.minmax_propagate_nan);  // XLA's default
  EXPECT_NE(entry->Create(values), nullptr);
}

// EliminateReshapeTransposeChain: transposes and reshapes (adding or
// dropping one 1-sized dim) that compose to the identity => the source.
TEST(AlgsimpXlaRulesTest, ReshapeTransposeChainThatUndoesItself) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  param = f32[6,4,1,8] parameter(0)
  t1 = f32[6,8,4,1] transpose(param), dimensions={0,3,1,2}
  r1 = f32[6,8,4] reshape(t1)
  t2 = f32[6,4,8] transpose(r1), dimensions={0,2,1}
  ROOT r2 = f32[6,4,1,8] reshape(t2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %param = f32[6,4,1,8]{3,2,1,0} parameter(0)"})) << r.text;
}


// xla/backends/gpu/transforms/algebraic_simplifier_test.cc,
// DotToMultiplyRewriteForZeroContractingDimWith_BF16_BF16_F32_X6_Algorithm
// and DotToMultiplyRewriteWith_BF16_BF16_F32_X3_Algorithm: the GPU simplifier
// strength-reduces dots whose algorithm splits f32 into bf16 parts, with one
// bf16 multiply per partial product (6 for x6, 3 for x3); the generic one
// leaves them. Values: within bf16's precision of the plain dot.
TEST(AlgsimpXlaRulesTest, GpuSimplifierSplitsBf16DotAlgorithms) {
  auto run = [](const std::string& algorithm, const std::string& capability, const std::string& hlo) {
    auto m = ParseHloModule(hlo);
    EXPECT_TRUE(m.ok()) << m.status().message();
    std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 5);
    absl::StatusOr<Literal> before = HloEvaluator().Evaluate(**m, args);
    EXPECT_TRUE(before.ok());
    AlgebraicSimplifierOptions o;
    o.gpu_compute_capability = capability;
    absl::StatusOr<bool> changed = AlgebraicSimplifier(o).Run(**m);
    EXPECT_TRUE(changed.ok());
    absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
    EXPECT_TRUE(after.ok());
    if (before.ok() && after.ok()) {
      absl::Status same = CompareLiterals(*before, *after, {.abs = 1.0 / 64, .rel = 1.0 / 64});
      EXPECT_TRUE(same.ok()) << algorithm << ": " << same.message();
    }
    return std::make_pair(changed.ok() && *changed, PrintModule(**m));
  };
  const std::string scalar = R"(HloModule test
ENTRY dot {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT dot = f32[] dot(a, b), algorithm=dot_bf16_bf16_f32_x6
})";
  auto [changed, text] = run("x6", "8.0", scalar);
  EXPECT_TRUE(changed);
  size_t bf16_multiplies = 0;
  for (size_t at = text.find("bf16[] multiply("); at != std::string::npos; at = text.find("bf16[] multiply(", at + 1)) {
    ++bf16_multiplies;
  }
  EXPECT_EQ(bf16_multiplies, 6u) << text;
  EXPECT_FALSE(run("x6", "", scalar).first);  // the generic simplifier keeps it
  const std::string rows = R"(HloModule test
ENTRY dot {
  a = f32[16,32] parameter(0)
  b = f32[16,32] parameter(1)
  ROOT dot = f32[16] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}, algorithm=dot_bf16_bf16_f32_x3
})";
  auto [changed3, text3] = run("x3", "8.0", rows);
  EXPECT_TRUE(changed3);
  EXPECT_NE(text3.find("bitcast-convert("), std::string::npos) << text3;
  EXPECT_NE(text3.find("reduce("), std::string::npos) << text3;
}

AlgebraicSimplifierOptions WithScalarMultiplyReduction() {
  AlgebraicSimplifierOptions o = OneSweep();
  o.enable_scalar_multiply_reduction = true;
  return o;
}

// ScalarMultiplyReduction (XLA's test at smaller sizes): the conv's result
// is its smallest side, so the multipliers of both operands (0.5 two levels
// down, 1.109 on the rhs) go and their product scales the result.
TEST(AlgsimpXlaRulesTest, ScalarMultiplyReductionMovesMultipliersToConvResult) {
  const std::string text = R"(HloModule m
ENTRY e {
  param0 = f32[4,8,16]{2,1,0} parameter(0)
  constant.0 = f32[] constant(0.5)
  broadcast.0 = f32[4,8,16]{2,1,0} broadcast(constant.0), dimensions={}
  multiply.0 = f32[4,8,16]{2,1,0} multiply(param0, broadcast.0)
  param1 = f32[4,8,16]{2,1,0} parameter(1)
  multiply.1 = f32[4,8,16]{2,1,0} multiply(multiply.0, param1)
  param2 = f32[4,8,8]{2,1,0} parameter(2)
  constant.1 = f32[] constant(1.109)
  broadcast.1 = f32[4,8,8]{2,1,0} broadcast(constant.1), dimensions={}
  multiply.2 = f32[4,8,8]{2,1,0} multiply(param2, broadcast.1)
  ROOT convolution = f32[16,8,1]{1,0,2} convolution(multiply.1, multiply.2), window={size=4}, dim_labels=0fb_0io->bf0
})";
  PassResult r = Simplify(text, WithScalarMultiplyReduction());
  ASSERT_TRUE(r.changed) << r.text;
  const HloInstruction* root = r.module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kMultiply) << r.text;
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kConvolution);
  EXPECT_EQ(root->operand(0)->operand(0)->operand(0)->name(), "param0") << r.text;
  EXPECT_EQ(root->operand(0)->operand(1)->name(), "param2") << r.text;
  ASSERT_EQ(root->operand(1)->opcode(), HloOpcode::kBroadcast);
  EXPECT_EQ(root->operand(1)->operand(0)->literal().GetDouble(0), static_cast<double>(0.5f * 1.109f));
  // Off by default, as in XLA.
  EXPECT_FALSE(Simplify(text).changed);
}

// ScalarMultiplyReductionMultiUser: the rhs is the smallest side, but the
// conv has two users, so the multiply above it stays.
TEST(AlgsimpXlaRulesTest, ScalarMultiplyReductionKeepsMultiplyOfSharedConv) {
  PassResult r = Simplify(R"(HloModule m
ENTRY e {
  param0 = f32[4,8,8] parameter(0)
  param1 = f32[16,8,1] parameter(1)
  convolution = f32[4,8,16] convolution(param0, param1), window={size=1}, dim_labels=0bf_oi0->0bf
  constant.1 = f32[] constant(0.5)
  broadcast.1 = f32[4,8,16] broadcast(constant.1), dimensions={}
  multiply.1 = f32[4,8,16] multiply(convolution, broadcast.1)
  param2 = f32[4,8,16] parameter(2)
  multiply.2 = f32[4,8,16] multiply(convolution, param2)
  ROOT add.1 = f32[4,8,16] add(multiply.1, multiply.2)
})",
                          WithScalarMultiplyReduction());
  EXPECT_FALSE(r.changed) << r.text;
}

// With a single user the multiply above the conv moves onto its smallest
// side, the rhs: the root becomes the conv of the scaled rhs.
TEST(AlgsimpXlaRulesTest, ScalarMultiplyReductionMovesMultiplyFromAboveConv) {
  PassResult r = Simplify(R"(HloModule m
ENTRY e {
  param0 = f32[4,8,8] parameter(0)
  param1 = f32[16,8,1] parameter(1)
  convolution = f32[4,8,16] convolution(param0, param1), window={size=1}, dim_labels=0bf_oi0->0bf
  constant.1 = f32[] constant(0.5)
  broadcast.1 = f32[4,8,16] broadcast(constant.1), dimensions={}
  ROOT multiply.1 = f32[4,8,16] multiply(convolution, broadcast.1)
})",
                          WithScalarMultiplyReduction());
  ASSERT_TRUE(r.changed) << r.text;
  const HloInstruction* root = r.module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kConvolution) << r.text;
  EXPECT_EQ(root->operand(0)->name(), "param0");
  ASSERT_EQ(root->operand(1)->opcode(), HloOpcode::kMultiply) << r.text;
  EXPECT_EQ(root->operand(1)->operand(0)->name(), "param1");
}

// Passlab's guard (XLA has none): a multiply below an instruction that also
// feeds another user stays, since bypassing it would change that user too.
TEST(AlgsimpXlaRulesTest, ScalarMultiplyReductionKeepsMultiplyUnderSharedOperand) {
  PassResult r = Simplify(R"(HloModule m
ENTRY e {
  param0 = f32[4,8,16] parameter(0)
  constant.0 = f32[] constant(0.5)
  broadcast.0 = f32[4,8,16] broadcast(constant.0), dimensions={}
  multiply.0 = f32[4,8,16] multiply(param0, broadcast.0)
  param1 = f32[4,8,16] parameter(1)
  multiply.1 = f32[4,8,16] multiply(multiply.0, param1)
  param2 = f32[4,8,8] parameter(2)
  convolution = f32[16,8,1] convolution(multiply.1, param2), window={size=4}, dim_labels=0fb_0io->bf0
  ROOT t = (f32[16,8,1], f32[4,8,16]) tuple(convolution, multiply.1)
})",
                          WithScalarMultiplyReduction());
  EXPECT_FALSE(r.changed) << r.text;
}

// CopyBitcastCopyDimSize1 (layout sensitive): the transpose is a bitcast,
// then bitcast(copy(bitcast(p))) => bitcast(copy(p)) and the outer copy,
// which moves no bytes past the size-1 dim, a bitcast. XLA gives the new
// copy p's own layout, which drops the copy's transposition; passlab lays p
// out in the old copy's order ({0,2,1}), so the values stay.
TEST(AlgsimpXlaRulesTest, CopyBitcastCopyDimSize1KeepsCopyOrder) {
  AlgebraicSimplifierOptions options = OneSweep();
  options.is_layout_sensitive = true;
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  param.8 = f32[9,1,12]{2,1,0} parameter(0)
  transpose.1 = f32[1,12,9]{1,0,2} transpose(param.8), dimensions={1,2,0}
  copy.4 = f32[1,12,9]{2,1,0} copy(transpose.1)
  bitcast.15 = f32[1,108]{1,0} bitcast(copy.4)
  ROOT copy.1 = f32[1,108]{0,1} copy(bitcast.15)
})",
                          options);
  ASSERT_TRUE(r.changed) << r.text;
  EXPECT_TRUE(Matches(r.text, {"f32[9,1,12]{0,2,1} copy(%param.8)", "f32[1,108]{1,0} bitcast(",
                               "ROOT", "f32[1,108]{0,1} bitcast("}))
      << r.text;
  // A copy under a bitcast that regroups dims (not a permutation) stays.
  PassResult kept = Simplify(R"(HloModule m
ENTRY test {
  p = f32[6,4]{1,0} parameter(0)
  b = f32[4,6]{1,0} bitcast(p)
  c = f32[4,6]{0,1} copy(b)
  ROOT r = f32[24]{0} bitcast(c)
})",
                             options);
  EXPECT_TRUE(Matches(kept.text, {"f32[4,6]{0,1} copy(%b)"})) << kept.text;
}

}  // namespace
}  // namespace passlab

namespace passlab {
namespace {

AlgebraicSimplifierOptions LayoutSensitiveOneSweep() {
  AlgebraicSimplifierOptions o = OneSweep();
  o.is_layout_sensitive = true;
  return o;
}

// xla/hlo/transforms/simplifiers/algebraic_simplifier_test.cc
// TransposeBitcastOfBroadcast: HandleBitcast turns a bitcast of a broadcast
// that is a transpose (DeduceTransposeDimensionsForBitcast) into a broadcast
// (SimplifyTransposeOfBroadcast).
TEST(AlgsimpXlaRulesTest, TransposeBitcastOfBroadcast) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  p = f32[2,4]{1,0} parameter(0)
  bcast = f32[10,2,3,4]{3,2,1,0} broadcast(p), dimensions={1,3}
  ROOT trans = f32[2,3,10,4]{3,1,0,2} bitcast(bcast)
})",
                          LayoutSensitiveOneSweep());
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT", "broadcast(%p), dimensions={0,3}", "NOT:bitcast("})) << r.text;
}

// XLA:GPU's layout-normalization algsimp on the JAX ResNet-50 step
// (test/conformance/data/xla_resnet50_step_h200.tar.xz, step 36): a bitcast
// pair that transposes a scalar broadcast there and back becomes a new
// broadcast of the scalar (each bitcast in turn), not the old broadcast.
TEST(AlgsimpXlaRulesTest, BitcastPairOfScalarBroadcastIsANewBroadcast) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  c = f32[] constant(0.9)
  b = f32[256,1,1,64]{3,2,1,0} broadcast(c), dimensions={}
  t = f32[1,1,64,256]{2,1,0,3} bitcast(b)
  u = f32[256,1,1,64]{3,2,1,0} bitcast(t)
  p = f32[256,1,1,64]{3,2,1,0} parameter(0)
  m1 = f32[256,1,1,64]{3,2,1,0} multiply(p, b)
  m2 = f32[256,1,1,64]{3,2,1,0} multiply(p, u)
  ROOT r = (f32[256,1,1,64]{3,2,1,0}, f32[256,1,1,64]{3,2,1,0}) tuple(m1, m2)
})",
                          LayoutSensitiveOneSweep());
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%b = f32[256,1,1,64]{3,2,1,0} broadcast(%c)", "multiply(%p, %b)",
                               "f32[256,1,1,64]{3,2,1,0} broadcast(%c)", "NOT:bitcast("}))
      << r.text;
}

// A bitcast of a broadcast that is no transpose (it regroups dims) stays.
TEST(AlgsimpXlaRulesTest, BitcastOfBroadcastThatIsNoTransposeStays) {
  PassResult r = Simplify(R"(HloModule m
ENTRY test {
  p = f32[4]{0} parameter(0)
  b = f32[2,4]{1,0} broadcast(p), dimensions={1}
  ROOT t = f32[8]{0} bitcast(b)
})",
                          LayoutSensitiveOneSweep());
  EXPECT_FALSE(r.changed) << r.text;
}

}  // namespace
}  // namespace passlab
