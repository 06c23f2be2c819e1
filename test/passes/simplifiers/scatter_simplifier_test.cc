#include "core/ir/str_util.h"
#include "passes/simplifiers/scatter_simplifier.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

TEST(ScatterSimplifierTest, CanonicalizesRowScatter) {
  PassResult r = RunPass(std::make_unique<ScatterSimplifier>(), StrCat(kAddF32Reducer, R"(
ENTRY e {
  op = f32[5,3] parameter(0)
  i = s32[4] parameter(1)
  upd = f32[4,3] parameter(2)
  ROOT s = f32[5,3] scatter(op, i, upd), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[4,1]{1,0} reshape(%i)", "f32[4,1,3]{2,1,0} reshape(%upd)", "scatter(",
                               "update_window_dims={1,2}", "inserted_window_dims={}", "scatter_dims_to_operand_dims={0}",
                               "index_vector_dim=1"}))
      << r.text;
  for (HloInstruction* inst : r.module->entry_computation()->instructions()) {
    if (inst->opcode() == HloOpcode::kScatter) {
      EXPECT_TRUE(ScatterSimplifier::IsSimplifiedScatter(*inst));
    }
  }
}

TEST(ScatterSimplifierTest, EdgeCaseColumnScatterWithBatchOfIndicesAndTwoOperands) {
  // Scatters into dimension 1, the indices have two batch dimensions and
  // index_vector_dim first, and the scatter is variadic. As XLA's
  // scatter_simplifier.cc: the operands and scatter_dims_to_operand_dims
  // stay; the indices' vector dimension moves last and the updates'
  // scatter dimensions first, each flattened, and the inserted dimension
  // becomes a size-1 window dimension.
  PassResult r = RunPass(std::make_unique<ScatterSimplifier>(), R"(
add2 {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  m = s32[] maximum(b, d)
  ROOT t = (f32[], s32[]) tuple(s, m)
}
ENTRY e {
  op0 = f32[3,6] parameter(0)
  op1 = s32[3,6] parameter(1)
  i = s32[1,2,2] parameter(2)
  u0 = f32[3,2,2] parameter(3)
  u1 = s32[3,2,2] parameter(4)
  ROOT s = (f32[3,6], s32[3,6]) scatter(op0, op1, i, u0, u1), update_window_dims={0},
      inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=0, to_apply=add2
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[2,2,1]{2,1,0} transpose(%i), dimensions={1,2,0}", "s32[4,1]{1,0} reshape(",
                               "f32[2,2,3]{2,1,0} transpose(%u0), dimensions={1,2,0}", "f32[4,3]{1,0} reshape(",
                               "f32[4,3,1]{2,1,0} reshape(", "scatter(%op0, %op1, ", "update_window_dims={1,2}",
                               "inserted_window_dims={}", "scatter_dims_to_operand_dims={1}", "index_vector_dim=1",
                               "NOT:transpose(%op0"}))
      << r.text;
}

// XLA's scatter_simplifier_test.cc,
// DoesNotTransformsUpdatesAndOperandUsingScatterDims: one scatter dimension
// before sorted window dimensions, the index vector last and nothing
// inserted is simplified, whatever scatter_dims_to_operand_dims is.
TEST(ScatterSimplifierTest, LeavesSimplifiedScatterWithAnyDimensionMap) {
  EXPECT_FALSE(RunPass(std::make_unique<ScatterSimplifier>(), R"(
scatter_computation {
  p0 = f32[] parameter(0)
  ROOT result = f32[] parameter(1)
}
ENTRY kernel_entry {
  operand = f32[3,4,5] parameter(0)
  indices = s32[2,2] parameter(1)
  update = f32[2,1,1,3] parameter(2)
  ROOT scatter = f32[3,4,5] scatter(operand, indices, update), to_apply=scatter_computation,
      update_window_dims={1,2,3}, inserted_window_dims={}, scatter_dims_to_operand_dims={2,0}, index_vector_dim=1
})").changed);
}

// XLA's ZeroDimScatterIndices: a single index vector ([2], index_vector_dim
// 0) gets a leading 1, the updates a leading scatter dimension.
TEST(ScatterSimplifierTest, SingleIndexVectorGetsABatchDimension) {
  PassResult r = RunPass(std::make_unique<ScatterSimplifier>(), R"(
scatter_computation {
  p0 = f32[] parameter(0)
  ROOT result = f32[] parameter(1)
}
ENTRY kernel_entry {
  operand = f32[4,4] parameter(0)
  indices = s32[2] parameter(1)
  update = f32[3,3] parameter(2)
  ROOT scatter = f32[4,4]{1,0} scatter(operand, indices, update), update_window_dims={0,1},
      inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=scatter_computation
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[1,2]{1,0} reshape(%indices)", "f32[1,3,3]{2,1,0} reshape(%update)", "scatter(",
                               "update_window_dims={1,2}"}))
      << r.text;
}

// A scatter into a scalar is its computation applied once (XLA inlines a
// call of it).
TEST(ScatterSimplifierTest, EdgeCaseScalarOperandBecomesTheComputation) {
  PassResult r = RunPass(std::make_unique<ScatterSimplifier>(), StrCat(kAddF32Reducer, R"(
ENTRY e {
  op = f32[] parameter(0)
  i = s32[0] parameter(1)
  upd = f32[] parameter(2)
  ROOT s = f32[] scatter(op, i, upd), update_window_dims={}, inserted_window_dims={},
      scatter_dims_to_operand_dims={}, index_vector_dim=0, to_apply=add
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ROOT", "f32[] add(%op, %upd)", "NOT:scatter("})) << r.text;
}

TEST(ScatterSimplifierTest, LeavesCanonicalScatter) {
  EXPECT_FALSE(RunPass(std::make_unique<ScatterSimplifier>(), StrCat(kAddF32Reducer, R"(
ENTRY e {
  op = f32[5,3] parameter(0)
  i = s32[4,1] parameter(1)
  upd = f32[4,1,3] parameter(2)
  ROOT s = f32[5,3] scatter(op, i, upd), update_window_dims={1,2}, inserted_window_dims={},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})")).changed);
}

TEST(ScatterSimplifierTest, CorpusScattersComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" scatter(", [] { return std::make_unique<ScatterSimplifier>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(stats.changed, 0);
  EXPECT_GT(stats.evaluated, 0);
}

}  // namespace
}  // namespace passlab
