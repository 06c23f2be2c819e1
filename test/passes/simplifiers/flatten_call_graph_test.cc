#include "passes/simplifiers/flatten_call_graph.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(FlattenCallGraphTest, ClonesSharedBodies) {
  PassResult r = RunPass(std::make_unique<FlattenCallGraph>(), R"(
HloModule m
f { x = f32[] parameter(0)  ROOT n = f32[] negate(x) }
ENTRY e {
  p = f32[] parameter(0)
  a = f32[] call(p), to_apply=f
  ROOT b = f32[] call(a), to_apply=f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%f.clone", "to_apply=%f.clone"})) << r.text;
}

// XLA's FlattenCallGraph gives every caller its own copy, reducers included
// (xla/hlo/transforms/simplifiers/flatten_call_graph.cc).
TEST(FlattenCallGraphTest, ClonesSharedReducersToo) {
  PassResult r = RunPass(std::make_unique<FlattenCallGraph>(), R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  a = f32[] reduce(p, z), dimensions={0}, to_apply=add
  b = f32[] reduce(p, z), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[]) tuple(a, b)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"to_apply=%add", "to_apply=%add.clone"})) << r.text;
}

// XLA: FlattenCallGraphTest.SkipCloningForCalls_NoCloningAllCallersAreKCalls
// and SkipCloningForCalls_MixedCallAndWhileCallers.
TEST(FlattenCallGraphTest, SkipCloningForCallsKeepsCallOnlyComputationsShared) {
  const std::string calls_only = R"(
HloModule m
f { x = f32[] parameter(0)  ROOT n = f32[] negate(x) }
ENTRY e {
  p = f32[] parameter(0)
  a = f32[] call(p), to_apply=f
  ROOT b = f32[] call(a), to_apply=f
})";
  EXPECT_FALSE(RunPass(std::make_unique<FlattenCallGraph>(FlattenCallGraphOptions{.skip_cloning_for_calls = true}),
                       calls_only)
                   .changed);
  PassResult r = RunPass(std::make_unique<FlattenCallGraph>(FlattenCallGraphOptions{.skip_cloning_for_calls = true}),
                         R"(
HloModule m
f { x = f32[] parameter(0)  ROOT n = f32[] negate(x) }
c { x = f32[] parameter(0)  z = f32[] constant(0)  ROOT lt = pred[] compare(x, z), direction=LT }
ENTRY e {
  p = f32[] parameter(0)
  a = f32[] call(p), to_apply=f
  ROOT w = f32[] while(a), condition=c, body=f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%f.clone", "body=%f.clone"})) << r.text;
}

}  // namespace
}  // namespace passlab
