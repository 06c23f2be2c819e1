// The model table: one row per model name (what `passlab model --list`
// prints and the ablation runner and GUI read): description, the options it
// accepts, and its builder. Names: resnet18, resnet34, resnet50, resnet101,
// resnet152 (training steps; `inference` = true, or the names with an
// "-inference" suffix, build the forward-only variant), mobilenet_v2,
// laplace_pinn, gelu, mlp, transformer_block, embedding.
#ifndef PASSLAB_MODELS_MODEL_REGISTRY_H_
#define PASSLAB_MODELS_MODEL_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"
#include "models/model_options.h"

namespace passlab {

struct ModelInfo {
  std::string name;
  std::string description;
  // Option names it accepts: "batch", "image-size", "classes", "dtype",
  // "depth", "width", "layout", "seq-len", "heads", "vocab", "inference".
  std::vector<std::string> options;
  std::string defaults;  // human-readable default configuration
  std::function<absl::StatusOr<std::unique_ptr<HloModule>>(const ModelOptions&)> build;
};

// Every model, sorted by name.
const std::vector<ModelInfo>& ModelRegistry();
const ModelInfo* FindModel(std::string_view name);

// Builds a model by name; an unknown name or an option the model does not
// take is an error that lists what is allowed.
absl::StatusOr<std::unique_ptr<HloModule>> BuildModel(std::string_view name, const ModelOptions& options);

// The names of the options that are set (as in ModelInfo::options).
std::vector<std::string> SetOptionNames(const ModelOptions& options);

}  // namespace passlab

#endif  // PASSLAB_MODELS_MODEL_REGISTRY_H_
