// ModelOptions: the one option struct every model builder takes (the CLI's
// `passlab model NAME --batch N ...` fills it). Each model reads the fields it
// uses; model_registry.cc says which ones per model and what the defaults are.
#ifndef PASSLAB_MODELS_MODEL_OPTIONS_H_
#define PASSLAB_MODELS_MODEL_OPTIONS_H_

#include <cstdint>
#include <optional>

#include "core/ir/primitive_type.h"

namespace passlab {

enum class ImageLayout { kNhwc, kNchw };

// Unset fields take the model's default.
struct ModelOptions {
  std::optional<int64_t> batch;
  std::optional<int64_t> image_size;  // ResNet, MobileNetV2: H = W; PINN: grid points per side
  std::optional<int64_t> classes;
  std::optional<PrimitiveType> dtype;  // f32, bf16 (f64 for gradient checks)
  std::optional<int64_t> depth;        // hidden layers (MLP, PINN); ResNet: 18/34/50/101/152
  std::optional<int64_t> width;        // hidden width; ResNet: base width (64); MobileNetV2: stem channels (32 = x1.0)
  std::optional<ImageLayout> layout;
  std::optional<int64_t> seq_len;      // transformer, embedding, GELU
  std::optional<int64_t> heads;        // transformer
  std::optional<int64_t> vocab;        // embedding
  bool inference = false;              // ResNet: forward only, batch-norm-inference
};

}  // namespace passlab

#endif  // PASSLAB_MODELS_MODEL_OPTIONS_H_
