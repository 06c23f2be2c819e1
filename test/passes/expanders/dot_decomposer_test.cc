#include "passes/expanders/dot_decomposer.h"

#include "test/passes/pass_test_util.h"

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
