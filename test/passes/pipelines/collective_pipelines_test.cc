// The collective passes in the pipelines: registered, placed in XLA's order
// in gpu-2021, and without effect on single-device modules.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "passes/pipelines/gpu_2021_pipeline.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(CollectivePipelinesTest, RegisteredAndInXlaOrder) {
  for (const char* name : {"all-gather-combiner", "all-reduce-combiner", "all-reduce-folder", "all-reduce-simplifier",
                           "async-collective-creator", "reduce-scatter-creator"}) {
    EXPECT_NE(FindRegisteredPass(name), nullptr) << name;
  }
  std::unique_ptr<HloPassPipeline> gpu = gpu2021::BuildGpuPipeline();
  std::vector<std::string> paths;
  for (const PassOccurrence& o : gpu->Occurrences()) paths.push_back(o.pipeline_path + "/" + o.pass_name);
  auto position = [&](const std::string& needle) -> int64_t {
    for (size_t i = 0; i < paths.size(); ++i) {
      if (paths[i].find(needle) != std::string::npos) return static_cast<int64_t>(i);
    }
    return -1;
  };
  int64_t folder = position("collective-optimizations/all-reduce-folder");
  int64_t creator = position("collective-optimizations/reduce-scatter-creator");
  int64_t horizontal = position("horizontal-fusion/");
  int64_t combiner = position("post-fusion optimization/all-reduce-combiner");
  int64_t async = position("post-fusion optimization/async-collective-creator");
  ASSERT_GE(folder, 0);
  EXPECT_GT(folder, position("gpu-2021/optimization/"));
  EXPECT_LT(folder, creator);
  EXPECT_LT(creator, position("conv_canonicalization/"));
  EXPECT_GT(combiner, horizontal);
  EXPECT_GT(async, combiner);
}

TEST(CollectivePipelinesTest, SingleDeviceModelsAreUnchanged) {
  // No collectives: every collective pass leaves the module alone.
  const std::string hlo = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
})";
  for (auto build : {BuildCollectiveOptimizationsPipeline, BuildPostFusionOptimizationPipeline}) {
    std::unique_ptr<HloPassPipeline> pipeline = build();
    auto m = ParseHloModule(hlo);
    ASSERT_TRUE(m.ok());
    absl::StatusOr<bool> changed = pipeline->Run(**m);
    ASSERT_TRUE(changed.ok()) << changed.status().message();
    EXPECT_FALSE(*changed) << pipeline->name();
  }
}

}  // namespace
}  // namespace passlab
