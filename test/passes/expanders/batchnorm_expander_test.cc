#include "passes/expanders/batchnorm_expander.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(BatchNormExpanderTest, ExpandsTrainingInferenceAndGrad) {
  // The evaluator check in RunPass compares with the batch-norm ops' values.
  PassResult r = RunPass(std::make_unique<BatchNormExpander>(), R"(
ENTRY e {
  x = f32[2,3,4] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  t = (f32[2,3,4], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
  y = f32[2,3,4] get-tuple-element(t), index=0
  m = f32[3] get-tuple-element(t), index=1
  v = f32[3] get-tuple-element(t), index=2
  i = f32[2,3,4] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=1
  g = (f32[2,3,4], f32[3], f32[3]) batch-norm-grad(x, s, m, v, y), epsilon=0.001, feature_index=1
  ROOT out = ((f32[2,3,4], f32[3], f32[3]), f32[2,3,4], (f32[2,3,4], f32[3], f32[3])) tuple(t, i, g)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"reduce(", "rsqrt(", "NOT:batch-norm"})) << r.text;
}

TEST(BatchNormExpanderTest, RespectsOptions) {
  BatchNormExpanderOptions options;
  options.rewrite_inference_op = false;
  PassResult r = RunPass(std::make_unique<BatchNormExpander>(options), R"(
ENTRY e {
  x = f32[2,3] parameter(0)
  s = f32[3] parameter(1)
  ROOT i = f32[2,3] batch-norm-inference(x, s, s, s, s), epsilon=0.5, feature_index=1
})");
  EXPECT_FALSE(r.changed);
}

// XLA's batchnorm_expander_test.cc, BatchNormGradSharding and
// BatchNormInferenceSharding: with a sharding on the op, every instruction
// of the expansion gets one (activation-shaped: the activation's; others:
// the op's one device), so all but the parameters name device 1.
TEST(BatchNormExpanderTest, ShardsTheExpansion) {
  for (const char* hlo : {R"(
ENTRY entry {
  p0 = f32[8,4] parameter(0)
  p1 = f32[4] parameter(1)
  p2 = f32[4] parameter(2)
  p3 = f32[4] parameter(3)
  p4 = f32[8,4] parameter(4)
  ROOT g = (f32[8,4], f32[4], f32[4]) batch-norm-grad(p0, p1, p2, p3, p4), epsilon=0.001, feature_index=1,
      sharding={{maximal device=1},{maximal device=1},{maximal device=1}}
})",
                          R"(
ENTRY entry {
  p0 = f32[8,4] parameter(0)
  p1 = f32[4] parameter(1)
  p2 = f32[4] parameter(2)
  p3 = f32[4] parameter(3)
  p4 = f32[4] parameter(4)
  ROOT i = f32[8,4] batch-norm-inference(p0, p1, p2, p3, p4), epsilon=0.001, feature_index=1,
      sharding={maximal device=1}
})"}) {
    PassResult r = RunPass(std::make_unique<BatchNormExpander>(), hlo);
    ASSERT_TRUE(r.changed);
    for (const HloInstruction* inst : r.module->entry_computation()->instructions()) {
      if (inst->opcode() == HloOpcode::kParameter) continue;
      ASSERT_TRUE(inst->has_sharding()) << inst->name() << "\n" << r.text;
      const HloSharding& sharding = inst->sharding();
      if (sharding.kind == HloSharding::Kind::kTuple) {
        for (const HloSharding& element : sharding.tuple_elements) EXPECT_EQ(element.device, 1) << inst->name();
      } else {
        EXPECT_EQ(sharding.kind, HloSharding::Kind::kMaximal) << inst->name();
        EXPECT_EQ(sharding.device, 1) << inst->name();
      }
    }
  }
}

TEST(BatchNormExpanderTest, EdgeCaseFeatureIndexZeroAndSingleElement) {
  PassResult r = RunPass(std::make_unique<BatchNormExpander>(), R"(
ENTRY e {
  x = f32[3,1] parameter(0)
  s = f32[3] parameter(1)
  ROOT t = (f32[3,1], f32[3], f32[3]) batch-norm-training(x, s, s), epsilon=0.001, feature_index=0
})");
  EXPECT_TRUE(r.changed);
}

}  // namespace
}  // namespace passlab
