#include "passes/libcall/gemm_broadcast_folding_rewriter.h"

#include "passes/libcall/gemm_rewriter.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

PassResult RunFolding(const std::string& hlo) {
  PassResult r = RunPass(std::make_unique<GemmBroadcastFoldingRewriter>(), hlo);
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

constexpr char kBatchGemmOfBroadcastRhs[] = R"(
ENTRY e {
  a = f32[3,4,5] parameter(0)
  w = f32[5,7] parameter(1)
  wb = f32[3,5,7] broadcast(w), dimensions={1,2}
  ROOT g = f32[3,4,7] custom-call(a, wb), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"lhs_contracting_dimensions":["2"],"rhs_batch_dimensions":["0"],"rhs_contracting_dimensions":["1"]}}}
})";

TEST(GemmBroadcastFoldingRewriterTest, FoldsBroadcastRhsIntoTheCall) {
  PassResult r = RunFolding(kBatchGemmOfBroadcastRhs);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%a, %w)", "\"lhs_batch_dimensions\":[\"0\"]",
                               "\"rhs_contracting_dimensions\":[\"0\"]", "NOT:broadcast(",
                               "NOT:rhs_batch_dimensions\":[\"0"}))
      << r.text;
}

TEST(GemmBroadcastFoldingRewriterTest, FoldsBroadcastLhsWithContractingDimRenumbered) {
  // lhs broadcast over batch dim 1 (not the leading one): its contracting
  // dim 2 is dim 1 of the broadcast operand.
  PassResult r = RunFolding(R"(
ENTRY e {
  x = f32[4,5] parameter(0)
  xb = f32[4,3,5] broadcast(x), dimensions={0,2}
  b = f32[3,5,7] parameter(1)
  ROOT g = f32[3,4,7] custom-call(xb, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_batch_dimensions":["1"],"lhs_contracting_dimensions":["2"],"rhs_batch_dimensions":["0"],"rhs_contracting_dimensions":["1"]}}}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%x, %b)", "\"lhs_contracting_dimensions\":[\"1\"]",
                               "\"rhs_batch_dimensions\":[\"0\"]", "NOT:broadcast("}))
      << r.text;
}

TEST(GemmBroadcastFoldingRewriterTest, KeepsBroadcastThatAddsNonBatchDims) {
  // The broadcast also creates the contracting dimension: not foldable.
  EXPECT_FALSE(RunFolding(R"(
ENTRY e {
  a = f32[3,4,5] parameter(0)
  w = f32[7] parameter(1)
  wb = f32[3,5,7] broadcast(w), dimensions={2}
  ROOT g = f32[3,4,7] custom-call(a, wb), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"lhs_contracting_dimensions":["2"],"rhs_batch_dimensions":["0"],"rhs_contracting_dimensions":["1"]}}}
})").changed);
}

TEST(GemmBroadcastFoldingRewriterTest, EdgeCaseBothSidesBroadcastFoldsOnlyOne) {
  PassResult r = RunFolding(R"(
ENTRY e {
  x = f32[4,5] parameter(0)
  xb = f32[3,4,5] broadcast(x), dimensions={1,2}
  w = f32[5,7] parameter(1)
  wb = f32[3,5,7] broadcast(w), dimensions={1,2}
  ROOT g = f32[3,4,7] custom-call(xb, wb), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"lhs_contracting_dimensions":["2"],"rhs_batch_dimensions":["0"],"rhs_contracting_dimensions":["1"]}}}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%x, %wb)", "\"rhs_batch_dimensions\":[\"0\"]"})) << r.text;
}

TEST(GemmBroadcastFoldingRewriterTest, EdgeCaseSharedBroadcastStaysForItsOtherUser) {
  PassResult r = RunFolding(R"(
ENTRY e {
  a = f32[3,4,5] parameter(0)
  w = f32[5,7] parameter(1)
  wb = f32[3,5,7] broadcast(w), dimensions={1,2}
  g = f32[3,4,7] custom-call(a, wb), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"lhs_contracting_dimensions":["2"],"rhs_batch_dimensions":["0"],"rhs_contracting_dimensions":["1"]}}}
  ROOT t = (f32[3,4,7], f32[3,5,7]) tuple(g, wb)
})");
  EXPECT_TRUE(r.changed);
  // The printer lists instructions in post order: the call (the tuple's
  // first operand) before the broadcast.
  EXPECT_TRUE(Matches(r.text, {"custom-call(%a, %w)", "ROOT", "tuple(%g, %wb)"})) << r.text;
  EXPECT_TRUE(Matches(r.text, {"broadcast(%w)", "ROOT", "tuple(%g, %wb)"})) << r.text;
}

TEST(GemmBroadcastFoldingRewriterTest, FoldsIntoTheTupleShapedCallGemmRewriterMakes) {
  // XLA's GemmBroadcastFoldingRewriteTest.BroadcastedStridedRewriteRhsPassChanged
  // (gemm_broadcast_folding_rewriter_test.cc): GemmRewriter's call returns
  // (result, s8[workspace]); the broadcast rhs folds into it all the same.
  PassResult r = RunFolding(R"(
ENTRY AddDotsFunc {
  x = f32[3,2,2] parameter(0)
  y = f32[2,2] parameter(1)
  y_broadcast = f32[3,2,2] broadcast(y), dimensions={1,2}
  g = (f32[3,2,2], s8[96]) custom-call(x, y_broadcast), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"lhs_contracting_dimensions":["2"],"rhs_batch_dimensions":["0"],"rhs_contracting_dimensions":["1"]}}}
  ROOT dot_a = f32[3,2,2] get-tuple-element(g), index=0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%x, %y)", "\"rhs_batch_dimensions\":[]",
                               "\"rhs_contracting_dimensions\":[\"0\"]", "NOT:broadcast("}))
      << r.text;
}

TEST(GemmBroadcastFoldingRewriterTest, FoldsAfterGemmRewriterAsXlaTestRunsThem) {
  // The same XLA test end to end: GemmRewriter, then the folding, on the dot.
  auto pipeline = std::make_unique<HloPassPipeline>("gemm+fold");
  pipeline->AddPass<GemmRewriter>();
  pipeline->AddPass<GemmBroadcastFoldingRewriter>();
  PassResult r = RunPass(std::move(pipeline), R"(
ENTRY AddDotsFunc {
  x = f32[3,2,2] parameter(0)
  y = f32[2,2] parameter(1)
  y_broadcast = f32[3,2,2] broadcast(y), dimensions={1,2}
  ROOT dot_a = f32[3,2,2] dot(x, y_broadcast), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%x, %y)", "ROOT", "get-tuple-element(", "NOT:broadcast("})) << r.text;
}

// Corpus: dots rewritten to gemm calls (setup), then folded; each folded
// module verifies and small ones compute what the unfolded calls computed.
TEST(GemmBroadcastFoldingRewriterTest, CorpusGemmsOfBroadcastsFoldAndComputeTheSame) {
  int candidates = 0, folded = 0, evaluated = 0;
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  for (const auto& [name, text] : CorpusTextsWith(" broadcast(")) {
    if (text.find(" dot(") == std::string::npos) continue;
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, options);
    if (!m.ok() || !VerifyModule(**m).ok()) continue;
    HloPassPipeline setup("setup");
    setup.AddPass<GemmRewriter>();
    if (!setup.Run(**m).ok()) continue;
    ++candidates;
    bool small = SmallModule(**m, 1 << 12) && !HasLowPrecisionFloats(**m);
    std::vector<Literal> args;
    absl::StatusOr<Literal> before = absl::UnimplementedError("not evaluated");
    if (small) {
      args = MakeRandomArguments(*(*m)->entry_computation(), 5);
      before = HloEvaluator().Evaluate(**m, args);
    }
    HloPassPipeline pipeline("fold");
    pipeline.AddPass<GemmBroadcastFoldingRewriter>();
    absl::StatusOr<bool> changed = pipeline.Run(**m);
    ASSERT_TRUE(changed.ok()) << name << ": " << changed.status().message();
    if (!*changed) continue;
    ++folded;
    absl::Status verified = VerifyModule(**m);
    EXPECT_TRUE(verified.ok()) << name << ": " << verified.message();
    if (!before.ok()) continue;
    absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
    ASSERT_TRUE(after.ok()) << name << ": " << after.status().message();
    absl::Status same = CompareLiterals(*before, *after, {.abs = 1e-4, .rel = 1e-4});
    EXPECT_TRUE(same.ok()) << name << ": " << same.message();
    ++evaluated;
  }
  if (candidates == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  std::cout << "gemm broadcast folding corpus: " << candidates << " modules, " << folded << " folded, " << evaluated
            << " evaluated\n";
}

}  // namespace
}  // namespace passlab
