// Tests follow xla/backends/gpu/transforms/scatter_slice_simplifier_test.cc
// (test names given); RunPass also checks the values before and after.
#include "passes/simplifiers/scatter_slice_simplifier.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::string WithAdd(const std::string& entry) { return std::string(kAddF32Reducer) + entry; }

// XLA: Scatter1D.
TEST(ScatterSliceSimplifierTest, ShrinksSlicedScatter) {
  PassResult r = RunPass(std::make_unique<ScatterSliceSimplifier>(), WithAdd(R"(
ENTRY main {
  indices = s32[4,1] parameter(0)
  updates = f32[4,1] parameter(1)
  operands = f32[9] constant(0)
  scatter = f32[9] scatter(operands, indices, updates), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT slice = f32[8] slice(scatter), slice={[0:8]}
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[8]{0} slice(%operands), slice={[0:8]}", "ROOT", "f32[8]{0} scatter(", "NOT: f32[9]{0} scatter"}))
      << r.text;
}

// XLA: IntermediaryUsers, IntermediaryChain, ElementwiseSelect.
TEST(ScatterSliceSimplifierTest, RebuildsElementwiseUsers) {
  PassResult r = RunPass(std::make_unique<ScatterSliceSimplifier>(), WithAdd(R"(
ENTRY main {
  indices = s32[4,1] parameter(0)
  updates = f32[4,1] parameter(1)
  p = pred[9] parameter(2)
  operands = f32[9] constant(0)
  scatter = f32[9] scatter(operands, indices, updates), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  e0 = f32[9] abs(scatter)
  e1 = f32[9] exponential(e0)
  e2 = f32[9] add(e0, e1)
  s0 = f32[8] slice(e2), slice={[0:8]}
  sel = f32[9] select(p, scatter, operands)
  s1 = f32[8] slice(sel), slice={[0:8]}
  ROOT t = (f32[8], f32[8]) tuple(s0, s1)
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"f32[8]{0} scatter(", "f32[8]{0} abs(", "f32[8]{0} exponential(", "f32[8]{0} add(",
                               "pred[8]{0} slice(%p)", "f32[8]{0} select(", "NOT: f32[9]{0} abs"}))
      << r.text;
}

// XLA: ScatterMultiOutput, DiamondShape.
TEST(ScatterSliceSimplifierTest, ShrinksVariadicScatterThroughTupleElements) {
  PassResult r = RunPass(std::make_unique<ScatterSliceSimplifier>(), R"(
add2 {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = f32[] multiply(a1, b1)
  ROOT t = (f32[], f32[]) tuple(s0, s1)
}

ENTRY main {
  indices = s32[4,1] parameter(0)
  u0 = f32[4,1] parameter(1)
  u1 = f32[4,1] parameter(2)
  o0 = f32[9] constant(0)
  o1 = f32[9] constant(1)
  scatter = (f32[9], f32[9]) scatter(o0, o1, indices, u0, u1), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2
  g0 = f32[9] get-tuple-element(scatter), index=0
  g1 = f32[9] get-tuple-element(scatter), index=1
  c = f32[9] add(g0, g1)
  ROOT s = f32[8] slice(c), slice={[0:8]}
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"(f32[8]{0}, f32[8]{0}) scatter(", "ROOT", "f32[8]{0} add(", "NOT: f32[9]{0} get-tuple"}))
      << r.text;
}

// XLA: NotMatching: not a prefix, strided, the scatter itself used, slices
// that disagree, no slice at all, an updated dimension cut.
TEST(ScatterSliceSimplifierTest, KeepsScattersItCannotShrink) {
  const char* kScatter1D =
      "  indices = s32[4,1] parameter(0)\n"
      "  updates = f32[4,1] parameter(1)\n"
      "  operands = f32[9] constant(0)\n"
      "  scatter = f32[9] scatter(operands, indices, updates), update_window_dims={1}, inserted_window_dims={}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n";
  for (const char* root : {"ROOT s = f32[8] slice(scatter), slice={[1:9]}",
                           "ROOT s = f32[4] slice(scatter), slice={[0:8:2]}",
                           "s = f32[8] slice(scatter), slice={[0:8]}\n  ROOT t = (f32[9], f32[8]) tuple(scatter, s)",
                           "ROOT x = f32[9] exponential(scatter)"}) {
    std::string hlo = WithAdd(std::string("ENTRY main {\n") + kScatter1D + "  " + root + "\n}\n");
    EXPECT_FALSE(RunPass(std::make_unique<ScatterSliceSimplifier>(), hlo).changed) << hlo;
  }
  EXPECT_FALSE(RunPass(std::make_unique<ScatterSliceSimplifier>(), WithAdd(R"(
ENTRY main {
  indices = s32[10,1] parameter(0)
  updates = f32[10,1,8] parameter(1)
  operands = f32[20,8] constant(0)
  scatter = f32[20,8] scatter(operands, indices, updates), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT slice = f32[20,4] slice(scatter), slice={[0:20], [0:4]}
})")).changed);
}

}  // namespace
}  // namespace passlab
