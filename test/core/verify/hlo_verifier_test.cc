// One test per verifier rule (each names the instruction and the rule), plus
// shape inference on the ops whose arithmetic is easy to get wrong.
#include "core/verify/hlo_verifier.h"

#include <gtest/gtest.h>

#include "core/text/hlo_parser.h"
#include "core/verify/shape_inference.h"

namespace passlab {
namespace {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

void ExpectError(const std::string& text, const std::string& instruction, const std::string& rule,
                 const std::string& detail) {
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  absl::Status s = VerifyModule(*m);
  ASSERT_FALSE(s.ok()) << "verified:\n" << text;
  std::string msg(s.message());
  EXPECT_NE(msg.find(instruction), std::string::npos) << msg;
  EXPECT_NE(msg.find("[" + rule + "]"), std::string::npos) << msg;
  EXPECT_NE(msg.find(detail), std::string::npos) << msg;
}

TEST(VerifierTest, AcceptsFixtures) {
  for (const char* f : {"gelu.hlo", "all_opcodes.hlo", "async_seed001.hlo"}) {
    std::string path = std::string(PASSLAB_SOURCE_DIR) + "/test/hlo/" + f;
    FILE* fp = fopen(path.c_str(), "rb");
    ASSERT_NE(fp, nullptr);
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) text.append(buf, n);
    fclose(fp);
    auto m = Parse(text);
    ASSERT_NE(m, nullptr);
    absl::Status s = VerifyModule(*m);
    EXPECT_TRUE(s.ok()) << f << ": " << s.message();
  }
}

// XLA's ShapeUtil::ValidateShape: an array whose byte size does not fit in
// 64 bits is invalid (f32[1e13,1e13] passed before and aborted the
// evaluator); a merely huge one is valid (the CLI's memory budget refuses it).
TEST(VerifierTest, ShapeWhoseBytesOverflow) {
  ExpectError("HloModule m\nENTRY e {\n  ROOT a = f32[10000000000000,10000000000000] parameter(0)\n}\n", "'a'", "shape",
              "more bytes than fit in 64 bits");
  auto m = Parse("HloModule m\nENTRY e {\n  ROOT a = f32[100000000000] parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

TEST(VerifierTest, ShapeMismatch) {
  ExpectError("ENTRY e {\n p = f32[2,3] parameter(0)\n ROOT n = f32[3,2] negate(p)\n}", "'n'", "shape",
              "inferred f32[2,3] but the instruction has f32[3,2]");
}

TEST(VerifierTest, BinaryOperandsDiffer) {
  ExpectError("ENTRY e {\n a = f32[2] parameter(0)\n b = f32[3] parameter(1)\n ROOT s = f32[2] add(a, b)\n}", "'s'",
              "shape", "operand shapes differ");
}

// XLA's InferElementwiseBinaryOpShape compares operand types ignoring
// floating-point precision and gives the result the higher one
// (algebraic_simplifier_test.cc's MinimumWithInfinityLhs writes
// minimum(f16, f32) -> f32); integers must still agree, and a result of
// another precision is still a mismatch.
TEST(VerifierTest, BinaryFloatOperandsMayDifferInPrecision) {
  auto m = Parse("ENTRY e {\n a = f16[2] parameter(0)\n b = f32[2] parameter(1)\n ROOT s = f32[2] minimum(a, b)\n}");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(VerifyModule(*m).ok());
  ExpectError("ENTRY e {\n a = f16[2] parameter(0)\n b = f32[2] parameter(1)\n ROOT s = f16[2] minimum(a, b)\n}", "'s'",
              "shape", "inferred f32[2]");
  ExpectError("ENTRY e {\n a = s16[2] parameter(0)\n b = s32[2] parameter(1)\n ROOT s = s32[2] add(a, b)\n}", "'s'",
              "shape", "operand element types differ: s16 vs s32");
}

// Reducers: the accumulator may be of another floating-point precision than
// the input (XLA's VerifyReducerShape, CompatibleIgnoringFpPrecision;
// algebraic_simplifier_test.cc's FoldingConvertedPadIntoReduceWindow...).
TEST(VerifierTest, ReducerMayAccumulateInAnotherFloatPrecision) {
  auto m = Parse("fn {\n x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y)\n}\n"
                 "ENTRY e {\n p = bf16[8] parameter(0)\n z = bf16[] constant(0)\n"
                 " ROOT r = bf16[] reduce(p, z), dimensions={0}, to_apply=fn\n}");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

TEST(VerifierTest, DotContractingSizes) {
  ExpectError("ENTRY e {\n a = f32[2,3] parameter(0)\n b = f32[4,5] parameter(1)\n"
              " ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
              "'d'", "shape", "lhs contracting dimension 1 has size 3 but rhs contracting dimension 0 has size 4");
}

TEST(VerifierTest, ConvolutionFeatureGroups) {
  ExpectError("ENTRY e {\n a = f32[1,4,4,6] parameter(0)\n k = f32[3,3,4,8] parameter(1)\n"
              " ROOT c = f32[1,4,4,8] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}",
              "'c'", "shape", "input features (6) / feature_group_count (1) must equal the kernel's input features (4)");
}

TEST(VerifierTest, SliceOutOfBounds) {
  ExpectError("ENTRY e {\n p = f32[4] parameter(0)\n ROOT s = f32[3] slice(p), slice={[2:5]}\n}", "'s'", "shape",
              "outside [0:4]");
}

TEST(VerifierTest, ReducerSignature) {
  ExpectError("HloModule m\nadd {\n a = f32[] parameter(0)\n ROOT r = f32[] negate(a)\n}\n"
              "ENTRY e {\n p = f32[4] parameter(0)\n z = f32[] constant(0)\n"
              " ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add\n}",
              "'r'", "shape", "reducer computation 'add' takes 1 parameters but needs 2");
}

TEST(VerifierTest, WhileBodySignature) {
  ExpectError("HloModule m\nc {\n s = s32[] parameter(0)\n ROOT p = pred[] constant(true)\n}\n"
              "b {\n s = s32[] parameter(0)\n ROOT f = f32[] convert(s)\n}\n"
              "ENTRY e {\n i = s32[] constant(0)\n ROOT w = s32[] while(i), condition=c, body=b\n}",
              "'w'", "shape", "body computation 'b' returns f32[] but should return s32[]");
}

TEST(VerifierTest, ComparisonTypeMustFitOperands) {
  ExpectError("ENTRY e {\n a = s32[] parameter(0)\n ROOT c = pred[] compare(a, a), direction=LT, type=TOTALORDER\n}",
              "'c'", "attributes", "needs float operands");
}

TEST(VerifierTest, BatchNormEpsilon) {
  ExpectError("ENTRY e {\n x = f32[2,3] parameter(0)\n s = f32[3] parameter(1)\n"
              " ROOT b = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, s), epsilon=0, feature_index=1\n}",
              "'b'", "attributes", "epsilon must be finite and positive");
}

TEST(VerifierTest, LayoutNotAPermutation) {
  ExpectError("ENTRY e {\n ROOT p = f32[2,3]{1,1} parameter(0)\n}", "'p'", "layout", "is not a permutation");
}

TEST(VerifierTest, TileWithZero) {
  ExpectError("ENTRY e {\n ROOT p = f32[4,4]{1,0:T(0,2)} parameter(0)\n}", "'p'", "layout", "invalid dimension 0");
}

TEST(VerifierTest, AsyncStartNeedsExactlyOneUser) {
  ExpectError("HloModule m\nw {\n p = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)\n}\n"
              "ENTRY e {\n x = f32[4] parameter(0)\n"
              " s = ((f32[4]), f32[4], s32[]) async-start(x), calls=w\n"
              " d1 = f32[4] async-done(s)\n d2 = f32[4] async-done(s)\n"
              " ROOT t = (f32[4], f32[4]) tuple(d1, d2)\n}",
              "'s'", "async", "must have exactly one user");
}

TEST(VerifierTest, AsyncCannotWrapOpsWithOwnAsyncOpcodes) {
  ExpectError("HloModule m\nw {\n p = f32[4] parameter(0)\n ROOT c = f32[4] copy(p)\n}\n"
              "ENTRY e {\n x = f32[4] parameter(0)\n"
              " s = ((f32[4]), f32[4], s32[]) async-start(x), calls=w\n"
              " ROOT d = f32[4] async-done(s)\n}",
              "'s'", "async", "wraps 'copy', which has its own -start/-done opcodes");
}

TEST(VerifierTest, AsyncDoneShape) {
  ExpectError("HloModule m\nw {\n p = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)\n}\n"
              "ENTRY e {\n x = f32[4] parameter(0)\n"
              " s = ((f32[4]), f32[4], s32[]) async-start(x), calls=w\n"
              " ROOT d = f32[8] async-done(s)\n}",
              "'d'", "shape", "inferred f32[4]");
}

TEST(VerifierTest, AsyncStartTupleMustMatchWrappedOp) {
  ExpectError("HloModule m\nw {\n p = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)\n}\n"
              "ENTRY e {\n x = f32[4] parameter(0)\n"
              " s = ((f32[4]), f32[2], s32[]) async-start(x), calls=w\n"
              " ROOT d = f32[2] async-done(s)\n}",
              "'s'", "async", "element 1 is f32[2] but the wrapped op returns f32[4]");
}

TEST(VerifierTest, DonePairsWithStart) {
  ExpectError("ENTRY e {\n x = (f32[4], f32[4], u32[]) parameter(0)\n ROOT d = f32[4] copy-done(x)\n}", "'d'", "async",
              "operand must be a copy-start");
}

TEST(VerifierTest, EntryLayoutMismatch) {
  ExpectError("HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\n"
              "ENTRY e {\n ROOT p = f32[4] parameter(0)\n}",
              "computation 'e'", "entry", "entry_computation_layout parameter 0 is f32[3]");
}

TEST(VerifierTest, ArityOfProgrammaticInstruction) {
  auto m = Parse("ENTRY e {\n ROOT p = f32[4] parameter(0)\n}");
  HloComputation* c = m->entry_computation();
  HloInstruction* p = c->parameter_instruction(0);
  HloInstruction* bad = c->AddInstruction(HloInstruction::Create(HloOpcode::kAdd, p->shape(), {p}));
  c->set_root_instruction(bad);
  absl::Status s = VerifyModule(*m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("[arity] 'add' takes 2 operand(s), not 1"), std::string::npos) << s.message();
}

TEST(VerifierTest, OperandFromAnotherComputation) {
  auto m = Parse("HloModule m\nf {\n ROOT q = f32[4] parameter(0)\n}\nENTRY e {\n p = f32[4] parameter(0)\n"
                 " ROOT c = f32[4] call(p), to_apply=f\n}");
  HloComputation* f = m->GetComputationWithName("f");
  HloInstruction* p = m->entry_computation()->parameter_instruction(0);
  HloInstruction* bad = f->AddInstruction(HloInstruction::CreateUnary(p->shape(), HloOpcode::kNegate, p));
  f->set_root_instruction(bad);
  absl::Status s = VerifyModule(*m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("[structure] operand 'p' belongs to another computation"), std::string::npos)
      << s.message();
}

TEST(VerifierTest, FusionMustPointBack) {
  auto m = Parse("HloModule m\nf {\n x = f32[4] parameter(0)\n ROOT n = f32[4] negate(x)\n}\nENTRY e {\n"
                 " p = f32[4] parameter(0)\n ROOT fu = f32[4] fusion(p), kind=kLoop, calls=f\n}");
  m->GetComputationWithName("f")->SetFusionInstruction(nullptr);
  absl::Status s = VerifyModule(*m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("[fusion]"), std::string::npos) << s.message();
}

TEST(ShapeInferenceTest, GatherLikeXla) {
  // Embedding lookup: operand [V, D], indices [B, 1] -> [B, D].
  GatherDimensionNumbers d;
  d.offset_dims = {1};
  d.collapsed_slice_dims = {0};
  d.start_index_map = {0};
  d.index_vector_dim = 1;
  auto s = InferGatherShape(Shape(PrimitiveType::kF32, {100, 16}), Shape(PrimitiveType::kS32, {8, 1}), d, {1, 16});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->ToString(), "f32[8,16]{1,0}");
}

TEST(ShapeInferenceTest, ConvolutionWithStrideDilationAndPadding) {
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0; d.input_feature_dimension = 3; d.input_spatial_dimensions = {1, 2};
  d.kernel_spatial_dimensions = {0, 1}; d.kernel_input_feature_dimension = 2; d.kernel_output_feature_dimension = 3;
  d.output_batch_dimension = 0; d.output_feature_dimension = 3; d.output_spatial_dimensions = {1, 2};
  Window w;
  w.dimensions.resize(2);
  for (auto& x : w.dimensions) {
    x.size = 3; x.stride = 2; x.padding_low = 1; x.padding_high = 1;
  }
  w.dimensions[1].window_dilation = 2;
  auto s = InferConvolveShape(Shape(PrimitiveType::kF32, {2, 32, 32, 8}), Shape(PrimitiveType::kF32, {3, 3, 8, 16}),
                              1, 1, w, d, PrimitiveType::kF32);
  ASSERT_TRUE(s.ok()) << s.status().message();
  // (32+2-3)/2+1 = 16; dilated window 5: (34-5)/2+1 = 15.
  EXPECT_EQ(s->ToString(), "f32[2,16,15,16]{3,2,1,0}");
}

TEST(ShapeInferenceTest, ParserInfersOmittedShapes) {
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  auto m = ParseHloModule("ENTRY e {\n p = (f32[2,3], s32[]) parameter(0)\n g = get-tuple-element(p), index=0\n"
                          " t = transpose(g), dimensions={1,0}\n ROOT c = compare(t, t), direction=EQ\n}",
                          "x", options);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->entry_computation()->root_instruction()->shape().ToString(), "pred[3,2]{1,0}");
}

}  // namespace
}  // namespace passlab
