// The registry and the optimization pipeline know the gather/scatter/rng
// passes under their XLA names.
#include <gtest/gtest.h>

#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"

namespace passlab {
namespace {

TEST(IndexingRegistryTest, EntriesCreatePassesWithTheirNames) {
  for (std::string_view name : {"scatter_expander", "gpu_scatter_expander"}) {
    const PassRegistryEntry* e = FindRegisteredPass(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->factory()->name(), name);
  }
}

TEST(IndexingRegistryTest, RegistryStaysSorted) {
  const auto& r = PassRegistry();
  for (size_t i = 1; i < r.size(); ++i) EXPECT_LT(r[i - 1].name, r[i].name);
}

TEST(IndexingRegistryTest, OptimizationPipelineRunsThem) {
  std::vector<PassOccurrence> occ;
  BuildOptimizationPipeline()->EnumerateOccurrences("", false, occ);
  auto find = [&](std::string_view name) {
    for (const PassOccurrence& o : occ) {
      if (o.pass_name == name) return &o;
    }
    return static_cast<const PassOccurrence*>(nullptr);
  };
  ASSERT_NE(find("gpu_scatter_expander"), nullptr);
  EXPECT_FALSE(find("gpu_scatter_expander")->in_fixed_point);
  ASSERT_NE(find("scatter_expander"), nullptr);
  EXPECT_TRUE(find("scatter_expander")->in_fixed_point);
}

}  // namespace
}  // namespace passlab
