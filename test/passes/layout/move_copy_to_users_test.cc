// MoveCopyToUsers tests, after XLA's
// xla/backends/gpu/transforms/move_copy_to_users_test.cc (Pad, Unary,
// Reverse, Convert, Slice, DynamicSlice, ReduceWindow, Reduce, Binary,
// BinaryDifferentLayoutNoChange, Concat, ConcatDifferentLayoutNoChange).
#include "passes/layout/move_copy_to_users.h"

#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<HloPassInterface> Pass() { return std::make_unique<MoveCopyToUsers>(); }

TEST(MoveCopyToUsersTest, SinksCopyBelowUnaryChainAndPad) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  input = f32[1,17,9,9]{3,2,1,0} parameter(0)
  copy = f32[1,17,9,9]{1,3,2,0} copy(input)
  s = f32[1,17,9,9]{1,3,2,0} sqrt(copy)
  n = f32[1,17,9,9]{1,3,2,0} negate(s)
  z = f32[] constant(0)
  ROOT p = f32[1,19,9,9]{1,3,2,0} pad(n, z), padding=0_0x1_1x0_0x0_0
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[1,17,9,9]{3,2,1,0} sqrt(", "f32[1,17,9,9]{3,2,1,0} negate(",
                               "f32[1,19,9,9]{3,2,1,0} pad(", "ROOT", "f32[1,19,9,9]{1,3,2,0} copy("}))
      << r.text;
}

TEST(MoveCopyToUsersTest, BinaryOfTwoCopiesComputesBeforeTheCopy) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  a = f32[4,5]{1,0} parameter(0)
  b = f32[4,5]{1,0} parameter(1)
  ca = f32[4,5]{0,1} copy(a)
  cb = f32[4,5]{0,1} copy(b)
  ROOT c = pred[4,5]{0,1} compare(ca, cb), direction=LT
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"pred[4,5]{1,0} compare(", "ROOT", "pred[4,5]{0,1} copy("})) << r.text;
}

TEST(MoveCopyToUsersTest, KeepsBinaryOfCopiesFromDifferentLayouts) {
  EXPECT_FALSE(RunPass(Pass(), R"(
ENTRY main {
  a = f32[4,5]{1,0} parameter(0)
  b = f32[4,5]{0,1} parameter(1)
  ca = f32[4,5]{0,1} copy(a)
  cb = f32[4,5]{0,1} copy(b)
  ROOT c = f32[4,5]{0,1} add(ca, cb)
})").changed);
}

TEST(MoveCopyToUsersTest, ReduceReadsTheCopiedValue) {
  PassResult r = RunPass(Pass(), std::string(kAddF32Reducer) + R"(
ENTRY main {
  x = f32[8,6,3]{2,1,0} parameter(0)
  c = f32[8,6,3]{0,1,2} copy(x)
  z = f32[] constant(0)
  ROOT r = f32[6,3]{0,1} reduce(c, z), dimensions={0}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT", "reduce(%x", "NOT: copy("})) << r.text;
}

TEST(MoveCopyToUsersTest, ConcatenateOfCopiesFromOneLayout) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[4,3]{1,0} parameter(1)
  ca = f32[2,3]{0,1} copy(a)
  cb = f32[4,3]{0,1} copy(b)
  ROOT c = f32[6,3]{0,1} concatenate(ca, cb), dimensions={0}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[6,3]{1,0} concatenate(", "ROOT", "f32[6,3]{0,1} copy("})) << r.text;
}

TEST(MoveCopyToUsersTest, KeepsConvertFeedingOnlyAConvolution) {
  EXPECT_FALSE(RunPass(Pass(), R"(
ENTRY main {
  x = f16[1,4,4,2]{3,2,1,0} parameter(0)
  c = f16[1,4,4,2]{1,2,3,0} copy(x)
  f = f32[1,4,4,2]{1,2,3,0} convert(c)
  w = f32[1,1,2,3]{3,2,1,0} parameter(1)
  ROOT conv = f32[1,4,4,3]{3,2,1,0} convolution(f, w), window={size=1x1}, dim_labels=b01f_01io->b01f
})").changed);
}

}  // namespace
}  // namespace passlab
