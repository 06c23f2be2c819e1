// A transformer encoder block training step (pre-layer-norm): 
//   h = x + MultiHeadAttention(LayerNorm(x)),  y = h + MLP(LayerNorm(h)),
// with the MLP dense(4D) -> GELU (seed 000's tanh form) -> dense(D); loss =
// mean squared error of y against a target; backward; SGD with momentum.
// Attention is batched dots over [batch, heads] with a softmax over keys.
// Entry parameters: ln1.{scale,offset} [D], {q,k,v,o}.{weight [D, D], bias [D]},
// ln2.{scale,offset}, mlp.{fc1.weight [D, 4D], fc1.bias, fc2.weight [4D, D],
// fc2.bias}, their momentum buffers, inputs [B, S, D], targets [B, S, D].
// Output: (loss, new parameters..., new momentum...).
#ifndef PASSLAB_MODELS_TRANSFORMER_H_
#define PASSLAB_MODELS_TRANSFORMER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab {

struct TransformerConfig {
  int64_t batch = 8;
  int64_t seq_len = 128;
  int64_t width = 256;  // model dimension D
  int64_t heads = 4;
  PrimitiveType dtype = PrimitiveType::kF32;
  double learning_rate = 0.01;
};

absl::StatusOr<std::unique_ptr<HloModule>> BuildTransformerBlock(const TransformerConfig& config);

}  // namespace passlab

#endif  // PASSLAB_MODELS_TRANSFORMER_H_
