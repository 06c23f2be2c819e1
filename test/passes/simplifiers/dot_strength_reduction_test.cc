// Tests follow xla/backends/gpu/transforms/dot_strength_reduction_test.cc
// (test names given), plus passlab's own value-checked cases.
#include "passes/simplifiers/dot_strength_reduction.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<DotStrengthReduction> Pass(int major = 8) {
  return std::make_unique<DotStrengthReduction>(DotStrengthReductionOptions{.compute_capability_major = major});
}

// XLA: VectorVectorDotShouldBeStrengthReduced.
TEST(DotStrengthReductionTest, ReducesVectorVectorDot) {
  PassResult r = RunPass(Pass(), R"(
ENTRY e {
  p0 = f32[32,50] parameter(0)
  p1 = f32[32,50] parameter(1)
  ROOT dot = f32[32] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[32,50]{1,0} multiply", "f32[32]{0} reduce", "NOT: dot("})) << r.text;
}

// XLA: MultipleContractingDimensions (transposes, broadcast, layouts).
TEST(DotStrengthReductionTest, TransposesAndBroadcastsMatrixVectorDot) {
  PassResult r = RunPass(Pass(9), R"(
ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  p1 = f32[16,4,8]{2,1,0} parameter(1)
  ROOT dot = f32[16]{0} dot(p0, p1), lhs_contracting_dims={1,0}, rhs_contracting_dims={2,1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[8,4]{0,1} transpose", "f32[16,8,4]{1,0,2} broadcast",
                               "f32[16,8,4]{1,2,0} transpose", "f32[16,8,4]{1,0,2} multiply", "f32[16]{0} reduce"}))
      << r.text;
}

// XLA: UpcastInReduction: bf16 products reduced in f32. One contracted
// element, so that rounding the products to bf16 first (XLA's semantics)
// gives the dot's values exactly.
TEST(DotStrengthReductionTest, AccumulatesBf16InF32) {
  PassResult r = RunPass(Pass(9), R"(
ENTRY e {
  p0 = bf16[1]{0} parameter(0)
  p1 = bf16[1,16]{1,0} parameter(1)
  ROOT dot = bf16[16]{0} dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"bf16[16,1]{1,0} multiply", "f32[16,1]{1,0} convert", "f32[] constant(0)",
                               "f32[16]{0} reduce", "bf16[16]{0} convert"}))
      << r.text;
}

// XLA: DotStrengthReductionMixedOperandTypes.
TEST(DotStrengthReductionTest, ConvertsOperandsToTheDotType) {
  PassResult r = RunPass(Pass(), R"(
ENTRY e {
  a = s32[128,2]{1,0} parameter(0)
  b = s64[2]{0} parameter(1)
  ROOT dot = s32[128]{0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"s32[2]{0} convert", "s32[128,2]{1,0} multiply", "s32[128]{0} reduce"})) << r.text;
}

// XLA: S32MatrixMatrixDotShouldBeStrengthReduced / F32MatrixMatrixDot...
TEST(DotStrengthReductionTest, ReducesS32MatrixMatrixButNotF32) {
  PassResult r = RunPass(Pass(), R"(
ENTRY e {
  p0 = s32[4,5] parameter(0)
  p1 = s32[7,5] parameter(1)
  ROOT dot = s32[4,7] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"s32[4,7,5]{2,1,0} multiply", "s32[4,7]{1,0} reduce"})) << r.text;
  EXPECT_FALSE(RunPass(Pass(), R"(
ENTRY e {
  p0 = f32[4,5] parameter(0)
  p1 = f32[7,5] parameter(1)
  ROOT dot = f32[4,7] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})").changed);
}

// XLA: MatrixVectorDotShouldNotBeStrengthReduced and
// DotWithTypeUnsupportedByGemmFusionShouldBeStrengthReduced: a large
// matrix-vector dot stays unless Triton cannot take its type.
TEST(DotStrengthReductionTest, LargeMatrixVectorDotDependsOnTritonSupport) {
  const char* kLarge = R"(
ENTRY e {
  p0 = %s[2,5000,2100] parameter(0)
  p1 = %s[2,5000] parameter(1)
  ROOT dot = %s[2,2100] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})";
  auto text = [&](const char* type) {
    std::string s = kLarge;
    for (size_t at; (at = s.find("%s")) != std::string::npos;) s.replace(at, 2, type);
    return s;
  };
  // Structural checks only: the evaluator would take long on 21M-element
  // products, so these use the pass directly on a parsed module.
  for (auto [type, expect] : {std::pair{"f32", false}, std::pair{"f64", true}}) {
    auto m = ParseHloModule(text(type), "t.hlo");
    ASSERT_TRUE(m.ok());
    HloPassPipeline p("t");
    p.AddPass<HloPassFixBase>(Pass(), 1);
    absl::StatusOr<bool> changed = p.Run(**m);
    ASSERT_TRUE(changed.ok()) << changed.status().message();
    EXPECT_EQ(*changed, expect) << type;
  }
}

// XLA: SmallDotShouldBeStrengthReduced: the x6 algorithm's six bf16
// products. Structure only: XLA multiplies the bf16 parts elementwise in
// bf16, which rounds each partial product, so the values are bf16-accurate,
// not the dot's f32-accurate ones.
TEST(DotStrengthReductionTest, MultipliesAsTheAlgorithmPrescribes) {
  auto m = ParseHloModule(R"(
ENTRY e {
  p0 = f32[2,5,7] parameter(0)
  p1 = f32[2,5] parameter(1)
  ROOT dot = f32[2,7] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}, algorithm=dot_bf16_bf16_f32_x6
})",
                          "t.hlo");
  ASSERT_TRUE(m.ok());
  HloPassPipeline p("t");
  p.AddPass<HloPassFixBase>(Pass(), 1);
  absl::StatusOr<bool> changed = p.Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(VerifyModule(**m).ok());
  PrintOptions options;
  options.print_operand_shape = false;
  const std::string text = PrintModule(**m, options);
  EXPECT_TRUE(Matches(text, {"bf16[2,7,5]{1,2,0} multiply", "bf16[2,7,5]{1,2,0} multiply",
                             "bf16[2,7,5]{1,2,0} multiply", "bf16[2,7,5]{1,2,0} multiply",
                             "bf16[2,7,5]{1,2,0} multiply", "bf16[2,7,5]{1,2,0} multiply", "f32[2,7]{1,0} reduce"}))
      << text;
  // The NaN guard before high * high is added.
  EXPECT_TRUE(Matches(text, {"compare(", "select("})) << text;
}

TEST(DotStrengthReductionTest, EdgeCaseBatchOnlyDotNeedsNoReduce) {
  PassResult r = RunPass(Pass(), R"(
ENTRY e {
  p0 = f32[3] parameter(0)
  p1 = f32[3] parameter(1)
  ROOT dot = f32[3] dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT", "multiply(", "NOT: reduce("})) << r.text;
  // An outer product has a non-contracting dimension on each side: neither
  // is a vector, so it stays.
  EXPECT_FALSE(RunPass(Pass(), R"(
ENTRY e {
  p0 = f32[3] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT dot = f32[3,4] dot(p0, p1)
})").changed);
}

}  // namespace
}  // namespace passlab
