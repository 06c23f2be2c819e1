// Tests follow xla/hlo/transforms/simplifiers/dot_dimension_merger_test.cc
// (test names given); RunPass also checks the values before and after.
#include "passes/simplifiers/dot_dimension_merger.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

// XLA: MergeConsecutiveBatchDimensions.
TEST(DotDimensionMergerTest, MergesConsecutiveBatchDimensions) {
  PassResult r = RunPass(std::make_unique<DotDimensionMerger>(), R"(
ENTRY e {
  p0 = f32[3,2,4,5,2] parameter(0)
  p1 = f32[3,2,4,2,6] parameter(1)
  ROOT d = f32[2,4,5,6] dot(p0, p1), lhs_batch_dims={1,2}, lhs_contracting_dims={0,4}, rhs_batch_dims={1,2}, rhs_contracting_dims={0,3}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[3,8,5,2]{3,2,1,0} reshape(%p0)", "f32[3,8,2,6]{3,2,1,0} reshape(%p1)",
                               "f32[8,5,6]{2,1,0} dot(", "lhs_batch_dims={1}", "lhs_contracting_dims={0,3}",
                               "rhs_batch_dims={1}", "rhs_contracting_dims={0,2}", "ROOT",
                               "f32[2,4,5,6]{3,2,1,0} reshape("}))
      << r.text;
}

// XLA: MergeConsecutiveBatchDimensionsNonDefaultLayouts.
TEST(DotDimensionMergerTest, KeepsNonDefaultLayouts) {
  PassResult r = RunPass(std::make_unique<DotDimensionMerger>(), R"(
ENTRY e {
  p0 = f32[3,2,4,5,2]{4,0,3,2,1} parameter(0)
  p1 = f32[3,2,4,2,6]{3,0,4,2,1} parameter(1)
  ROOT d = f32[2,4,5,6]{3,1,0,2} dot(p0, p1), lhs_batch_dims={1,2}, lhs_contracting_dims={0,4}, rhs_batch_dims={1,2}, rhs_contracting_dims={0,3}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[3,8,5,2]{3,0,2,1} reshape(%p0)", "f32[3,8,2,6]{2,0,3,1} reshape(%p1)",
                               "f32[8,5,6]{2,0,1} dot(", "ROOT", "f32[2,4,5,6]{3,1,0,2} reshape("}))
      << r.text;
}

// XLA: SkipPhysicallyNonConsecutiveBatchDimensions, SkipUnsortedBatchDimensions,
// SkipLogicallyNonConsecutiveBatchDimensions.
TEST(DotDimensionMergerTest, SkipsBatchDimensionsThatDoNotMerge) {
  for (const char* hlo : {R"(
ENTRY e {
  p0 = f32[2,4,3,5]{3,1,2,0} parameter(0)
  p1 = f32[2,4,5,6] parameter(1)
  ROOT d = f32[2,4,3,6] dot(p0, p1), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
})",
                          R"(
ENTRY e {
  p0 = f32[4,2,3,5] parameter(0)
  p1 = f32[2,4,5,6] parameter(1)
  ROOT d = f32[2,4,3,6] dot(p0, p1), lhs_batch_dims={1,0}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
})",
                          R"(
ENTRY e {
  p0 = f32[2,3,4,5] parameter(0)
  p1 = f32[2,4,5,6] parameter(1)
  ROOT d = f32[2,4,3,6] dot(p0, p1), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
})"}) {
    EXPECT_FALSE(RunPass(std::make_unique<DotDimensionMerger>(), hlo).changed) << hlo;
  }
}

TEST(DotDimensionMergerTest, EdgeCaseThreeBatchDimensionsAndOneBatchDimension) {
  PassResult r = RunPass(std::make_unique<DotDimensionMerger>(), R"(
ENTRY e {
  p0 = f32[2,3,2,4] parameter(0)
  p1 = f32[2,3,2,4] parameter(1)
  ROOT d = f32[2,3,2] dot(p0, p1), lhs_batch_dims={0,1,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,1,2}, rhs_contracting_dims={3}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[12,4]{1,0} reshape(%p0)", "f32[12]{0} dot(", "ROOT"})) << r.text;
  EXPECT_FALSE(RunPass(std::make_unique<DotDimensionMerger>(), R"(
ENTRY e {
  p0 = f32[2,3,4] parameter(0)
  p1 = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,5] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})").changed);
}

}  // namespace
}  // namespace passlab
