#include "passes/simplifiers/algebraic_simplifier.h"

#include "core/verify/hlo_verifier.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

PassResult Simplify(const std::string& body, AlgebraicSimplifierOptions options = {}) {
  PassResult r = RunPass(std::make_unique<AlgebraicSimplifier>(options), "HloModule m\n" + body);
  if (r.module) {
    absl::Status s = VerifyModule(*r.module);
    EXPECT_TRUE(s.ok()) << s.message() << "\n" << r.text;
  }
  return r;
}

TEST(AlgebraicSimplifierTest, HasAtLeastFortyNamedRules) {
  EXPECT_GE(AlgebraicSimplifier::RuleNames().size(), 40u);
}

TEST(AlgebraicSimplifierTest, AddZeroFoldsAndConstantsMoveRight) {
  PassResult r = Simplify(R"(
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT a = f32[4] add(zb, p)
})");
  EXPECT_TRUE(r.changed);
  // One run moves the constant right (0+A => A+0); the fixed point then folds.
  EXPECT_TRUE(Matches(r.text, {"ROOT %add = f32[4]{0} add(%p, %zb)"})) << r.text;
  PassResult again = RunPass(std::make_unique<AlgebraicSimplifier>(), r.text);
  EXPECT_TRUE(again.changed);
  EXPECT_TRUE(Matches(again.text, {"ROOT %p = f32[4]{0} parameter(0)"})) << again.text;
}

TEST(AlgebraicSimplifierTest, ReassociatesIntegerConstants) {
  PassResult r = Simplify(R"(
ENTRY e {
  p = s32[4] parameter(0)
  c1 = s32[4] constant({1, 1, 1, 1})
  c2 = s32[4] constant({2, 2, 2, 2})
  a = s32[4] add(p, c1)
  ROOT b = s32[4] add(a, c2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"add(%c1, %c2)", "ROOT %add.1 = s32[4]{0} add(%p, %add)"})) << r.text;
}

TEST(AlgebraicSimplifierTest, DoesNotReassociateFloatsWithoutFastMath) {
  PassResult r = Simplify(R"(
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[4] constant({1, 1, 1, 1})
  c2 = f32[4] constant({2, 2, 2, 2})
  a = f32[4] add(p, c1)
  ROOT b = f32[4] add(a, c2)
})");
  EXPECT_FALSE(r.changed);
}

TEST(AlgebraicSimplifierTest, MultiplyByZeroOnlyForIntegersOrFastMath) {
  const char* f = R"(
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[4] constant({0, 0, 0, 0})
  ROOT m = f32[4] multiply(p, z)
})";
  EXPECT_FALSE(Simplify(f).changed);  // NaN * 0 is NaN
  AlgebraicSimplifierOptions fast;
  fast.enable_fast_math = true;
  EXPECT_TRUE(Matches(Simplify(f, fast).text, {"ROOT %z = "}));
}

TEST(AlgebraicSimplifierTest, AbsOfNonNegativeIsIdentity) {
  PassResult r = Simplify(R"(
ENTRY e {
  p = f32[4] parameter(0)
  e = f32[4] exponential(p)
  ROOT a = f32[4] abs(e)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %e = f32[4]{0} exponential(%p)"}));
  PassResult keep = Simplify("ENTRY e {\n p = f32[4] parameter(0)\n ROOT a = f32[4] abs(p)\n}");
  EXPECT_FALSE(keep.changed);
}

TEST(AlgebraicSimplifierTest, ShapeNoOps) {
  PassResult r = Simplify(R"(
ENTRY e {
  p = f32[2,3] parameter(0)
  r = f32[2,3] reshape(p)
  t = f32[2,3] transpose(r), dimensions={0,1}
  s = f32[2,3] slice(t), slice={[0:2], [0:3]}
  c = f32[2,3] concatenate(s), dimensions={0}
  z = f32[] constant(0)
  pd = f32[2,3] pad(c, z), padding=0_0x0_0
  ROOT rv = f32[2,3] reverse(pd), dimensions={}
})");
  EXPECT_TRUE(r.changed);
  // One visit per instruction: each was replaced by its operand in turn.
  EXPECT_TRUE(Matches(r.text, {"ROOT %p = f32[2,3]{1,0} parameter(0)"})) << r.text;
}

TEST(AlgebraicSimplifierTest, ComposesTransposesAndSlices) {
  PassResult r = Simplify(R"(
ENTRY e {
  p = f32[2,3,4] parameter(0)
  t1 = f32[3,4,2] transpose(p), dimensions={1,2,0}
  t2 = f32[4,2,3] transpose(t1), dimensions={1,2,0}
  s1 = f32[4,2,2] slice(t2), slice={[0:4], [0:2], [1:3]}
  ROOT s2 = f32[2,2,1] slice(s1), slice={[1:4:2], [0:2], [1:2]}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"transpose(%p), dimensions={2,0,1}", "slice(%transpose), slice={[1:4:2], [0:2], [2:3]}"}))
      << r.text;
}

TEST(AlgebraicSimplifierTest, SelectWithConstantPredicate) {
  PassResult r = Simplify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  t = pred[] constant(true)
  tb = pred[4] broadcast(t), dimensions={}
  ROOT s = f32[4] select(tb, a, b)
})");
  EXPECT_TRUE(Matches(r.text, {"ROOT %a = "})) << r.text;
}

TEST(AlgebraicSimplifierTest, ReduceOverNoDimsOnlyWithTheIdentity) {
  const char* text = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(INIT)
  ROOT r = f32[4] reduce(p, z), dimensions={}, to_apply=add
})";
  std::string with_zero = std::string(text).replace(std::string(text).find("INIT"), 4, "0");
  std::string with_one = std::string(text).replace(std::string(text).find("INIT"), 4, "1");
  EXPECT_TRUE(Matches(Simplify(with_zero).text, {"ROOT %p = "}));
  EXPECT_FALSE(Simplify(with_one).changed);  // p + 1, not p
}

TEST(AlgebraicSimplifierTest, DotOverSizeOneContractionBecomesMultiply) {
  PassResult r = Simplify(R"(
ENTRY e {
  a = f32[3,1] parameter(0)
  b = f32[1,5] parameter(1)
  ROOT d = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"broadcast(", "broadcast(", "ROOT %multiply = f32[3,5]{1,0} multiply(", "NOT:dot("}))
      << r.text;
}

TEST(AlgebraicSimplifierTest, EdgeCasesMultipleUsersAndTuples) {
  // The folded instruction has several users; every one is rewired.
  PassResult r = Simplify(R"(
ENTRY e {
  p = s32[4] parameter(0)
  one = s32[] constant(1)
  ob = s32[4] broadcast(one), dimensions={}
  m = s32[4] multiply(p, ob)
  n = s32[4] negate(m)
  ROOT t = (s32[4], s32[4]) tuple(m, n)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"negate(%p)", "tuple(%p, %n)"})) << r.text;
}

}  // namespace
}  // namespace passlab
