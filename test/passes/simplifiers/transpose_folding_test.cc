#include "passes/simplifiers/transpose_folding.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

// XLA transpose_folding_test.cc FoldBatchDotTranspose: the default rule
// (IsRowColumnTransposeDotOperand) folds a transpose that keeps the batch
// dimensions in place and swaps the one free and one contracting dimension.
TEST(TransposeFoldingTest, FoldsRowColumnTransposeOfBatchDot) {
  PassResult r = RunPass(std::make_unique<TransposeFolding>(), R"(
ENTRY e {
  x = f32[7,7,2,3] parameter(0)
  y = f32[7,7,2,3] parameter(1)
  t = f32[7,7,3,2] transpose(y), dimensions={0,1,3,2}
  ROOT d = f32[7,7,2,2] dot(x, t), lhs_contracting_dims={3}, rhs_contracting_dims={2}, lhs_batch_dims={0,1}, rhs_batch_dims={0,1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"dot(%x, %y)", "lhs_contracting_dims={3}", "rhs_contracting_dims={3}",
                               "NOT:transpose("}))
      << r.text;
}

// XLA transpose_folding_test.cc NoFoldBatchDotTransposeBatch,
// NoFoldBatchDotTransposeIdentity, DontFoldTransposeOfRank1Dot and
// DontFoldTransposeOfDotWithoutContractingDims.
TEST(TransposeFoldingTest, KeepsBatchMovingIdentityRank1AndNoContractingTransposes) {
  for (const char* hlo : {R"(
ENTRY e {
  x = f32[7,7,2,3] parameter(0)
  y = f32[7,7,2,3] parameter(1)
  t = f32[7,7,3,2] transpose(y), dimensions={1,0,3,2}
  ROOT d = f32[7,7,2,2] dot(x, t), lhs_contracting_dims={3}, rhs_contracting_dims={2}, lhs_batch_dims={0,1}, rhs_batch_dims={0,1}
})",
                          R"(
ENTRY e {
  x = f32[7,7,2,3] parameter(0)
  y = f32[7,7,3,2] parameter(1)
  t = f32[7,7,3,2] transpose(y), dimensions={0,1,2,3}
  ROOT d = f32[7,7,2,2] dot(x, t), lhs_contracting_dims={3}, rhs_contracting_dims={2}, lhs_batch_dims={0,1}, rhs_batch_dims={0,1}
})",
                          R"(
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3,2] parameter(1)
  t = f32[2,3] transpose(y), dimensions={1,0}
  ROOT d = f32[2] dot(x, t), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})",
                          R"(
ENTRY e {
  x = f32[3,4] parameter(0)
  y = f32[3,4,6,7] parameter(1)
  t = f32[3,4,7,6] transpose(y), dimensions={0,1,3,2}
  ROOT d = f32[3,4,7,6] dot(x, t), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={}, rhs_contracting_dims={}
})"}) {
    EXPECT_FALSE(RunPass(std::make_unique<TransposeFolding>(), hlo).changed) << hlo;
  }
}

// XLA transpose_folding_test.cc FoldTransposeOfBatchWhenPermitted: with the
// "always" rule a transpose moving a batch dimension folds too.
TEST(TransposeFoldingTest, FoldsBatchTransposeWhenAlwaysAllowed) {
  TransposeFoldingOptions options;
  options.dot_rule = TransposeFoldingOptions::DotRule::kAlways;
  PassResult r = RunPass(std::make_unique<TransposeFolding>(options), R"(
ENTRY e {
  x = f32[5,2,3] parameter(0)
  y = f32[3,5,4] parameter(1)
  t = f32[5,3,4] transpose(y), dimensions={1,0,2}
  ROOT d = f32[5,2,4] dot(x, t), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"dot(%x, %y)", "lhs_contracting_dims={2}", "rhs_batch_dims={1}",
                               "rhs_contracting_dims={0}"}))
      << r.text;
}

// XLA transpose_folding_test.cc FoldTransposeWithBackendConfig and
// FoldDotTransposeInCall: the folded dot keeps its backend config, and
// called computations are folded too.
TEST(TransposeFoldingTest, KeepsBackendConfigAndFoldsInCalledComputations) {
  PassResult r = RunPass(std::make_unique<TransposeFolding>(), R"(
HloModule m
callee {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  t = f32[3,2] transpose(a), dimensions={1,0}
  ROOT d = f32[2,2] dot(b, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}, backend_config={"force_earliest_schedule":false}
}
ENTRY e {
  y = f32[2,3] parameter(1)
  x = f32[2,3] parameter(0)
  ROOT c = f32[2,2] call(y, x), to_apply=callee
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"dot(%b, %a), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
                               "backend_config={\"force_earliest_schedule\":false}"}))
      << r.text;
}

// The convolution rule "never" leaves transposed convolution operands.
TEST(TransposeFoldingTest, NeverRuleKeepsConvolutionTransposes) {
  TransposeFoldingOptions options;
  options.conv_rule = TransposeFoldingOptions::ConvRule::kNever;
  EXPECT_FALSE(RunPass(std::make_unique<TransposeFolding>(options), R"(
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  k = f32[2,3,3,5] parameter(1)
  kt = f32[3,3,2,5] transpose(k), dimensions={1,2,0,3}
  ROOT c = f32[1,4,4,5] convolution(x, kt), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})").changed);
}

TEST(TransposeFoldingTest, FoldsIntoDotAndConvolution) {
  PassResult r = RunPass(std::make_unique<TransposeFolding>(), R"(
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[4,3] parameter(1)
  at = f32[2,3] transpose(a), dimensions={1,0}
  bt = f32[3,4] transpose(b), dimensions={1,0}
  d = f32[2,4] dot(at, bt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[1,4,4,2] parameter(2)
  k = f32[2,3,3,5] parameter(3)
  kt = f32[3,3,2,5] transpose(k), dimensions={1,2,0,3}
  c = f32[1,4,4,5] convolution(x, kt), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[2,4], f32[1,4,4,5]) tuple(d, c)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={1}",
                               "convolution(%x, %k)", "dim_labels=b01f_i01o->b01f", "NOT:transpose("}))
      << r.text;
}

TEST(TransposeFoldingTest, KeepsTransposesThatReorderFreeDims) {
  PassResult r = RunPass(std::make_unique<TransposeFolding>(), R"(
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[4,5] parameter(1)
  at = f32[3,2,4] transpose(a), dimensions={1,0,2}
  ROOT d = f32[3,2,5] dot(at, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
})");
  EXPECT_FALSE(r.changed);
}

}  // namespace
}  // namespace passlab
