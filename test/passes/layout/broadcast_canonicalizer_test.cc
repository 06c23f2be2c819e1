// BroadcastCanonicalizer tests, after XLA's
// xla/hlo/transforms/simplifiers/broadcast_canonicalizer_test.cc
// (ReshapeBroadcast, ReshapeBroadcast22).
#include "passes/layout/broadcast_canonicalizer.h"

#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<HloPassInterface> Pass() { return std::make_unique<BroadcastCanonicalizer>(); }

TEST(BroadcastCanonicalizerTest, SortsDimensionsWithATransposeOfTheOperand) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[5,6,7]{2,1,0} parameter(0)
  ROOT b = f32[8,7,9,5,6]{4,3,2,1,0} broadcast(p), dimensions={3,4,1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[7,5,6]{2,1,0} transpose(", "dimensions={2,0,1}", "ROOT",
                               "broadcast(", "dimensions={1,3,4}"}))
      << r.text;
}

TEST(BroadcastCanonicalizerTest, TransposeKeepsTheOperandLayout) {
  PassResult r = RunPass(Pass(), R"(
ENTRY main {
  p = f32[2,3]{0,1} parameter(0)
  ROOT b = f32[3,4,2]{2,1,0} broadcast(p), dimensions={2,0}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[3,2]{0,1} transpose(", "dimensions={1,0}", "dimensions={0,2}"})) << r.text;
}

TEST(BroadcastCanonicalizerTest, KeepsSortedAndScalarBroadcasts) {
  EXPECT_FALSE(RunPass(Pass(), R"(
ENTRY main {
  p = f32[2,3]{1,0} parameter(0)
  z = f32[] constant(1)
  a = f32[2,4,3]{2,1,0} broadcast(p), dimensions={0,2}
  b = f32[2,4,3]{2,1,0} broadcast(z), dimensions={}
  ROOT s = f32[2,4,3]{2,1,0} add(a, b)
})").changed);
}

}  // namespace
}  // namespace passlab
