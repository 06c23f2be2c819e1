#include "passes/simplifiers/zero_sized_hlo_elimination.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(ZeroSizedHloEliminationTest, ReplacesEmptyArrays) {
  PassResult r = RunPass(std::make_unique<ZeroSizedHloElimination>(), R"(
ENTRY e {
  p = f32[0,4] parameter(0)
  n = f32[0,4] negate(p)
  ROOT a = f32[0,4] add(n, n)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"constant({  })", "NOT:negate"})) << r.text;
}

TEST(ZeroSizedHloEliminationTest, KeepsNonEmptyAndSideEffects) {
  PassResult r = RunPass(std::make_unique<ZeroSizedHloElimination>(), R"(
ENTRY e {
  p = f32[0] parameter(0)
  c = f32[0] custom-call(p), custom_call_target="x", custom_call_has_side_effect=true
  q = f32[3] parameter(1)
  ROOT t = (f32[0], f32[3]) tuple(c, q)
})");
  EXPECT_FALSE(r.changed);
}

}  // namespace
}  // namespace passlab
