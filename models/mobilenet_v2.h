// MobileNetV2 (Sandler et al. 2018, torchvision's layout): a 3x3 stride-2
// stem, 17 inverted residual blocks and a 1x1 head convolution, global
// average pooling and a linear classifier. An inverted residual block is a
// 1x1 expansion convolution (channels x t; absent when t = 1), a depthwise
// 3x3 convolution (feature_group_count = channels) with the block's stride,
// and a 1x1 linear projection; batch norm after each convolution, ReLU6
// after the first two; the input is added back when the stride is 1 and the
// channel count is unchanged. Stages (t, channels, blocks, stride):
// (1,16,1,1) (6,24,2,2) (6,32,3,2) (6,64,4,2) (6,96,3,1) (6,160,3,2)
// (6,320,1,1); channel counts are scaled by the width multiplier and rounded
// to multiples of 8 as torchvision's _make_divisible does (the head's 1280
// only grows, for multipliers above 1). torchvision's classifier dropout is
// left out (a training step here is deterministic).
//
// Training step: forward with batch-norm-training, softmax cross-entropy,
// backward (models/autodiff.h; the depthwise gradients are a depthwise
// backward-data and a batch-grouped backward-filter convolution), SGD with
// momentum and weight decay (torchvision's reference recipe: learning rate
// 0.045, momentum 0.9, weight decay 4e-5). Entry parameters, in order, as
// ResNet's (models/resnet.h): trainable parameters (per convolution: weight,
// then batch-norm scale and offset; last the classifier weight
// [1280, classes] and bias [classes]), one momentum buffer per trainable
// parameter, batch-norm running statistics (mean then variance, per batch
// norm), images [B, H, W, 3] (NHWC) or [B, 3, H, W] (NCHW), labels one-hot
// f32 [B, classes]. Output: (loss f32[], new parameters..., new momentum...,
// new running statistics...).
//
// Weights are HWIO (NHWC; depthwise [3, 3, 1, C]) or OIHW (NCHW; depthwise
// [C, 1, 3, 3]), without bias: with 1000 classes and multiplier 1 there are
// 3,504,872 trainable parameters, torchvision's mobilenet_v2 count. bf16:
// activations, weights and momentum bf16, batch norm in f32; f64 (for
// gradient checks) keeps everything in f64.
#ifndef PASSLAB_MODELS_MOBILENET_V2_H_
#define PASSLAB_MODELS_MOBILENET_V2_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"
#include "models/model_options.h"

namespace passlab {

struct MobileNetV2Config {
  int64_t batch = 8;
  int64_t image_size = 64;
  int64_t classes = 1000;
  double width_multiplier = 1.0;
  PrimitiveType dtype = PrimitiveType::kF32;
  ImageLayout layout = ImageLayout::kNhwc;
  double learning_rate = 0.045;
  double momentum = 0.9;
  double weight_decay = 4e-5;
  double bn_momentum = 0.1;
  float bn_epsilon = 1e-5f;
};

absl::StatusOr<std::unique_ptr<HloModule>> BuildMobileNetV2(const MobileNetV2Config& config);

// Trainable parameter count of the configuration (no module built).
int64_t MobileNetV2ParameterCount(const MobileNetV2Config& config);

}  // namespace passlab

#endif  // PASSLAB_MODELS_MOBILENET_V2_H_
