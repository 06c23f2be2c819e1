// Named pipelines, assembled in XLA:GPU's order (seed 003, table 1) from the
// passes passlab has so far. Each ordering constraint is commented where the
// pipeline is built.
#ifndef PASSLAB_PASSES_PIPELINES_PIPELINES_H_
#define PASSLAB_PASSES_PIPELINES_PIPELINES_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/pass/hlo_pass_pipeline.h"

namespace passlab {

// "optimization" (alias "default"): XLA's first sub-pipeline with the
// "simplification" fixed point inside it.
std::unique_ptr<HloPassPipeline> BuildOptimizationPipeline();

std::vector<std::string> PipelineNames();
absl::StatusOr<std::unique_ptr<HloPassPipeline>> BuildNamedPipeline(std::string_view name);

}  // namespace passlab

#endif  // PASSLAB_PASSES_PIPELINES_PIPELINES_H_
