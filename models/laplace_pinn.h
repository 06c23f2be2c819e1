// The Laplace PINN of seed 003 section 3: an MLP u(x, y) with tanh
// activations (2 inputs, `depth` hidden layers of `width` units, 1 output)
// trained so that u_xx + u_yy = 0 on a grid x grid set of collocation points
// in the unit square (101 x 101 by default, the seed's batch) and u = g on
// 4 x grid boundary points, with g(x, y) = x^2 - y^2 (harmonic, so the exact
// solution is known). Collocation and boundary points are computed in the
// graph from iota, so the module is self-contained.
//
// The Laplacian comes from the builder's autodiff, reverse over reverse: the
// gradient of sum(u) with respect to the points gives (u_x, u_y) per point;
// the gradients of sum(u_x) and sum(u_y) give u_xx and u_yy. The loss
// mean(laplacian^2) + mean((u_boundary - g)^2) is then differentiated a third
// time with respect to the weights, and Adam updates them.
//
// Entry parameters: weights and biases (W0 [2, width], b0 [width], ...,
// W_out [width, 1], b_out [1]), Adam first moments, second moments (same
// shapes), step (f32 scalar t >= 1). Output: (loss, new parameters...,
// new first moments..., new second moments..., t + 1).
#ifndef PASSLAB_MODELS_LAPLACE_PINN_H_
#define PASSLAB_MODELS_LAPLACE_PINN_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab {

struct LaplacePinnConfig {
  int64_t grid = 101;  // collocation points per side
  int64_t depth = 5;   // hidden layers
  int64_t width = 50;
  PrimitiveType dtype = PrimitiveType::kF32;
  double learning_rate = 1e-3;
};

absl::StatusOr<std::unique_ptr<HloModule>> BuildLaplacePinn(const LaplacePinnConfig& config);

}  // namespace passlab

#endif  // PASSLAB_MODELS_LAPLACE_PINN_H_
