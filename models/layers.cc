#include "models/layers.h"

namespace passlab {

Op Dense(HloBuilder& b, Op x, Op w, Op bias) {
  HloBuilder::ScopedOpType type(b, "Dense");
  Op y = b.MatMul(x, w);
  if (y == nullptr || bias == nullptr) return y;
  return b.Add(y, b.Broadcast(bias, y->shape().dimensions(), {y->shape().rank() - 1}));
}

Op Relu(HloBuilder& b, Op x) {
  HloBuilder::ScopedOpType type(b, "Relu");
  if (x == nullptr) return b.Max(x, x);
  return b.Max(x, b.Full(x->shape(), 0));
}

Op Relu6(HloBuilder& b, Op x) {
  HloBuilder::ScopedOpType type(b, "Relu6");
  if (x == nullptr) return b.Max(x, x);
  Op positive = b.Max(x, b.Full(x->shape(), 0));
  return b.Binary(HloOpcode::kMinimum, positive, b.Full(x->shape(), 6));
}

Op Gelu(HloBuilder& b, Op x) {
  HloBuilder::ScopedOpType type(b, "Gelu");
  if (x == nullptr) return b.Mul(x, x);
  Op cube = b.Mul(b.Mul(x, x), x);
  Op inner = b.Mul(b.Add(x, b.MulScalar(cube, 0.044708)), b.Full(x->shape(), 0.79785));
  Op half = b.Mul(b.AddScalar(b.Tanh(inner), 1.0), b.Full(x->shape(), 0.5));
  return b.Mul(x, half);
}

Op Softmax(HloBuilder& b, Op x) {
  HloBuilder::ScopedOpType type(b, "Softmax");
  if (x == nullptr) return b.Exp(x);
  int64_t last = x->shape().rank() - 1;
  std::vector<int64_t> rows;
  for (int64_t d = 0; d < last; ++d) rows.push_back(d);
  const std::vector<int64_t>& dims = x->shape().dimensions();
  Op shifted = b.Sub(x, b.Broadcast(b.ReduceMax(x, {last}), dims, rows));
  Op e = b.Exp(shifted);
  return b.Div(e, b.Broadcast(b.ReduceSum(e, {last}), dims, rows));
}

Op LayerNorm(HloBuilder& b, Op x, Op gamma, Op beta, double epsilon) {
  HloBuilder::ScopedOpType type(b, "LayerNorm");
  if (x == nullptr) return b.Add(x, x);
  int64_t last = x->shape().rank() - 1;
  double n = static_cast<double>(x->shape().dimensions(last));
  std::vector<int64_t> rows;
  for (int64_t d = 0; d < last; ++d) rows.push_back(d);
  const std::vector<int64_t>& dims = x->shape().dimensions();
  Op mean = b.MulScalar(b.ReduceSum(x, {last}), 1.0 / n);
  Op centered = b.Sub(x, b.Broadcast(mean, dims, rows));
  Op var = b.MulScalar(b.ReduceSum(b.Mul(centered, centered), {last}), 1.0 / n);
  Op inv = b.Rsqrt(b.AddScalar(var, epsilon));
  Op normed = b.Mul(centered, b.Broadcast(inv, dims, rows));
  return b.Add(b.Mul(normed, b.Broadcast(gamma, dims, {last})), b.Broadcast(beta, dims, {last}));
}

Op SoftmaxCrossEntropy(HloBuilder& b, Op logits, Op labels) {
  HloBuilder::ScopedName scope(b, "loss");
  HloBuilder::ScopedOpType type(b, "SoftmaxCrossEntropyWithLogits");
  if (logits == nullptr || labels == nullptr) return b.Add(logits, labels);
  // f32 (or f64 for f64 models: gradient checks need the precision).
  PrimitiveType t = logits->shape().element_type() == PrimitiveType::kF64 ? PrimitiveType::kF64 : PrimitiveType::kF32;
  Op x = b.Convert(logits, t);
  labels = b.Convert(labels, t);
  const std::vector<int64_t>& dims = x->shape().dimensions();
  Op shifted = b.Sub(x, b.Broadcast(b.ReduceMax(x, {1}), dims, {0}));
  Op lse = b.Log(b.ReduceSum(b.Exp(shifted), {1}));
  Op log_probs = b.Sub(shifted, b.Broadcast(lse, dims, {0}));
  Op total = b.ReduceSum(b.Mul(labels, log_probs), {0, 1});
  return b.MulScalar(total, -1.0 / static_cast<double>(dims[0]));
}

Op MeanSquaredError(HloBuilder& b, Op x, Op y) {
  HloBuilder::ScopedName scope(b, "loss");
  HloBuilder::ScopedOpType type(b, "MeanSquaredError");
  Op d = b.Sub(x, y);
  if (d == nullptr) return d;
  std::vector<int64_t> all;
  for (int64_t i = 0; i < d->shape().rank(); ++i) all.push_back(i);
  return b.MulScalar(b.ReduceSum(b.Mul(d, d), all), 1.0 / static_cast<double>(d->shape().element_count()));
}

int64_t ElementCount(const std::vector<Op>& ops) {
  int64_t n = 0;
  for (Op o : ops) n += o->shape().element_count();
  return n;
}

}  // namespace passlab
