#include "passes/layout/gpu_layout_assignment.h"

#include "passes/libcall/conv_rewriter.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

// Runs the pass; a changed module must pass the layout-sensitive verifier
// (elementwise operands share their result's layout) and round-trip.
PassResult RunLayoutAssignment(const std::string& hlo, GpuLayoutAssignmentOptions options = {}) {
  PassResult r = RunPass(std::make_unique<GpuLayoutAssignment>(options), hlo);
  if (r.module != nullptr) {
    absl::Status s = VerifyModule(*r.module, {.layout_sensitive = true});
    EXPECT_TRUE(s.ok()) << s.message() << "\n" << r.text;
  }
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

constexpr char kConvForwardB01f[] = R"(
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  c = (f32[2,8,8,4], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  ROOT g = f32[2,8,8,4] get-tuple-element(c), index=0
})";

TEST(GpuLayoutAssignmentTest, NchwConvCallGetsFeatureMajorActivationsAndCopiesBack) {
  // NCHW for b01f: physical [b, f, 0, 1] = minor_to_major {2,1,3,0};
  // filter 01io as [o, i, 0, 1] = {1,0,2,3}.
  PassResult r = RunLayoutAssignment(kConvForwardB01f, {.conv_layout = ConvLayout::kNchw});
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,8,8,3]{2,1,3,0} copy(%x)", "f32[3,3,3,4]{1,0,2,3} copy(%w)",
                               "(f32[2,8,8,4]{2,1,3,0}, u8[0]{0}) custom-call(", "f32[2,8,8,4]{2,1,3,0} get-tuple-element",
                               "ROOT", "f32[2,8,8,4]{3,2,1,0} copy(%g)"}))
      << r.text;
}

TEST(GpuLayoutAssignmentTest, KeepsNhwcConvCallOnFeatureMinorLabels) {
  EXPECT_FALSE(RunLayoutAssignment(kConvForwardB01f).changed);
}

TEST(GpuLayoutAssignmentTest, PropagatesConvLayoutThroughElementwiseUsers) {
  // bf01 convolution under NHWC: activations [b, 0, 1, f] = {1,3,2,0}, the
  // filter [0, 1, i, o] = {0,1,3,2}. The
  // relu and its broadcast zero follow the conv result; only the entry
  // result is copied back.
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  x = f32[2,3,8,8] parameter(0)
  w = f32[4,3,3,3] parameter(1)
  c = (f32[2,4,8,8], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, custom_call_target="__dnn$convForward"
  g = f32[2,4,8,8] get-tuple-element(c), index=0
  z = f32[] constant(0)
  zb = f32[2,4,8,8] broadcast(z), dimensions={}
  ROOT r = f32[2,4,8,8] maximum(g, zb)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,3,8,8]{1,3,2,0} copy(%x)", "f32[4,3,3,3]{0,1,3,2} copy(%w)",
                               "f32[2,4,8,8]{1,3,2,0} broadcast(%z)", "f32[2,4,8,8]{1,3,2,0} maximum(%g, %zb)",
                               "ROOT", "f32[2,4,8,8]{3,2,1,0} copy(%r)"}))
      << r.text;
}

TEST(GpuLayoutAssignmentTest, CopiesBatchDotOperandIntoBatchMajorLayout) {
  // lhs physical [m, batch, k]: the batch is not most major, so the gemm
  // could not read it directly; rhs physical [batch, n, k] it can.
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  a = f32[2,4,8]{2,0,1} parameter(0)
  b = f32[2,8,5]{1,2,0} parameter(1)
  ROOT d = f32[2,4,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,4,8]{2,1,0} copy(%a)", "dot(%copy, %b)", "NOT:copy(%b)"})) << r.text;
}

TEST(GpuLayoutAssignmentTest, KeepsColumnMajorDotOperand) {
  EXPECT_FALSE(RunLayoutAssignment(R"(
ENTRY e {
  a = f32[4,8]{0,1} parameter(0)
  b = f32[8,5] parameter(1)
  ROOT d = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})").changed);
}

TEST(GpuLayoutAssignmentTest, ElementwiseOperandsGetTheResultLayout) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  p1 = f32[4,8]{0,1} parameter(1)
  ROOT s = f32[4,8]{1,0} add(p0, p1)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[4,8]{1,0} copy(%p1)", "add(%p0, %copy)"})) << r.text;
}

TEST(GpuLayoutAssignmentTest, HonoursEntryComputationLayout) {
  // The parameter takes the entry layout; exp follows it and the result is
  // already in the entry's result layout, so no copy is needed.
  PassResult r = RunLayoutAssignment(R"(
HloModule m, entry_computation_layout={(f32[4,8]{0,1})->f32[4,8]{0,1}}

ENTRY e {
  p = f32[4,8]{1,0} parameter(0)
  ROOT x = f32[4,8]{1,0} exponential(p)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[4,8]{0,1} parameter(0)", "ROOT %x = f32[4,8]{0,1} exponential(%p)", "NOT:copy("}))
      << r.text;
}

TEST(GpuLayoutAssignmentTest, TiledEntryLayoutsStayAtTheBoundary) {
  // Kernels read and write plain layouts: a copy untiles the parameter and
  // another tiles the result.
  PassResult r = RunLayoutAssignment(R"(
HloModule m, entry_computation_layout={(f32[8,128]{1,0:T(8,128)})->f32[8,128]{1,0:T(8,128)}}

ENTRY e {
  p = f32[8,128]{1,0:T(8,128)} parameter(0)
  ROOT n = f32[8,128]{1,0:T(8,128)} negate(p)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[8,128]{1,0} copy(%p)", "f32[8,128]{1,0} negate(%copy)",
                               "ROOT %copy.1 = f32[8,128]{1,0:T(8,128)} copy(%n)"}))
      << r.text;
}

TEST(GpuLayoutAssignmentTest, EdgeCaseTupleUserKeepsTheOriginalLayout) {
  // exp follows its column-major parameter, but the tuple (a layout-
  // sensitive user) gets the layout exp had before, through a copy.
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  p = f32[4,8]{0,1} parameter(0)
  x = f32[4,8]{1,0} exponential(p)
  ROOT t = (f32[4,8]{1,0}) tuple(x)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[4,8]{0,1} exponential(%p)", "f32[4,8]{1,0} copy(%x)", "tuple(%copy)"}))
      << r.text;
}

TEST(GpuLayoutAssignmentTest, EdgeCaseBitcastOperandKeepsItsLayout) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  p = f32[4,8]{0,1} parameter(0)
  x = f32[4,8]{1,0} exponential(p)
  ROOT b = f32[32]{0} bitcast(x)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[4,8]{0,1} exponential(%p)", "f32[4,8]{1,0} copy(%x)", "bitcast(%copy)"}))
      << r.text;
}

// Corpus: every module with dots or convolutions (the latter rewritten into
// library calls first) gets layouts that pass the layout-sensitive
// verifier, and small ones compute what they computed before.
TEST(GpuLayoutAssignmentTest, CorpusModulesGetVerifiedLayoutsAndSameValues) {
  int candidates = 0, changed = 0, evaluated = 0;
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  for (const char* needle : {" dot(", " convolution("}) {
    for (const auto& [name, text] : CorpusTextsWith(needle)) {
      absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, options);
      if (!m.ok() || !VerifyModule(**m).ok()) continue;
      ++candidates;
      bool small = SmallModule(**m, 1 << 12) && !HasLowPrecisionFloats(**m);
      std::vector<Literal> args;
      absl::StatusOr<Literal> before = absl::UnimplementedError("not evaluated");
      if (small) {
        args = MakeRandomArguments(*(*m)->entry_computation(), 7);
        before = HloEvaluator().Evaluate(**m, args);
      }
      HloPassPipeline pipeline("corpus");
      pipeline.AddPass<ConvRewriter>();
      pipeline.AddPass<GpuLayoutAssignment>(GpuLayoutAssignmentOptions{.conv_layout = ConvLayout::kNchw});
      absl::StatusOr<bool> ran = pipeline.Run(**m);
      ASSERT_TRUE(ran.ok()) << name << ": " << ran.status().message();
      if (!*ran) continue;
      ++changed;
      absl::Status verified = VerifyModule(**m, {.layout_sensitive = true});
      EXPECT_TRUE(verified.ok()) << name << ": " << verified.message();
      if (!before.ok()) continue;
      absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
      ASSERT_TRUE(after.ok()) << name << ": " << after.status().message();
      absl::Status same = CompareLiterals(*before, *after, {.abs = 1e-3, .rel = 1e-3});
      EXPECT_TRUE(same.ok()) << name << ": " << same.message();
      ++evaluated;
    }
  }
  if (candidates == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  EXPECT_GT(changed, 10);
  EXPECT_GT(evaluated, 5);
  std::cout << "layout-assignment corpus: " << candidates << " modules, " << changed << " changed, " << evaluated
            << " evaluated\n";
}

}  // namespace
}  // namespace passlab
