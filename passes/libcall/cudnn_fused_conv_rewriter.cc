#include "passes/libcall/cudnn_fused_conv_rewriter.h"

#include <optional>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/literal.h"
#include "core/libcall/library_call.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/libcall/conv_call_util.h"

namespace passlab {
namespace {

// gte(call, 0) of a forward (or already fused) f32 convolution call whose
// result has no user but `user`.
struct ConvValue {
  HloInstruction* call;
  LibraryCallKind kind;
  ConvBackendConfig config;
};

std::optional<ConvValue> FusibleConv(const HloInstruction* user, HloInstruction* value) {
  if (value->opcode() != HloOpcode::kGetTupleElement || value->tuple_index() != 0 ||
      value->user_count() != 1 || value->shape().element_type() != PrimitiveType::kF32 ||
      value->shape() != user->shape() || user->operand(0) == user->operand(1)) {
    return std::nullopt;
  }
  HloInstruction* call = value->mutable_operand(0);
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(*call);
  if (!kind || (*kind != LibraryCallKind::kConvForward && *kind != LibraryCallKind::kConvBiasActivationForward) ||
      call->user_count() != 1 || call->IsRoot()) {
    return std::nullopt;
  }
  absl::StatusOr<ConvBackendConfig> config = ParseConvBackendConfig(*call);
  if (!config.ok()) return std::nullopt;
  return ConvValue{call, *kind, *config};
}

// The value of a scalar constant, or of a broadcast of one.
std::optional<double> ScalarConstant(const HloInstruction* inst) {
  if (inst->opcode() == HloOpcode::kBroadcast) inst = inst->operand(0);
  if (inst->opcode() != HloOpcode::kConstant || inst->shape().rank() != 0 ||
      !IsFloatingPointType(inst->shape().element_type())) {
    return std::nullopt;
  }
  return inst->literal().GetDouble(0);
}

int64_t OutputFeatureDimension(const HloInstruction& call) { return call.attrs().conv_dnums->output_feature_dimension; }

class FusedConvVisitor : public HloRewriteVisitor {
 public:
  explicit FusedConvVisitor(CudnnFusedConvRewriter& pass) : pass_(pass) {}

  // multiply(conv, broadcast(c)) => conv_result_scale *= c
  absl::Status HandleMultiply(HloInstruction* mul) override {
    for (int side = 0; side < 2; ++side) {
      std::optional<ConvValue> c = FusibleConv(mul, mul->mutable_operand(side));
      if (!c || c->kind != LibraryCallKind::kConvForward) continue;
      std::optional<double> scale = ScalarConstant(mul->operand(1 - side));
      if (!scale) continue;
      c->config.conv_result_scale *= *scale;
      pass_.BumpCounter("folded conv_result_scale");
      return Replace(mul, *c, c->kind, c->call->operands());
    }
    return absl::OkStatus();
  }

  absl::Status HandleAdd(HloInstruction* add) override {
    for (int side = 0; side < 2; ++side) {
      std::optional<ConvValue> c = FusibleConv(add, add->mutable_operand(side));
      if (!c) continue;
      HloInstruction* other = add->mutable_operand(1 - side);
      // add(conv, broadcast(b, {feature})) => fused call with bias b
      if (c->kind == LibraryCallKind::kConvForward && other->opcode() == HloOpcode::kBroadcast &&
          other->operand(0)->shape().rank() == 1 && other->dimensions().size() == 1 &&
          other->dimensions()[0] == OutputFeatureDimension(*c->call) &&
          other->operand(0)->shape().element_type() == PrimitiveType::kF32) {
        pass_.BumpCounter("folded bias");
        return Replace(add, *c, LibraryCallKind::kConvBiasActivationForward,
                       {c->call->mutable_operand(0), c->call->mutable_operand(1), other->mutable_operand(0)});
      }
      // add(conv', side) / add(conv', multiply(side, broadcast(k))) => side input
      if (other->shape() != add->shape() || c->config.activation_mode != ConvActivation::kNone ||
          c->call->operand_count() == 4) {
        continue;
      }
      double scale = 1;
      if (other->opcode() == HloOpcode::kMultiply && other->user_count() == 1) {
        for (int k = 0; k < 2; ++k) {
          std::optional<double> v = ScalarConstant(other->operand(k));
          if (!v || other->operand(1 - k)->shape() != add->shape()) continue;
          scale = *v;
          other = other->mutable_operand(1 - k);
          break;
        }
      }
      std::vector<HloInstruction*> operands = FusedOperands(add, *c);
      operands.push_back(other);
      c->config.side_input_scale = scale;
      pass_.BumpCounter("folded side input");
      return Replace(add, *c, LibraryCallKind::kConvBiasActivationForward, operands);
    }
    return absl::OkStatus();
  }

  // maximum(conv', broadcast(0)) => activation kRelu
  absl::Status HandleMaximum(HloInstruction* max) override {
    for (int side = 0; side < 2; ++side) {
      std::optional<ConvValue> c = FusibleConv(max, max->mutable_operand(side));
      if (!c || c->config.activation_mode != ConvActivation::kNone) continue;
      std::optional<double> zero = ScalarConstant(max->operand(1 - side));
      if (!zero || *zero != 0) continue;
      c->config.activation_mode = ConvActivation::kRelu;
      pass_.BumpCounter("folded relu");
      return Replace(max, *c, LibraryCallKind::kConvBiasActivationForward, FusedOperands(max, *c));
    }
    return absl::OkStatus();
  }

 private:
  // The fused call's operands (input, filter, bias[, side]); a plain forward
  // call gets a zero bias.
  std::vector<HloInstruction*> FusedOperands(HloInstruction* anchor, const ConvValue& c) {
    std::vector<HloInstruction*> operands = c.call->operands();
    if (c.kind == LibraryCallKind::kConvBiasActivationForward) return operands;
    int64_t features = anchor->shape().dimensions(OutputFeatureDimension(*c.call));
    HloInstruction* zero = AddInstruction(anchor, HloInstruction::CreateConstant(Literal::Scalar<float>(0)));
    operands.push_back(AddInstruction(
        anchor, HloInstruction::CreateBroadcast(Shape(PrimitiveType::kF32, {features}), zero, {})));
    return operands;
  }

  // Replaces `user` by gte(new call, 0).
  absl::Status Replace(HloInstruction* user, const ConvValue& c, LibraryCallKind kind,
                       absl::Span<HloInstruction* const> operands) {
    std::string_view target =
        kind == LibraryCallKind::kConvForward ? kConvForwardCallTarget : kConvBiasActivationForwardCallTarget;
    std::unique_ptr<HloInstruction> call = CreateConvCall(user->shape(), target, operands, c.call->window(),
                                                          *c.call->attrs().conv_dnums,
                                                          c.call->attrs().feature_group_count, c.config,
                                                          c.call->attrs().precision_config);
    call->set_metadata(c.call->metadata());
    HloInstruction* added = AddInstruction(user, std::move(call));
    return ReplaceWithNewInstruction(user, HloInstruction::CreateGetTupleElement(added, 0));
  }

  CudnnFusedConvRewriter& pass_;
};

}  // namespace

absl::StatusOr<bool> CudnnFusedConvRewriter::RunImpl(HloModule& module, PassRunContext*) {
  FusedConvVisitor visitor(*this);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
