#include "passes/simplifiers/hlo_cse.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(HloCseTest, MergesIdenticalInstructionsAndConstants) {
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  b1 = f32[4] broadcast(c1), dimensions={}
  b2 = f32[4] broadcast(c2), dimensions={}
  m1 = f32[4] multiply(p, b1)
  m2 = f32[4] multiply(p, b2)
  ROOT a = f32[4] add(m1, m2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%c1 = ", "%b1 = ", "%m1 = ", "add(%m1, %m1)", "NOT:%c2", "NOT:%m2"}));
}

TEST(HloCseTest, KeepsDifferentAttributesAndRandomness) {
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
ENTRY e {
  p = f32[4,4] parameter(0)
  t1 = f32[4,4] transpose(p), dimensions={1,0}
  t2 = f32[4,4] transpose(p), dimensions={0,1}
  z = f32[] constant(0)
  o = f32[] constant(1)
  r1 = f32[4,4] rng(z, o), distribution=rng_uniform
  r2 = f32[4,4] rng(z, o), distribution=rng_uniform
  a = f32[4,4] add(t1, t2)
  b = f32[4,4] add(r1, r2)
  ROOT s = f32[4,4] add(a, b)
})");
  EXPECT_FALSE(r.changed);
}

TEST(HloCseTest, EdgeCaseLayoutsMatter) {
  // Same values, different layouts: not interchangeable.
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c1 = f32[2,3]{1,0} copy(p)
  c2 = f32[2,3]{0,1} copy(p)
  ROOT t = (f32[2,3]{1,0}, f32[2,3]{0,1}) tuple(c1, c2)
})");
  EXPECT_FALSE(r.changed);
}

// XLA: HloCseTest.WhileLoopsIdenticalConditionsAndBodiesSameInput: called
// computations count as equal when they are structurally identical.
TEST(HloCseTest, MergesLoopsWithIdenticalComputations) {
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
HloModule m
body { p = (f32[], f32[]) parameter(0)  a = f32[] get-tuple-element(p), index=0
       b = f32[] get-tuple-element(p), index=1  s = f32[] add(a, b)  ROOT t = (f32[], f32[]) tuple(a, s) }
c0 { p = (f32[], f32[]) parameter(0)  ROOT k = pred[] constant(false) }
c1 { p = (f32[], f32[]) parameter(0)  ROOT k = pred[] constant(false) }
ENTRY e { x = f32[] constant(1)  y = f32[] constant(2)  t = (f32[], f32[]) tuple(x, y)
  w0 = (f32[], f32[]) while(t), condition=c0, body=body
  w1 = (f32[], f32[]) while(t), condition=c1, body=body
  ROOT r = ((f32[], f32[]), (f32[], f32[])) tuple(w0, w1) })");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"tuple(%w0, %w0)", "NOT:%w1 ="})) << r.text;
}

// XLA: CseKey and IdenticalIgnoringCommutativeOperandOrder: add(a, b) and
// add(b, a) are one value; subtract is not commutative.
TEST(HloCseTest, MergesCommutedOperands) {
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] add(a, b)
  y = f32[4] add(b, a)
  s = f32[4] subtract(a, b)
  d = f32[4] subtract(b, a)
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(x, y, s, d)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"tuple(%x, %x, %s, %d)"})) << r.text;
}

// XLA: HloCseTest.DoNotCombineOpsWithDifferentSdyShardingFrontendAttrs,
// CombineOpsWithSameSdyShardingFrontendAttrs and Domain.
TEST(HloCseTest, RespectsSdyShardingAttributesAndMergesDomains) {
  const std::string sdy = R"(
ENTRY e {
  c = s32[1] parameter(0)
  a = s32[1] custom-call(c), custom_call_target="Sharding", frontend_attributes={xla.sdy.sharding="A"}
  b = s32[1] custom-call(c), custom_call_target="Sharding", frontend_attributes={xla.sdy.sharding="SAME"}
  ROOT t = (s32[1], s32[1]) tuple(a, b)
})";
  EXPECT_FALSE(RunPass(std::make_unique<HloCSE>(), sdy).changed);
  std::string same = sdy;
  same.replace(same.find("\"A\""), 3, "\"SAME\"");
  EXPECT_TRUE(RunPass(std::make_unique<HloCSE>(), same).changed);
  PassResult r = RunPass(std::make_unique<HloCSE>(HloCseOptions{.is_layout_sensitive = false}), R"(
ENTRY e {
  p = f32[] parameter(0), sharding={maximal device=0}
  d0 = f32[] domain(p), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
  d1 = f32[] domain(p), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
  d2 = f32[] domain(p), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=2}}
  ROOT t = (f32[], f32[], f32[]) tuple(d0, d1, d2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"tuple(%d0, %d0, %d2)"})) << r.text;
}

// XLA: HloCseTest.IdenticalInstructionsDifferentLayoutsInsensitive.
TEST(HloCseTest, LayoutInsensitiveMergesAcrossLayouts) {
  PassResult r = RunPass(std::make_unique<HloCSE>(HloCseOptions{.is_layout_sensitive = false}), R"(
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c1 = f32[2,3]{1,0} negate(p)
  c2 = f32[2,3]{0,1} negate(p)
  ROOT t = (f32[2,3]{1,0}, f32[2,3]{0,1}) tuple(c1, c2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"tuple(%c1, %c1)"})) << r.text;
}

// XLA: HloCseTest.Iota: iotas along different dimensions are different
// operands (found by the GPU pipeline's sort expansion).
TEST(HloCseTest, KeepsIotasOfDifferentDimensionsApart) {
  PassResult r = RunPass(std::make_unique<HloCSE>(), R"(
ENTRY e {
  i0 = s32[2,3] iota(), iota_dimension=0
  i1 = s32[2,3] iota(), iota_dimension=1
  i2 = s32[2,3] iota(), iota_dimension=1
  c = s32[2,3] parameter(0)
  a = s32[2,3] multiply(i0, c)
  b = s32[2,3] multiply(i1, c)
  d = s32[2,3] multiply(i2, c)
  ROOT t = (s32[2,3], s32[2,3], s32[2,3]) tuple(a, b, d)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"tuple(%a, %b, %b)"})) << r.text;
}

}  // namespace
}  // namespace passlab
