#include "models/laplace_pinn.h"

#include <vector>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "models/autodiff.h"
#include "models/hlo_builder.h"
#include "models/layers.h"
#include "models/optimizer.h"

namespace passlab {
namespace {

// u(points [M, 2]) -> [M, 1].
Op Network(HloBuilder& b, Op points, const std::vector<Op>& params) {
  HloBuilder::ScopedName scope(b, "mlp");
  Op h = points;
  size_t layers = params.size() / 2;
  for (size_t i = 0; i < layers; ++i) {
    HloBuilder::ScopedName layer(b, StrCat("dense", i));
    h = Dense(b, h, params[2 * i], params[2 * i + 1]);
    if (i + 1 < layers) {
      HloBuilder::ScopedOpType type(b, "Tanh");
      h = b.Tanh(h);
    }
  }
  return h;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HloModule>> BuildLaplacePinn(const LaplacePinnConfig& c) {
  if (c.grid < 2 || c.depth < 1 || c.width < 1) {
    return absl::InvalidArgumentError("laplace_pinn: grid must be >= 2, depth and width >= 1");
  }
  if (c.dtype != PrimitiveType::kF32 && c.dtype != PrimitiveType::kF64) {
    return absl::InvalidArgumentError(StrCat("laplace_pinn: dtype must be f32 or f64, got ", PrimitiveTypeName(c.dtype)));
  }
  auto module = std::make_unique<HloModule>("laplace_pinn_train_step");
  HloBuilder b(module.get(), "laplace_pinn_train_step");
  HloBuilder::ScopedName model(b, "laplace_pinn");
  PrimitiveType t = c.dtype;
  std::vector<Op> params;
  int64_t in = 2;
  for (int64_t i = 0; i <= c.depth; ++i) {
    int64_t out = i == c.depth ? 1 : c.width;
    params.push_back(b.Parameter(Shape(t, {in, out}), StrCat("dense", i, ".weight")));
    params.push_back(b.Parameter(Shape(t, {out}), StrCat("dense", i, ".bias")));
    in = out;
  }
  std::vector<Op> m, v;
  for (Op p : params) m.push_back(b.Parameter(p->shape(), StrCat(p->name(), ".adam_m")));
  for (Op p : params) v.push_back(b.Parameter(p->shape(), StrCat(p->name(), ".adam_v")));
  Op step = b.Parameter(Shape::Scalar(PrimitiveType::kF32), "step");

  int64_t n = c.grid;
  double spacing = 1.0 / static_cast<double>(n - 1);
  Op interior, boundary;
  {
    HloBuilder::ScopedName pts(b, "collocation_points");
    HloBuilder::ScopedOpType type(b, "Meshgrid");
    Op xs = b.Iota(Shape(t, {n, n, 1}), 0);
    Op ys = b.Iota(Shape(t, {n, n, 1}), 1);
    interior = b.MulScalar(b.Reshape(b.Concatenate({xs, ys}, 2), {n * n, 2}), spacing);
    Op s = b.MulScalar(b.Iota(Shape(t, {n, 1}), 0), spacing);
    Op zero = b.Full(Shape(t, {n, 1}), 0), one = b.Full(Shape(t, {n, 1}), 1);
    boundary = b.Concatenate({b.Concatenate({s, zero}, 1), b.Concatenate({s, one}, 1),
                              b.Concatenate({zero, s}, 1), b.Concatenate({one, s}, 1)}, 0);  // [4n, 2]
  }
  Op laplacian;
  {
    HloBuilder::ScopedName scope(b, "laplacian");
    Op u = Network(b, interior, params);
    ASSIGN_OR_RETURN(std::vector<Op> du, Gradients(b, b.ReduceSum(u, {0, 1}), {interior}));
    Op ux = b.Slice(du[0], {0, 0}, {n * n, 1});
    Op uy = b.Slice(du[0], {0, 1}, {n * n, 2});
    ASSIGN_OR_RETURN(std::vector<Op> dux, Gradients(b, b.ReduceSum(ux, {0, 1}), {interior}));
    ASSIGN_OR_RETURN(std::vector<Op> duy, Gradients(b, b.ReduceSum(uy, {0, 1}), {interior}));
    Op uxx = b.Slice(dux[0], {0, 0}, {n * n, 1});
    Op uyy = b.Slice(duy[0], {0, 1}, {n * n, 2});
    laplacian = b.Add(uxx, uyy);
  }
  Op loss;
  {
    HloBuilder::ScopedName scope(b, "loss");
    Op residual = MeanSquaredError(b, laplacian, b.Full(Shape(t, {n * n, 1}), 0));
    Op ub = Network(b, boundary, params);
    Op bx = b.Slice(boundary, {0, 0}, {4 * n, 1});
    Op by = b.Slice(boundary, {0, 1}, {4 * n, 2});
    Op target = b.Sub(b.Mul(bx, bx), b.Mul(by, by));  // g = x^2 - y^2
    loss = b.Add(residual, MeanSquaredError(b, ub, target));
  }
  ASSIGN_OR_RETURN(std::vector<Op> grads, Gradients(b, loss, params));
  std::vector<Op> new_p, new_m, new_v;
  {
    HloBuilder::ScopedName scope(b, "adam");
    AdamOptions adam;
    adam.learning_rate = c.learning_rate;
    for (size_t i = 0; i < params.size(); ++i) {
      AdamResult r = AdamUpdate(b, params[i], grads[i], m[i], v[i], step, adam);
      new_p.push_back(r.param);
      new_m.push_back(r.m);
      new_v.push_back(r.v);
    }
  }
  std::vector<Op> outputs = {loss};
  outputs.insert(outputs.end(), new_p.begin(), new_p.end());
  outputs.insert(outputs.end(), new_m.begin(), new_m.end());
  outputs.insert(outputs.end(), new_v.begin(), new_v.end());
  outputs.push_back(b.AddScalar(step, 1));
  ASSIGN_OR_RETURN(HloComputation* built, b.Build(outputs));
  return module;
}

}  // namespace passlab
