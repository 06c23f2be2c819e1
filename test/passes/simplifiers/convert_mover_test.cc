#include "passes/simplifiers/convert_mover.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

TEST(ConvertMoverTest, SinksWideningConvertsBelowConcatenate) {
  PassResult r = RunPass(std::make_unique<ConvertMover>(), R"(
ENTRY e {
  a = bf16[2,3] parameter(0)
  b = bf16[4,3] parameter(1)
  ca = f32[2,3] convert(a)
  cb = f32[4,3] convert(b)
  ROOT c = f32[6,3] concatenate(ca, cb), dimensions={0}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"bf16[6,3]{1,0} concatenate(%a, %b)", "ROOT", "f32[6,3]{1,0} convert("})) << r.text;
}

TEST(ConvertMoverTest, HoistsNarrowingConvertAboveTranspose) {
  PassResult r = RunPass(std::make_unique<ConvertMover>(), R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  t = f32[3,2] transpose(a), dimensions={1,0}
  ROOT c = f16[3,2] convert(t)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f16[2,3]{1,0} convert(%a)", "ROOT", "f16[3,2]{1,0} transpose("})) << r.text;
}

TEST(ConvertMoverTest, EdgeCaseIntegerWideningThroughReshapeAndSlice) {
  PassResult r = RunPass(std::make_unique<ConvertMover>(), R"(
ENTRY e {
  a = s8[12] parameter(0)
  w = s32[12] convert(a)
  r = s32[3,4] reshape(w)
  ROOT s = s32[2,4] slice(r), slice={[1:3], [0:4]}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"s8[3,4]{1,0} reshape(%a)", "s8[2,4]{1,0} slice(", "ROOT", "s32[2,4]{1,0} convert("})) << r.text;
}

TEST(ConvertMoverTest, LeavesMixedSourcesAndSharedOps) {
  // Operands converted from different types; a narrowing convert of a
  // transpose someone else reads (moving it would duplicate the transpose);
  // a float-to-int convert (not a widening of the same kind).
  EXPECT_FALSE(RunPass(std::make_unique<ConvertMover>(), R"(
ENTRY e {
  a = bf16[2] parameter(0)
  b = f16[2] parameter(1)
  ca = f32[2] convert(a)
  cb = f32[2] convert(b)
  c = f32[4] concatenate(ca, cb), dimensions={0}
  x = f32[2,3] parameter(2)
  t = f32[3,2] transpose(x), dimensions={1,0}
  n = f16[3,2] convert(t)
  i = s32[2] parameter(3)
  fi = f32[2] convert(i)
  r = f32[2] reverse(fi), dimensions={0}
  ROOT out = (f32[4], f16[3,2], f32[3,2], f32[2]) tuple(c, n, t, r)
})").changed);
}

// XLA convert_mover_test.cc MoveDownPad: a constant operand that survives
// the round trip through the narrow type is converted down with the rest.
TEST(ConvertMoverTest, SinksWideningConvertBelowPadWithLosslessConstant) {
  PassResult r = RunPass(std::make_unique<ConvertMover>(), R"(
ENTRY e {
  p = f16[8] parameter(0)
  c = f32[8] convert(p)
  z = f32[] constant(0)
  ROOT pad = f32[10] pad(c, z), padding=1_1
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f16[] convert(%z)", "f16[10]{0} pad(%p, ", "ROOT", "f32[10]{0} convert("})) << r.text;
}

// XLA convert_mover_test.cc NoMoveDownPadBecauseConstantIsOutOfRange and
// MoveDownC64Constant: a constant that does not survive the round trip
// (1e9 in f16, a complex value with an imaginary part in f32) blocks it.
TEST(ConvertMoverTest, KeepsWideningConvertWhenConstantIsLossy) {
  EXPECT_FALSE(RunPass(std::make_unique<ConvertMover>(), R"(
ENTRY e {
  p = f16[8] parameter(0)
  c = f32[8] convert(p)
  z = f32[] constant(1e9)
  ROOT pad = f32[10] pad(c, z), padding=1_1
})").changed);
  EXPECT_FALSE(RunPass(std::make_unique<ConvertMover>(), R"(
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ca = c64[2] convert(a)
  cb = c64[2] convert(b)
  k = c64[2] constant({(1,1), (-1,-1)})
  ROOT c = c64[6] concatenate(ca, cb, k), dimensions={0}
})").changed);
}

// XLA convert_mover_test.cc MoveUpTwoTransposes and
// MoveUpPadWithOutOfRangeConstant: a narrowing convert climbs a chain of
// single-user ops; a pad's value is converted too (narrowing is exact
// whatever the value: the op only moves elements).
TEST(ConvertMoverTest, HoistsNarrowingConvertThroughChainAndPad) {
  PassResult r = RunPass(std::make_unique<ConvertMover>(), R"(
ENTRY e {
  p = f32[3,4] parameter(0)
  t1 = f32[4,3] transpose(p), dimensions={1,0}
  t2 = f32[3,4] transpose(t1), dimensions={1,0}
  ROOT c = f16[3,4] convert(t2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f16[3,4]{1,0} convert(%p)", "f16[4,3]{1,0} transpose(", "ROOT",
                               "f16[3,4]{1,0} transpose("}))
      << r.text;
  PassResult pad = RunPass(std::make_unique<ConvertMover>(), R"(
ENTRY e {
  p = s32[8] parameter(0)
  k = s32[] constant(1000)
  pad = s32[10] pad(p, k), padding=1_1
  ROOT c = s8[10] convert(pad)
})");
  EXPECT_TRUE(pad.changed);
  EXPECT_TRUE(Matches(pad.text, {"s8[8]{0} convert(%p)", "s8[] convert(%k)", "ROOT", "s8[10]{0} pad("})) << pad.text;
}

TEST(ConvertMoverTest, CorpusConvertsComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" convert(", [] { return std::make_unique<ConvertMover>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(stats.changed, 0);
}

}  // namespace
}  // namespace passlab
