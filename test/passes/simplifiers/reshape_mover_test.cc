#include "passes/simplifiers/reshape_mover.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(ReshapeMoverTest, SinksEquivalentReshapesBelowAdd) {
  PassResult r = RunPass(std::make_unique<ReshapeMover>(), R"(
ENTRY e {
  a = f32[2,6] parameter(0)
  b = f32[2,6] parameter(1)
  ra = f32[3,4] reshape(a)
  rb = f32[3,4] reshape(b)
  ROOT s = f32[3,4] add(ra, rb)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,6]{1,0} add(%a, %b)", "ROOT", "f32[3,4]{1,0} reshape("})) << r.text;
}

TEST(ReshapeMoverTest, SinksTransposeAndRearrangesConstantAndScalarBroadcast) {
  PassResult r = RunPass(std::make_unique<ReshapeMover>(), R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  t = f32[3,2] transpose(a), dimensions={1,0}
  c = f32[3,2] constant({{1,2},{3,4},{5,6}})
  m = f32[3,2] multiply(t, c)
  z = f32[] constant(0)
  zb = f32[3,2] broadcast(z), dimensions={}
  ROOT x = f32[3,2] maximum(m, zb)
})");
  EXPECT_TRUE(r.changed);
  // Both the multiply and the maximum end up in the [2,3] space.
  EXPECT_TRUE(Matches(r.text, {"f32[2,3]{1,0} transpose(%c)", "f32[2,3]{1,0} multiply(",
                               "f32[2,3]{1,0} maximum(", "ROOT", "transpose("}))
      << r.text;
}

TEST(ReshapeMoverTest, KeepsMixedOrDifferentRearranges) {
  // A parameter operand cannot follow the reshape; two transposes with
  // different permutations are not equivalent.
  EXPECT_FALSE(RunPass(std::make_unique<ReshapeMover>(), R"(
ENTRY e {
  a = f32[2,6] parameter(0)
  b = f32[3,4] parameter(1)
  ra = f32[3,4] reshape(a)
  ROOT s = f32[3,4] add(ra, b)
})").changed);
  EXPECT_FALSE(RunPass(std::make_unique<ReshapeMover>(), R"(
ENTRY e {
  a = f32[2,2,2] parameter(0)
  b = f32[2,2,2] parameter(1)
  ta = f32[2,2,2] transpose(a), dimensions={1,0,2}
  tb = f32[2,2,2] transpose(b), dimensions={0,2,1}
  ROOT s = f32[2,2,2] add(ta, tb)
})").changed);
}

TEST(ReshapeMoverTest, EdgeCaseCompareChangesElementTypeAndReshapeOfConstantIsTrivial) {
  PassResult r = RunPass(std::make_unique<ReshapeMover>(), R"(
ENTRY e {
  a = f32[4] parameter(0)
  ra = f32[2,2] reshape(a)
  k = f32[4] constant({1,2,3,4})
  rk = f32[2,2] reshape(k)
  lt = pred[2,2] compare(ra, rk), direction=LT
  ROOT n = f32[2,2] negate(rk)
})");
  EXPECT_TRUE(r.changed);
  // The compare moves (pred result); negate(reshape(constant)) does not: a
  // rearranged constant is not worth moving for.
  EXPECT_TRUE(Matches(r.text, {"pred[4]{0} compare(%a, %k)"})) << r.text;
  EXPECT_TRUE(Matches(r.text, {"ROOT %n = f32[2,2]{1,0} negate(%rk)"})) << r.text;
}

}  // namespace
}  // namespace passlab
