// Layers shared by the models: dense layers, activations, layer norm and the
// losses (softmax cross-entropy, mean squared error), each built from plain
// HLO ops through HloBuilder so that autodiff can differentiate them. The
// optimizers are in models/optimizer.h.
#ifndef PASSLAB_MODELS_LAYERS_H_
#define PASSLAB_MODELS_LAYERS_H_

#include <string>
#include <vector>

#include "models/hlo_builder.h"

namespace passlab {

// x[..., in] . w[in, out] + broadcast(bias[out]).
Op Dense(HloBuilder& b, Op x, Op w, Op bias);
// max(x, 0).
Op Relu(HloBuilder& b, Op x);
// min(max(x, 0), 6) (MobileNet's activation; the gradient passes where
// 0 <= x <= 6).
Op Relu6(HloBuilder& b, Op x);
// The tanh approximation of GELU with seed 000's constants:
// x * 0.5 * (1 + tanh(0.79785 * (x + 0.044708 x^3))).
Op Gelu(HloBuilder& b, Op x);
// Softmax over the last dimension (shifted by the row maximum).
Op Softmax(HloBuilder& b, Op x);
// Layer norm over the last dimension with scale and offset [D].
Op LayerNorm(HloBuilder& b, Op x, Op gamma, Op beta, double epsilon);
// Mean over the batch of -sum(labels * log_softmax(logits)); logits [B, C]
// (converted to f32; f64 stays f64), labels one-hot f32 [B, C]. Returns an
// f32 (f64) scalar.
Op SoftmaxCrossEntropy(HloBuilder& b, Op logits, Op labels);
// Mean of (x - y)^2 over all elements, as an x-typed scalar.
Op MeanSquaredError(HloBuilder& b, Op x, Op y);

// Number of elements of all shapes (trainable parameter counts).
int64_t ElementCount(const std::vector<Op>& ops);

}  // namespace passlab

#endif  // PASSLAB_MODELS_LAYERS_H_
