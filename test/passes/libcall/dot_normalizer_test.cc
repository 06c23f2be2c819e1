// Tests follow xla/backends/gpu/transforms/dot_normalizer_test.cc (test
// names given); RunPass also checks the values before and after.
#include "passes/libcall/dot_normalizer.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

// XLA: DotWithoutContractingDims.
TEST(DotNormalizerTest, AddsDegenerateContractingDimension) {
  PassResult r = RunPass(std::make_unique<DotNormalizer>(), R"(
ENTRY e {
  p0 = f16[5,15]{1,0} parameter(0)
  p1 = f16[5,16,17]{2,1,0} parameter(1)
  ROOT r = f16[5,15,16,17]{3,2,1,0} dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f16[5,15,1]{2,1,0} bitcast(%p0)", "f16[5,16,17,1]{3,2,1,0} bitcast(%p1)", "ROOT",
                               "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                               "rhs_contracting_dims={3}"}))
      << r.text;
}

// XLA: DotWithContractingDims.
TEST(DotNormalizerTest, KeepsDotWithContractingDims) {
  EXPECT_FALSE(RunPass(std::make_unique<DotNormalizer>(), R"(
ENTRY e {
  p0 = f16[5,15,3]{2,1,0} parameter(0)
  p1 = f16[5,17,3]{2,1,0} parameter(1)
  ROOT r = f16[5,15,17]{2,1,0} dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
})").changed);
}

TEST(DotNormalizerTest, EdgeCaseOuterProductWithNonDefaultLayout) {
  PassResult r = RunPass(std::make_unique<DotNormalizer>(), R"(
ENTRY e {
  p0 = f32[3,2]{0,1} parameter(0)
  p1 = f32[4] parameter(1)
  ROOT r = f32[3,2,4] dot(p0, p1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[3,2,1]{2,0,1} bitcast(%p0)", "f32[4,1]{1,0} bitcast(%p1)",
                               "lhs_contracting_dims={2}, rhs_contracting_dims={1}"}))
      << r.text;
}

}  // namespace
}  // namespace passlab
