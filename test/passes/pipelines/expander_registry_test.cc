// The registry and the gpu pipeline know issue 7's remaining expanders,
// simplifiers and solver rewriters under their XLA names, in XLA:GPU's
// sub-pipelines, and the pipeline runs them on a module that needs each.
#include <gtest/gtest.h>

#include "core/ir/str_util.h"
#include "passes/pipelines/gpu_2021_pipeline.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

struct Expected {
  std::string_view name;
  std::string_view pipeline_path;
  bool in_fixed_point;
};

constexpr Expected kPasses[] = {
    {"stable-sort-expander", "gpu-2021/optimization", false},
    {"select_and_scatter_expander", "gpu-2021/optimization", false},
    {"convolution_4d_expander", "gpu-2021/optimization", false},
    {"conditional-canonicalizer", "gpu-2021/optimization", false},
    {"scatter_simplifier", "gpu-2021/optimization", false},
    {"slice-sinker", "gpu-2021/optimization/simplification", true},
    {"convert-mover", "gpu-2021/optimization/simplification-2", true},
    {"gpusolver-rewriter", "gpu-2021/conv_canonicalization", false},
    {"triangular-solve-rewriter", "gpu-2021/post-layout_assignment", false},
    {"dot_dimension_sorter", "gpu-2021/post-layout_assignment", false},
    {"cudnn_pad_for_convolutions", "gpu-2021/post-layout_assignment", false},
    {"rng-expander", "gpu-2021/optimization", false},
    {"qr_expander", "gpu-2021/optimization", false},
    {"cholesky_expander", "gpu-2021/conv_canonicalization", false},
    {"topk-decomposer", "gpu-2021/optimization", false},
    {"stochastic_convert_decomposer", "gpu-2021/optimization", false},
    {"bitcast_dtypes_expander", "gpu-2021/optimization/simplification", true},
};

TEST(ExpanderRegistryTest, EntriesCreatePassesWithTheirNamesAndAreOptional) {
  for (const Expected& e : kPasses) {
    const PassRegistryEntry* entry = FindRegisteredPass(e.name);
    ASSERT_NE(entry, nullptr) << e.name;
    EXPECT_EQ(entry->factory()->name(), e.name);
    EXPECT_FALSE(entry->required) << e.name;
  }
}

TEST(ExpanderRegistryTest, GpuPipelineRunsThemWhereXlaDoes) {
  std::vector<PassOccurrence> occ;
  gpu2021::BuildGpuPipeline()->EnumerateOccurrences("", false, occ);
  for (const Expected& e : kPasses) {
    const PassOccurrence* found = nullptr;
    for (const PassOccurrence& o : occ) {
      if (o.pass_name == e.name) found = &o;
    }
    ASSERT_NE(found, nullptr) << e.name;
    EXPECT_EQ(found->pipeline_path, e.pipeline_path) << e.name;
    EXPECT_EQ(found->in_fixed_point, e.in_fixed_point) << e.name;
  }
}

TEST(ExpanderRegistryTest, GpuPipelineExpandsStableSortAndSelectAndScatter) {
  auto m = ParseHloModule(R"(
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,6] parameter(0)
  dy = f32[2,3] parameter(1)
  zero = f32[] constant(0)
  dx = f32[4,6] select-and-scatter(x, dy, zero), window={size=2x2 stride=2x2}, select=ge, scatter=add
  ROOT s = f32[4,6] sort(dx), dimensions={1}, is_stable=true, to_apply=lt
})", "gpu.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 5);
  absl::StatusOr<Literal> before = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(before.ok()) << before.status().message();
  absl::StatusOr<bool> changed = gpu2021::BuildGpuPipeline()->Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  PrintOptions options;
  options.print_metadata = false;
  std::string text = PrintModule(**m, options);
  EXPECT_TRUE(Matches(text, {"NOT:select-and-scatter(", "NOT:is_stable=true"})) << text;
  absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(CompareLiterals(*before, *after, {.abs = 1e-5, .rel = 1e-5}).ok());
}

}  // namespace
}  // namespace passlab
