// Tests follow xla/hlo/transforms/dot_dimension_normalizer_test.cc (test
// names given); RunPass also checks the values before and after.
#include "passes/simplifiers/dot_dimension_normalizer.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<DotDimensionNormalizer> Pass(bool noncontracting = false) {
  return std::make_unique<DotDimensionNormalizer>(
      DotDimensionNormalizerOptions{.normalize_noncontracting_dimensions = noncontracting});
}

// XLA: NonConsecutiveContractingDims.
TEST(DotDimensionNormalizerTest, TransposesNonConsecutiveContractingDims) {
  PassResult r = RunPass(Pass(), R"(
ENTRY e {
  p0 = f32[2,12,4] parameter(0)
  p1 = f32[2,4,44] parameter(1)
  ROOT d = f32[12,44] dot(p0, p1), lhs_contracting_dims={0,2}, rhs_contracting_dims={0,1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[12,2,4]{2,0,1} transpose(%p0), dimensions={1,0,2}", "f32[12,8]{1,0} reshape(",
                               "f32[8,44]{1,0} reshape(%p1)", "ROOT", "lhs_contracting_dims={1}",
                               "rhs_contracting_dims={0}"}))
      << r.text;
}

// XLA: UnsortedConsecutiveContractingDims.
TEST(DotDimensionNormalizerTest, MovesUnsortedContractingDimsLast) {
  PassResult r = RunPass(Pass(), R"(
ENTRY e {
  p0 = f32[2,3,5,4,2] parameter(0)
  p1 = f32[2,3,2,4,3,2] parameter(1)
  ROOT d = f32[2,3,5,3,2] dot(p0, p1), lhs_batch_dims={0,1}, lhs_contracting_dims={3,4}, rhs_batch_dims={0,1}, rhs_contracting_dims={3,2}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[2,3,5,8]{3,2,1,0} reshape(%p0)", "transpose(%p1), dimensions={0,1,4,5,3,2}",
                               "f32[2,3,3,2,8]{4,3,2,1,0} reshape(", "lhs_contracting_dims={3}",
                               "rhs_contracting_dims={4}"}))
      << r.text;
}

// XLA: FoldPreExistingReshape: the reshape feeding the dot folds away.
TEST(DotDimensionNormalizerTest, FoldsPreExistingReshape) {
  PassResult r = RunPass(Pass(), R"(
ENTRY e {
  p0 = f32[12,8] parameter(0)
  r0 = f32[12,2,4] reshape(p0)
  p1 = f32[2,4,44] parameter(1)
  ROOT d = f32[12,44] dot(r0, p1), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[8,44]{1,0} reshape(%p1)", "dot(%p0, ", "NOT: r0 ="})) << r.text;
}

// XLA: FoldPreExistingTransposeAndReshape (a transpose in the chain is
// kept as one step from the head).
TEST(DotDimensionNormalizerTest, FoldsTransposeChain) {
  PassResult r = RunPass(Pass(), R"(
ENTRY e {
  p0 = f32[4,2,12] parameter(0)
  t0 = f32[12,4,2] transpose(p0), dimensions={2,0,1}
  p1 = f32[4,2,44] parameter(1)
  ROOT d = f32[12,44] dot(t0, p1), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // The tracker rebuilds the chain from p0: the transpose, then one reshape.
  EXPECT_TRUE(Matches(r.text, {"f32[12,4,2]{0,2,1} transpose(%p0), dimensions={2,0,1}", "f32[12,8]{1,0} reshape(",
                               "ROOT", "lhs_contracting_dims={1}"}))
      << r.text;
}

// XLA: NoChangeWhenOneContractingDim / NoChangeWhenFlagIsFalse.
TEST(DotDimensionNormalizerTest, KeepsSingleContractingDim) {
  const char* kHlo = R"(
ENTRY e {
  p0 = f32[3,5,8] parameter(0)
  p1 = f32[8,7] parameter(1)
  ROOT d = f32[3,5,7] dot(p0, p1), lhs_contracting_dims={2}, rhs_contracting_dims={0}
})";
  EXPECT_FALSE(RunPass(Pass(), kHlo).changed);
  // XLA: NormalizeNonContractingDimsLhs.
  PassResult r = RunPass(Pass(true), kHlo);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[15,8]{1,0} reshape(%p0)", "f32[15,7]{1,0} dot(", "ROOT", "f32[3,5,7]{2,1,0} reshape("}))
      << r.text;
}

// XLA: NormalizeNonContractingDimsWithBatchDims.
TEST(DotDimensionNormalizerTest, EdgeCaseBatchAndManyNonContractingDims) {
  PassResult r = RunPass(Pass(true), R"(
ENTRY e {
  p0 = f32[2,3,4,5] parameter(0)
  p1 = f32[2,5,6,1] parameter(1)
  ROOT d = f32[2,3,4,6,1] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={3}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[2,12,6]{2,1,0} dot(", "ROOT", "f32[2,3,4,6,1]{4,3,2,1,0} reshape("})) << r.text;
}

}  // namespace
}  // namespace passlab
