#include "passes/simplifiers/sort_simplifier.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

const char* kSortModule = R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  e = f32[] parameter(4)
  f = f32[] parameter(5)
  ROOT l = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[5] parameter(0)
  v = s32[5] iota(), iota_dimension=0
  w = f32[5] parameter(1)
  s = (f32[5], s32[5], f32[5]) sort(k, v, w), dimensions={0}, to_apply=lt
  ROOT g = s32[5] get-tuple-element(s), index=USED
})";

TEST(SortSimplifierTest, DropsUnusedOperands) {
  std::string text = kSortModule;
  text.replace(text.find("USED"), 4, "1");
  PassResult r = RunPass(std::make_unique<SortSimplifier>(), text);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"(f32[5]{0}, s32[5]{0}) sort(%k, %v)", "NOT:sort(%k, %v, %w)"})) << r.text;
}

TEST(SortSimplifierTest, KeepsOperandsTheComparatorReads) {
  // Only the key (read by the comparator) is used: nothing to drop but w... and
  // v, so the sort narrows to the key alone, returning an array.
  std::string text = kSortModule;
  text.replace(text.find("s32[5] get-tuple-element(s), index=USED"), 39, "f32[5] get-tuple-element(s), index=0");
  PassResult r = RunPass(std::make_unique<SortSimplifier>(), text);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %sort = f32[5]{0} sort(%k)"})) << r.text;
}

TEST(SortSimplifierTest, EdgeCaseAllOutputsUsed) {
  PassResult r = RunPass(std::make_unique<SortSimplifier>(), R"(
HloModule m
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT l = pred[] compare(a, b), direction=LT }
ENTRY e {
  k = f32[5] parameter(0)
  ROOT s = f32[5] sort(k), dimensions={0}, to_apply=lt
})");
  EXPECT_FALSE(r.changed);
}

}  // namespace
}  // namespace passlab
