// A small gather/scatter-heavy model: token ids [batch, seq_len] (s32) look
// up rows of an embedding table [vocab, width] (gather), are averaged over the
// sequence, and a dense layer classifies them; softmax cross-entropy; the
// table's gradient is a scatter-add of the row gradients (repeated ids
// accumulate); SGD with momentum.
// Entry parameters: embedding.table [vocab, width], fc.weight [width,
// classes], fc.bias [classes], their momentum buffers, ids s32[batch,
// seq_len], labels one-hot f32 [batch, classes].
// Output: (loss, new parameters..., new momentum...).
#ifndef PASSLAB_MODELS_EMBEDDING_H_
#define PASSLAB_MODELS_EMBEDDING_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab {

struct EmbeddingConfig {
  int64_t batch = 32;
  int64_t seq_len = 64;
  int64_t vocab = 10000;
  int64_t width = 64;
  int64_t classes = 10;
  PrimitiveType dtype = PrimitiveType::kF32;
  double learning_rate = 0.1;
};

absl::StatusOr<std::unique_ptr<HloModule>> BuildEmbeddingModel(const EmbeddingConfig& config);

}  // namespace passlab

#endif  // PASSLAB_MODELS_EMBEDDING_H_
