// An MLP classifier training step: inputs [batch, features] -> `depth` hidden
// dense layers of `width` units with ReLU -> logits [batch, classes];
// softmax cross-entropy; backward; SGD with momentum and weight decay.
// Entry parameters: weights and biases (W0 [features, width], b0, ...,
// W_out [width, classes], b_out), momentum buffers (same shapes), inputs,
// labels one-hot f32 [batch, classes]. Output: (loss, new parameters...,
// new momentum...).
#ifndef PASSLAB_MODELS_MLP_H_
#define PASSLAB_MODELS_MLP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab {

struct MlpConfig {
  int64_t batch = 64;
  int64_t features = 784;
  int64_t depth = 2;
  int64_t width = 256;
  int64_t classes = 10;
  PrimitiveType dtype = PrimitiveType::kF32;
  double learning_rate = 0.05;
};

absl::StatusOr<std::unique_ptr<HloModule>> BuildMlp(const MlpConfig& config);

}  // namespace passlab

#endif  // PASSLAB_MODELS_MLP_H_
