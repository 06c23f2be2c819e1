#include "passes/expanders/batchnorm_expander.h"

#include <optional>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/ir/hlo_sharding_util.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// Builds expressions next to one instruction.
class Builder {
 public:
  explicit Builder(HloInstruction* anchor) : c_(anchor->parent()), anchor_(anchor) {}
  HloInstruction* Add(std::unique_ptr<HloInstruction> i) {
    i->set_metadata(anchor_->metadata());
    return c_->AddInstruction(std::move(i));
  }
  HloInstruction* Scalar(PrimitiveType t, double v) {
    Literal l(Shape::Scalar(t));
    l.SetDouble(0, v);
    return Add(HloInstruction::CreateConstant(std::move(l)));
  }
  HloInstruction* Bin(HloOpcode op, HloInstruction* a, HloInstruction* b) {
    return Add(HloInstruction::CreateBinary(a->shape(), op, a, b));
  }
  HloInstruction* Un(HloOpcode op, HloInstruction* a) { return Add(HloInstruction::CreateUnary(a->shape(), op, a)); }
  // Broadcast a [features] vector (or scalar) to the operand's shape.
  HloInstruction* Feature(HloInstruction* v, const Shape& shape, int64_t feature) {
    return Add(HloInstruction::CreateBroadcast(shape, v, v->shape().rank() == 0 ? std::vector<int64_t>{}
                                                                                 : std::vector<int64_t>{feature}));
  }
  // Sum over every dimension but `feature`.
  HloInstruction* SumToFeature(HloInstruction* x, int64_t feature) {
    const Shape& s = x->shape();
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < s.rank(); ++d) {
      if (d != feature) dims.push_back(d);
    }
    Shape out(s.element_type(), {s.dimensions(feature)});
    return Add(HloInstruction::CreateReduce(out, {x}, {Scalar(s.element_type(), 0)}, dims, AddComputation(s.element_type())));
  }
  HloComputation* AddComputation(PrimitiveType t) {
    HloModule* m = c_->parent();
    std::string name = StrCat("batchnorm_add_", PrimitiveTypeName(t));
    if (HloComputation* existing = m->GetComputationWithName(name)) return existing;
    auto comp = std::make_unique<HloComputation>(name);
    HloInstruction* a = comp->AddParameter(HloInstruction::CreateParameter(0, Shape::Scalar(t), "lhs"));
    HloInstruction* b = comp->AddParameter(HloInstruction::CreateParameter(1, Shape::Scalar(t), "rhs"));
    comp->set_root_instruction(comp->AddInstruction(HloInstruction::CreateBinary(Shape::Scalar(t), HloOpcode::kAdd, a, b)));
    return m->AddEmbeddedComputation(std::move(comp));
  }

 private:
  HloComputation* c_;
  HloInstruction* anchor_;
};

}  // namespace

bool BatchNormExpander::InstructionMatchesPattern(HloInstruction* inst) {
  switch (inst->opcode()) {
    case HloOpcode::kBatchNormTraining: return options_.rewrite_training_op;
    case HloOpcode::kBatchNormInference: return options_.rewrite_inference_op;
    case HloOpcode::kBatchNormGrad: return options_.rewrite_grad_op;
    default: return false;
  }
}

namespace {

// The one device every part of `sharding` names, if any (XLA's
// sharding_unique_device).
std::optional<int64_t> UniqueDevice(const HloSharding& sharding) {
  if (sharding.kind == HloSharding::Kind::kMaximal) return sharding.device;
  if (sharding.kind != HloSharding::Kind::kTuple || sharding.tuple_elements.empty()) return std::nullopt;
  std::optional<int64_t> device = UniqueDevice(sharding.tuple_elements[0]);
  for (const HloSharding& element : sharding.tuple_elements) {
    if (UniqueDevice(element) != device) return std::nullopt;
  }
  return device;
}

// As XLA's BatchNormExpander: the expansion's instructions shaped like the
// activation get its sharding (a tuple op's first element's), the others
// the op's unique device or replication; the result gets the op's.
void ShardExpansion(const HloInstruction& batch_norm, absl::Span<HloInstruction* const> added,
                    HloInstruction* result) {
  if (!batch_norm.has_sharding()) return;
  const HloSharding& sharding = batch_norm.sharding();
  HloSharding operand_sharding = sharding;
  if (sharding.kind == HloSharding::Kind::kTuple && !sharding.tuple_elements.empty()) {
    operand_sharding = sharding.tuple_elements[0];
  }
  std::optional<int64_t> device = UniqueDevice(sharding);
  HloSharding fallback = ReplicatedSharding();
  if (device.has_value()) {
    fallback = HloSharding();
    fallback.kind = HloSharding::Kind::kMaximal;
    fallback.device = *device;
  }
  const Shape& operand_shape = batch_norm.operand(0)->shape();
  for (HloInstruction* inst : added) inst->set_sharding(inst->shape() == operand_shape ? operand_sharding : fallback);
  result->set_sharding(sharding);
}

}  // namespace

absl::StatusOr<HloInstruction*> BatchNormExpander::ExpandInstruction(HloInstruction* inst) {
  const int64_t before = inst->parent()->instruction_count();
  absl::StatusOr<HloInstruction*> result = Expand(inst);
  if (!result.ok() || !inst->has_sharding()) return result;
  std::vector<HloInstruction*> all = inst->parent()->instructions();
  ShardExpansion(*inst, absl::MakeSpan(all).subspan(before), *result);
  return result;
}

absl::StatusOr<HloInstruction*> BatchNormExpander::Expand(HloInstruction* inst) {
  Builder b(inst);
  HloInstruction* x = inst->mutable_operand(0);
  const Shape& s = x->shape();
  PrimitiveType t = s.element_type();
  int64_t f = inst->attrs().feature_index;
  double n = static_cast<double>(s.element_count()) / std::max<int64_t>(s.dimensions(f), 1);
  HloInstruction* eps = b.Scalar(t, inst->attrs().epsilon);
  Shape fs(t, {s.dimensions(f)});
  auto feature_bcast = [&](HloInstruction* v) { return b.Feature(v, s, f); };
  auto scalar_to = [&](HloInstruction* scalar, const Shape& shape) {
    return b.Add(HloInstruction::CreateBroadcast(shape, scalar, {}));
  };
  HloInstruction* inv_n = scalar_to(b.Scalar(t, 1.0 / n), fs);
  switch (inst->opcode()) {
    case HloOpcode::kBatchNormInference: {
      HloInstruction* scale = inst->mutable_operand(1);
      HloInstruction* offset = inst->mutable_operand(2);
      HloInstruction* mean = inst->mutable_operand(3);
      HloInstruction* var = inst->mutable_operand(4);
      HloInstruction* rstd = b.Un(HloOpcode::kRsqrt, b.Bin(HloOpcode::kAdd, var, scalar_to(eps, fs)));
      HloInstruction* centered = b.Bin(HloOpcode::kSubtract, x, feature_bcast(mean));
      HloInstruction* scaled = b.Bin(HloOpcode::kMultiply, centered, feature_bcast(b.Bin(HloOpcode::kMultiply, rstd, scale)));
      return b.Bin(HloOpcode::kAdd, scaled, feature_bcast(offset));
    }
    case HloOpcode::kBatchNormTraining: {
      HloInstruction* scale = inst->mutable_operand(1);
      HloInstruction* offset = inst->mutable_operand(2);
      HloInstruction* mean = b.Bin(HloOpcode::kMultiply, b.SumToFeature(x, f), inv_n);
      HloInstruction* mean_sq = b.Bin(HloOpcode::kMultiply, b.SumToFeature(b.Bin(HloOpcode::kMultiply, x, x), f), inv_n);
      HloInstruction* var = b.Bin(HloOpcode::kSubtract, mean_sq, b.Bin(HloOpcode::kMultiply, mean, mean));
      HloInstruction* rstd = b.Un(HloOpcode::kRsqrt, b.Bin(HloOpcode::kAdd, var, scalar_to(eps, fs)));
      HloInstruction* centered = b.Bin(HloOpcode::kSubtract, x, feature_bcast(mean));
      HloInstruction* scaled = b.Bin(HloOpcode::kMultiply, centered, feature_bcast(b.Bin(HloOpcode::kMultiply, rstd, scale)));
      HloInstruction* y = b.Bin(HloOpcode::kAdd, scaled, feature_bcast(offset));
      return b.Add(HloInstruction::CreateTuple({y, mean, var}));
    }
    case HloOpcode::kBatchNormGrad: {
      HloInstruction* scale = inst->mutable_operand(1);
      HloInstruction* mean = inst->mutable_operand(2);
      HloInstruction* var = inst->mutable_operand(3);
      HloInstruction* dy = inst->mutable_operand(4);
      HloInstruction* var_eps = b.Bin(HloOpcode::kAdd, var, scalar_to(eps, fs));
      HloInstruction* rstd = b.Un(HloOpcode::kRsqrt, var_eps);
      HloInstruction* centered = b.Bin(HloOpcode::kSubtract, x, feature_bcast(mean));
      HloInstruction* sum_dy = b.SumToFeature(dy, f);
      HloInstruction* sum_dy_xmu = b.SumToFeature(b.Bin(HloOpcode::kMultiply, dy, centered), f);
      HloInstruction* dscale = b.Bin(HloOpcode::kMultiply, sum_dy_xmu, rstd);
      // dx = scale*rstd * (dy - mean(dy) - (x-mean) * mean(dy*(x-mean)) / (var+eps))
      HloInstruction* mean_dy = b.Bin(HloOpcode::kMultiply, sum_dy, inv_n);
      HloInstruction* coef = b.Bin(HloOpcode::kDivide, b.Bin(HloOpcode::kMultiply, sum_dy_xmu, inv_n), var_eps);
      HloInstruction* inner = b.Bin(HloOpcode::kSubtract, b.Bin(HloOpcode::kSubtract, dy, feature_bcast(mean_dy)),
                                    b.Bin(HloOpcode::kMultiply, centered, feature_bcast(coef)));
      HloInstruction* dx = b.Bin(HloOpcode::kMultiply, inner, feature_bcast(b.Bin(HloOpcode::kMultiply, scale, rstd)));
      return b.Add(HloInstruction::CreateTuple({dx, dscale, sum_dy}));
    }
    default:
      return absl::InternalError("not a batch-norm op");
  }
}

}  // namespace passlab
