// The registry and the optimization pipeline know the gather/scatter/rng
// passes under their XLA names.
#include <gtest/gtest.h>

#include "passes/pipelines/gpu_2021_pipeline.h"
#include "passes/pipelines/pipelines.h"
#include "test/passes/pass_test_util.h"
#include "passes/registry.h"

namespace passlab {
namespace {

TEST(IndexingRegistryTest, EntriesCreatePassesWithTheirNames) {
  for (std::string_view name : {"scatter_expander", "gpu_scatter_expander", "gather_expander", "gather_simplifier",
                                 "rng-bit-generator-expander", "float-normalization-bf16", "dot-merger",
                                 "reduction-degenerate-dim-remover", "reduction-dimension-grouper",
                                 "reduction-layout-normalizer", "reduction-splitter", "tree-reduction-rewriter"}) {
    const PassRegistryEntry* e = FindRegisteredPass(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->factory()->name(), name);
  }
}

TEST(IndexingRegistryTest, RegistryStaysSorted) {
  const auto& r = PassRegistry();
  for (size_t i = 1; i < r.size(); ++i) EXPECT_LT(r[i - 1].name, r[i].name);
}

TEST(IndexingRegistryTest, GpuPipelineRunsThem) {
  std::vector<PassOccurrence> occ;
  gpu2021::BuildGpuPipeline()->EnumerateOccurrences("", false, occ);
  auto find = [&](std::string_view name) {
    for (const PassOccurrence& o : occ) {
      if (o.pass_name == name) return &o;
    }
    return static_cast<const PassOccurrence*>(nullptr);
  };
  ASSERT_NE(find("gpu_scatter_expander"), nullptr);
  EXPECT_FALSE(find("gpu_scatter_expander")->in_fixed_point);
  ASSERT_NE(find("rng-bit-generator-expander"), nullptr);
  for (std::string_view name : {"reduction-degenerate-dim-remover", "reduction-layout-normalizer",
                                "reduction-dimension-grouper", "reduction-splitter", "tree-reduction-rewriter"}) {
    EXPECT_NE(find(name), nullptr) << name;
  }
  ASSERT_NE(find("dot-merger"), nullptr);
  EXPECT_TRUE(find("dot-merger")->in_fixed_point);
  ASSERT_NE(find("float-normalization-bf16"), nullptr);
  EXPECT_FALSE(find("float-normalization-bf16")->in_fixed_point);
  ASSERT_NE(find("gather_simplifier"), nullptr);
  EXPECT_FALSE(find("gather_simplifier")->in_fixed_point);
  ASSERT_NE(find("gather_expander"), nullptr);
  EXPECT_TRUE(find("gather_expander")->in_fixed_point);
  ASSERT_NE(find("scatter_expander"), nullptr);
  EXPECT_TRUE(find("scatter_expander")->in_fixed_point);
}

TEST(IndexingRegistryTest, PipelineTurnsOneIndexScatterAndGatherIntoSlices) {
  auto m = ParseHloModule(R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  op = f32[6,3] parameter(0)
  i = s32[1] parameter(1)
  upd = f32[1,3] parameter(2)
  s = f32[6,3] scatter(op, i, upd), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT g = f32[3] gather(s, i), offset_dims={0}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=0, slice_sizes={1,3}
})", "pipeline.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 7);
  absl::StatusOr<Literal> before = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(before.ok()) << before.status().message();
  absl::StatusOr<bool> changed = BuildOptimizationPipeline()->Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  PrintOptions options;
  options.print_metadata = false;
  std::string text = PrintModule(**m, options);
  EXPECT_TRUE(Matches(text, {"NOT:scatter(", "NOT:gather(", "NOT:while(", "dynamic-update-slice(", "dynamic-slice("}))
      << text;
  absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(CompareLiterals(*before, *after, {.abs = 1e-5, .rel = 1e-5}).ok());
}

TEST(IndexingRegistryTest, PipelineMergesDotsAndConverges) {
  auto m = ParseHloModule(R"(
ENTRY e {
  x = f32[8,6] parameter(0)
  w0 = f32[6,3] parameter(1)
  w1 = f32[6,5] parameter(2)
  d0 = f32[8,3] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[8,5] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t0 = f32[8,3] tanh(d0)
  ROOT t = (f32[8,3], f32[8,5]) tuple(t0, d1)
})", "dots.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 11);
  absl::StatusOr<Literal> before = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(before.ok());
  absl::StatusOr<bool> changed = BuildOptimizationPipeline()->Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  int64_t dots = 0;
  for (HloInstruction* i : (*m)->entry_computation()->instructions()) dots += i->opcode() == HloOpcode::kDot;
  EXPECT_EQ(dots, 1);
  absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(CompareLiterals(*before, *after, {.abs = 1e-5, .rel = 1e-5}).ok());
}

TEST(IndexingRegistryTest, PipelineExpandsTheRngGenerator) {
  auto m = ParseHloModule(R"(
ENTRY e {
  s = u64[2] parameter(0)
  r = (u64[2], u32[5]) rng-bit-generator(s), algorithm=rng_philox
  ROOT b = u32[5] get-tuple-element(r), index=1
})", "rng.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 5);
  absl::StatusOr<Literal> before = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(before.ok());
  absl::StatusOr<bool> changed = BuildOptimizationPipeline()->Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  PrintOptions options;
  options.print_metadata = false;
  std::string text = PrintModule(**m, options);
  // Expanded before call-inliner runs, so the generated computation is
  // inlined: no call and no rng-bit-generator remain.
  EXPECT_TRUE(Matches(text, {"xor(", "NOT:rng-bit-generator(", "NOT: call("})) << text;
  absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(CompareLiterals(*before, *after, {.abs = 0, .rel = 0}).ok());
}

}  // namespace
}  // namespace passlab
