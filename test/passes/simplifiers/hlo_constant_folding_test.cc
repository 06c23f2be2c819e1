#include "passes/simplifiers/hlo_constant_folding.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(ConstantFoldingTest, FoldsConstantExpressions) {
  PassResult r = RunPass(std::make_unique<HloConstantFolding>(), R"(
ENTRY e {
  p = s32[2] parameter(0)
  a = s32[2] constant({1, 2})
  b = s32[2] constant({10, 20})
  s = s32[2] add(a, b)
  n = s32[2] negate(s)
  ROOT m = s32[2] multiply(p, n)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"constant({-11, -22})", "ROOT %m = s32[2]{0} multiply(%p, %constant", "NOT:add("}))
      << r.text;
}

TEST(ConstantFoldingTest, LeavesParametersAndBroadcastsAlone) {
  PassResult r = RunPass(std::make_unique<HloConstantFolding>(), R"(
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(2)
  b = f32[1000,1000] broadcast(c), dimensions={}
  n = f32[4] negate(p)
  ROOT t = (f32[1000,1000], f32[4]) tuple(b, n)
})");
  EXPECT_FALSE(r.changed);
}

TEST(ConstantFoldingTest, EdgeCaseTuplesAndIntegerEdges) {
  PassResult r = RunPass(std::make_unique<HloConstantFolding>(), R"(
ENTRY e {
  a = s32[] constant(-2147483648)
  b = s32[] constant(-1)
  d = s32[] divide(a, b)
  z = s32[] constant(0)
  q = s32[] divide(b, z)
  ROOT t = (s32[], s32[]) tuple(d, q)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"constant(-2147483648)", "constant(-1)", "tuple("})) << r.text;
}

}  // namespace
}  // namespace passlab
