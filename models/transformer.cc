#include "models/transformer.h"

#include <cmath>
#include <vector>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "models/hlo_builder.h"
#include "models/layers.h"
#include "models/optimizer.h"

namespace passlab {

absl::StatusOr<std::unique_ptr<HloModule>> BuildTransformerBlock(const TransformerConfig& c) {
  if (c.batch < 1 || c.seq_len < 1 || c.width < 1 || c.heads < 1) {
    return absl::InvalidArgumentError("transformer_block: batch, seq_len, width and heads must be positive");
  }
  if (c.width % c.heads != 0) {
    return absl::InvalidArgumentError(StrCat("transformer_block: width ", c.width, " is not divisible by heads ", c.heads));
  }
  if (!IsFloatingPointType(c.dtype)) return absl::InvalidArgumentError("transformer_block: dtype must be floating point");
  auto module = std::make_unique<HloModule>("transformer_block_train_step");
  HloBuilder b(module.get(), "transformer_block_train_step");
  HloBuilder::ScopedName model(b, "transformer_block");
  const int64_t B = c.batch, S = c.seq_len, D = c.width, H = c.heads, Dh = D / H;
  PrimitiveType t = c.dtype;
  std::vector<Op> params;
  auto param = [&](Shape s, std::string name) {
    Op p = b.Parameter(s, std::move(name));
    params.push_back(p);
    return p;
  };
  Op ln1_g = param(Shape(t, {D}), "ln1.scale"), ln1_b = param(Shape(t, {D}), "ln1.offset");
  Op wq = param(Shape(t, {D, D}), "q.weight"), bq = param(Shape(t, {D}), "q.bias");
  Op wk = param(Shape(t, {D, D}), "k.weight"), bk = param(Shape(t, {D}), "k.bias");
  Op wv = param(Shape(t, {D, D}), "v.weight"), bv = param(Shape(t, {D}), "v.bias");
  Op wo = param(Shape(t, {D, D}), "o.weight"), bo = param(Shape(t, {D}), "o.bias");
  Op ln2_g = param(Shape(t, {D}), "ln2.scale"), ln2_b = param(Shape(t, {D}), "ln2.offset");
  Op w1 = param(Shape(t, {D, 4 * D}), "mlp.fc1.weight"), b1 = param(Shape(t, {4 * D}), "mlp.fc1.bias");
  Op w2 = param(Shape(t, {4 * D, D}), "mlp.fc2.weight"), b2 = param(Shape(t, {D}), "mlp.fc2.bias");
  std::vector<Op> momentum = MomentumParameters(b, params);
  Op x = b.Parameter(Shape(t, {B, S, D}), "inputs");
  Op target = b.Parameter(Shape(t, {B, S, D}), "targets");

  Op h;
  {
    HloBuilder::ScopedName attn(b, "attention");
    Op n1;
    {
      HloBuilder::ScopedName s(b, "ln1");
      n1 = LayerNorm(b, x, ln1_g, ln1_b, 1e-5);
    }
    auto project = [&](Op w, Op bias, const char* name) {
      HloBuilder::ScopedName s(b, name);
      return b.Reshape(Dense(b, n1, w, bias), {B, S, H, Dh});
    };
    Op q = project(wq, bq, "q"), k = project(wk, bk, "k"), v = project(wv, bv, "v");
    Op ctx;
    {
      HloBuilder::ScopedName s(b, "scores");
      HloBuilder::ScopedOpType type(b, "BatchMatMulV2");
      DotDimensionNumbers qk;
      qk.lhs_batch_dimensions = {0, 2};
      qk.rhs_batch_dimensions = {0, 2};
      qk.lhs_contracting_dimensions = {3};
      qk.rhs_contracting_dimensions = {3};
      Op scores = b.MulScalar(b.Dot(q, k, qk), 1.0 / std::sqrt(static_cast<double>(Dh)));  // [B,H,S,S]
      Op probs = Softmax(b, scores);
      DotDimensionNumbers pv;
      pv.lhs_batch_dimensions = {0, 1};
      pv.rhs_batch_dimensions = {0, 2};
      pv.lhs_contracting_dimensions = {3};
      pv.rhs_contracting_dimensions = {1};
      ctx = b.Reshape(b.Transpose(b.Dot(probs, v, pv), {0, 2, 1, 3}), {B, S, D});  // [B,S,D]
    }
    HloBuilder::ScopedName s(b, "o");
    h = b.Add(x, Dense(b, ctx, wo, bo));
  }
  Op y;
  {
    HloBuilder::ScopedName mlp(b, "mlp");
    Op n2;
    {
      HloBuilder::ScopedName s(b, "ln2");
      n2 = LayerNorm(b, h, ln2_g, ln2_b, 1e-5);
    }
    Op f;
    {
      HloBuilder::ScopedName s(b, "fc1");
      f = Gelu(b, Dense(b, n2, w1, b1));
    }
    HloBuilder::ScopedName s(b, "fc2");
    y = b.Add(h, Dense(b, f, w2, b2));
  }
  Op loss = MeanSquaredError(b, y, target);
  ASSIGN_OR_RETURN(std::vector<Op> outputs, SgdMomentumStep(
      b, loss, params, momentum, SgdOptions{.learning_rate = c.learning_rate, .weight_decay = 0}));
  ASSIGN_OR_RETURN(HloComputation* built, b.Build(outputs));
  return module;
}

}  // namespace passlab
