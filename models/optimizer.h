// The optimizers of the models' training steps, built from plain HLO ops
// through HloBuilder: SGD with momentum and weight decay (PyTorch's
// torch.optim.SGD without dampening or Nesterov) and Adam with bias
// correction (torch.optim.Adam). SgdMomentumStep is the whole tail every
// SGD model ends with: gradients of the loss, one update per parameter, and
// the step's outputs in the order the models document.
#ifndef PASSLAB_MODELS_OPTIMIZER_H_
#define PASSLAB_MODELS_OPTIMIZER_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "models/hlo_builder.h"

namespace passlab {

struct SgdOptions {
  double learning_rate = 0.1;
  double momentum = 0.9;
  // 0 leaves the gradient as it is (no multiply-add emitted).
  double weight_decay = 1e-4;
};

// One parameter's update, PyTorch's SGD: g' = g + wd p; m' = mu m + g';
// p' = p - lr m'. Returns {p', m'}.
std::pair<Op, Op> SgdMomentumUpdate(HloBuilder& b, Op p, Op g, Op m, const SgdOptions& o);

// The tail of an SGD training step: d loss / d params (models/autodiff.h),
// then SgdMomentumUpdate for every (params[i], momenta[i]) pair in order,
// under the op_name scope "sgd". Returns the step's outputs
// (loss, p'..., m'...), to which a model appends what else it returns
// (ResNet: its new running statistics) before HloBuilder::Build. The
// builder's sticky error, or a gradient error, comes back as the status.
absl::StatusOr<std::vector<Op>> SgdMomentumStep(HloBuilder& b, Op loss, const std::vector<Op>& params,
                                                const std::vector<Op>& momenta, const SgdOptions& o);

// A momentum buffer per parameter: an entry parameter of the same shape
// named "<param>.momentum", created in order.
std::vector<Op> MomentumParameters(HloBuilder& b, const std::vector<Op>& params);

struct AdamOptions {
  double learning_rate = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
};
// Adam with bias correction; `step` is the f32 scalar step number t >= 1.
// Returns {p', m', v'}.
struct AdamResult {
  Op param, m, v;
};
AdamResult AdamUpdate(HloBuilder& b, Op p, Op g, Op m, Op v, Op step, const AdamOptions& o);

}  // namespace passlab

#endif  // PASSLAB_MODELS_OPTIMIZER_H_
