#include "models/optimizer.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "models/autodiff.h"

namespace passlab {

std::pair<Op, Op> SgdMomentumUpdate(HloBuilder& b, Op p, Op g, Op m, const SgdOptions& o) {
  HloBuilder::ScopedOpType type(b, "SGDMomentum");
  Op decayed = o.weight_decay == 0 ? g : b.Add(g, b.MulScalar(p, o.weight_decay));
  Op new_m = b.Add(b.MulScalar(m, o.momentum), decayed);
  Op new_p = b.Sub(p, b.MulScalar(new_m, o.learning_rate));
  return {new_p, new_m};
}

absl::StatusOr<std::vector<Op>> SgdMomentumStep(HloBuilder& b, Op loss, const std::vector<Op>& params,
                                                const std::vector<Op>& momenta, const SgdOptions& o) {
  if (!b.ok()) return b.status();
  if (momenta.size() != params.size()) {
    return absl::InvalidArgumentError(
        StrCat("SGD step: ", params.size(), " parameters but ", momenta.size(), " momentum buffers"));
  }
  ASSIGN_OR_RETURN(std::vector<Op> grads, Gradients(b, loss, params));
  HloBuilder::ScopedName scope(b, "sgd");
  std::vector<Op> outputs = {loss};
  std::vector<Op> new_momenta;
  for (size_t i = 0; i < params.size(); ++i) {
    auto [new_p, new_m] = SgdMomentumUpdate(b, params[i], grads[i], momenta[i], o);
    outputs.push_back(new_p);
    new_momenta.push_back(new_m);
  }
  outputs.insert(outputs.end(), new_momenta.begin(), new_momenta.end());
  if (!b.ok()) return b.status();
  return outputs;
}

std::vector<Op> MomentumParameters(HloBuilder& b, const std::vector<Op>& params) {
  std::vector<Op> momenta;
  for (Op p : params) momenta.push_back(b.Parameter(p->shape(), StrCat(p->name(), ".momentum")));
  return momenta;
}

AdamResult AdamUpdate(HloBuilder& b, Op p, Op g, Op m, Op v, Op step, const AdamOptions& o) {
  HloBuilder::ScopedOpType type(b, "Adam");
  if (p == nullptr || step == nullptr) return {nullptr, nullptr, nullptr};
  PrimitiveType t = p->shape().element_type();
  const std::vector<int64_t>& dims = p->shape().dimensions();
  Op new_m = b.Add(b.MulScalar(m, o.beta1), b.MulScalar(g, 1 - o.beta1));
  Op new_v = b.Add(b.MulScalar(v, o.beta2), b.MulScalar(b.Mul(g, g), 1 - o.beta2));
  Op t_step = b.Convert(step, t);
  // Bias corrections 1 - beta^t as scalars.
  Op one = b.ConstantScalar(t, 1);
  Op c1 = b.Sub(one, b.Pow(b.ConstantScalar(t, o.beta1), t_step));
  Op c2 = b.Sub(one, b.Pow(b.ConstantScalar(t, o.beta2), t_step));
  Op m_hat = b.Div(new_m, b.BroadcastScalar(c1, dims));
  Op v_hat = b.Div(new_v, b.BroadcastScalar(c2, dims));
  Op update = b.Div(m_hat, b.AddScalar(b.Sqrt(v_hat), o.epsilon));
  return {b.Sub(p, b.MulScalar(update, o.learning_rate)), new_m, new_v};
}

}  // namespace passlab
