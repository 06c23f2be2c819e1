// The ResNet family (He et al. 2015, torchvision's v1.5 layout: stride in the
// 3x3 convolution of bottleneck blocks): ResNet-18/34 with basic blocks,
// ResNet-50/101/152 with bottleneck blocks.
//
// Training step (the default): forward with batch-norm-training, softmax
// cross-entropy, backward (models/autodiff.h), SGD with momentum and weight
// decay. Entry parameters, in order:
//   trainable parameters (per convolution: weight, then batch-norm scale and
//   offset; last the classifier weight [C, classes] and bias [classes]),
//   one momentum buffer per trainable parameter (same shapes),
//   batch-norm running statistics (mean then variance, per batch norm, f32),
//   images [B, H, W, 3] (NHWC) or [B, 3, H, W] (NCHW), labels one-hot f32
//   [B, classes].
// Output: (loss f32[], new parameters..., new momentum..., new running
// statistics...). Running statistics: (1 - 0.1) old + 0.1 batch statistic
// (the batch variance is the biased one batch-norm-training returns).
//
// Inference variant: parameters, running statistics, images -> logits
// f32[B, classes], with batch-norm-inference.
//
// Weights are HWIO (NHWC) or OIHW (NCHW), without bias (torchvision's count:
// ResNet-50 with 1000 classes has 25,557,032 trainable parameters). bf16:
// activations, weights and momentum bf16; batch norm runs in f32 (converts
// around it); the loss is f32. f64 (for gradient checks) keeps everything,
// batch norm included, in f64.
#ifndef PASSLAB_MODELS_RESNET_H_
#define PASSLAB_MODELS_RESNET_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"
#include "models/model_options.h"

namespace passlab {

struct ResNetConfig {
  int depth = 50;  // 18, 34, 50, 101, 152
  int64_t batch = 8;
  int64_t image_size = 64;
  int64_t classes = 1000;
  int64_t base_width = 64;  // width multiplier = base_width / 64
  PrimitiveType dtype = PrimitiveType::kF32;
  ImageLayout layout = ImageLayout::kNhwc;
  bool inference = false;
  double learning_rate = 0.1;
  double momentum = 0.9;
  double weight_decay = 1e-4;
  double bn_momentum = 0.1;
  float bn_epsilon = 1e-5f;
};

absl::StatusOr<std::unique_ptr<HloModule>> BuildResNet(const ResNetConfig& config);

// Trainable parameter count of the configuration (no module built).
absl::StatusOr<int64_t> ResNetParameterCount(const ResNetConfig& config);

}  // namespace passlab

#endif  // PASSLAB_MODELS_RESNET_H_
