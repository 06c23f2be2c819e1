#include "passes/expanders/comparison_expander.h"
#include "passes/expanders/logistic_expander.h"
#include "passes/expanders/operand_upcaster.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(LogisticExpanderTest, Expands) {
  PassResult r = RunPass(std::make_unique<LogisticExpander>(), "ENTRY e {\n p = f32[4] parameter(0)\n ROOT l = f32[4] logistic(p)\n}");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"negate(%p)", "exponential(", "ROOT %divide", "NOT:logistic("})) << r.text;
}

TEST(LogisticExpanderTest, NothingToExpand) {
  EXPECT_FALSE(RunPass(std::make_unique<LogisticExpander>(), "ENTRY e {\n p = f32[4] parameter(0)\n ROOT t = f32[4] tanh(p)\n}").changed);
}

TEST(LogisticExpanderTest, EdgeCaseBf16AndScalar) {
  PassResult r = RunPass(std::make_unique<LogisticExpander>(), "ENTRY e {\n p = bf16[] parameter(0)\n ROOT l = bf16[] logistic(p)\n}");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"bf16[] constant(1)", "ROOT %divide = bf16[]"})) << r.text;
}

TEST(ComparisonExpanderTest, TotalOrderBecomesIntegerCompare) {
  PassResult r = RunPass(std::make_unique<ComparisonExpander>(), R"(
ENTRY e {
  a = f32[6] constant({nan, -nan, -0, 0, -inf, 1})
  b = f32[6] constant({1, -inf, 0, -0, -nan, 1})
  ROOT c = pred[6] compare(a, b), direction=LT, type=TOTALORDER
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"bitcast-convert(", "type=SIGNED", "NOT:TOTALORDER"})) << r.text;
  // The evaluator check in RunPass compares against the TOTALORDER semantics.
}

TEST(ComparisonExpanderTest, LeavesDefaultComparisons) {
  EXPECT_FALSE(RunPass(std::make_unique<ComparisonExpander>(),
                       "ENTRY e {\n a = f32[2] parameter(0)\n ROOT c = pred[2] compare(a, a), direction=LT\n}").changed);
}

TEST(ComparisonExpanderTest, EdgeCaseF64AndBf16) {
  PassResult r = RunPass(std::make_unique<ComparisonExpander>(), R"(
ENTRY e {
  a = f64[2] parameter(0)
  b = bf16[2] parameter(1)
  c1 = pred[2] compare(a, a), direction=GE, type=TOTALORDER
  c2 = pred[2] compare(b, b), direction=EQ, type=TOTALORDER
  ROOT t = (pred[2], pred[2]) tuple(c1, c2)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"s64[2]{0} bitcast-convert(", "s16[2]{0} bitcast-convert("})) << r.text;
}

TEST(OperandUpcasterTest, ConvertsNarrowOperands) {
  PassResult r = RunPass(std::make_unique<OperandUpcaster>(), R"(
ENTRY e {
  a = bf16[2,3] parameter(0)
  b = bf16[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,3]{1,0} convert(%a)", "f32[3,4]{1,0} convert(%b)", "f32[2,4]{1,0} dot("})) << r.text;
}

TEST(OperandUpcasterTest, LeavesSameTypeDots) {
  EXPECT_FALSE(RunPass(std::make_unique<OperandUpcaster>(), R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})").changed);
}

TEST(ResultCasterTest, ComputesWideAndConverts) {
  PassResult r = RunPass(std::make_unique<ResultCaster>(), R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = bf16[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,4]{1,0} dot(%a, %b)", "ROOT %convert = bf16[2,4]{1,0} convert("})) << r.text;
}

}  // namespace
}  // namespace passlab

#include "passes/expanders/batchnorm_expander.h"

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

#include "passes/expanders/dot_decomposer.h"

namespace passlab {
namespace {

TEST(DotDecomposerTest, CanonicalizesBatchFreeAndContractingDims) {
  // lhs [k0, b, m0, m1] x rhs [n, b, k0]: batch moved first, two free dims
  // flattened, the result reshaped back.
  PassResult r = RunPass(std::make_unique<DotDecomposer>(), R"(
ENTRY e {
  a = f32[3,2,4,5] parameter(0)
  b = f32[6,2,3] parameter(1)
  ROOT d = f32[2,4,5,6] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_batch_dims={1}, rhs_contracting_dims={2}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,20,3]{2,1,0} reshape(", "f32[2,3,6]", "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}",
                               "ROOT %reshape"})) << r.text;
}

TEST(DotDecomposerTest, LeavesCanonicalDots) {
  EXPECT_FALSE(RunPass(std::make_unique<DotDecomposer>(), R"(
ENTRY e {
  a = f32[2,4,3] parameter(0)
  b = f32[2,3,5] parameter(1)
  ROOT d = f32[2,4,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})").changed);
}

TEST(DotDecomposerTest, EdgeCaseMatrixVectorAndTransposedMatrix) {
  PassResult r = RunPass(std::make_unique<DotDecomposer>(), R"(
ENTRY e {
  a = f32[3,4] parameter(0)
  v = f32[3] parameter(1)
  mv = f32[4] dot(a, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  b = f32[4,4] parameter(2)
  mm = f32[4,4] dot(b, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  ROOT t = (f32[4], f32[4,4]) tuple(mv, mm)
})");
  EXPECT_TRUE(r.changed);
}

}  // namespace
}  // namespace passlab
