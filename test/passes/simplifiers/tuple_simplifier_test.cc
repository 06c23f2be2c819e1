#include "passes/simplifiers/tuple_simplifier.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(TupleSimplifierTest, FoldsGteOfTupleAndTupleOfGtes) {
  PassResult r = RunPass(std::make_unique<TupleSimplifier>(), R"(
ENTRY e {
  p = (f32[2], s32[]) parameter(0)
  a = f32[2] parameter(1)
  t = (f32[2], f32[2]) tuple(a, a)
  g = f32[2] get-tuple-element(t), index=1
  g0 = f32[2] get-tuple-element(p), index=0
  g1 = s32[] get-tuple-element(p), index=1
  re = (f32[2], s32[]) tuple(g0, g1)
  ROOT out = ((f32[2], s32[]), f32[2]) tuple(re, g)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %out = ((f32[2]{0}, s32[]), f32[2]{0}) tuple(%p, %a)"}));
}

TEST(TupleSimplifierTest, KeepsPartialOrReorderedTuples) {
  PassResult r = RunPass(std::make_unique<TupleSimplifier>(), R"(
ENTRY e {
  p = (f32[2], f32[2]) parameter(0)
  g0 = f32[2] get-tuple-element(p), index=0
  g1 = f32[2] get-tuple-element(p), index=1
  ROOT swapped = (f32[2], f32[2]) tuple(g1, g0)
})");
  EXPECT_FALSE(r.changed);
}

TEST(TupleSimplifierTest, EdgeCaseEmptyTupleAndNesting) {
  PassResult r = RunPass(std::make_unique<TupleSimplifier>(), R"(
ENTRY e {
  e0 = () tuple()
  a = f32[] parameter(0)
  inner = (f32[]) tuple(a)
  outer = ((f32[]), ()) tuple(inner, e0)
  g = (f32[]) get-tuple-element(outer), index=0
  ROOT x = f32[] get-tuple-element(g), index=0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %a = f32[] parameter(0)"}));
}

}  // namespace
}  // namespace passlab
