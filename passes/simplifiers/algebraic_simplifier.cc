#include "passes/simplifiers/algebraic_simplifier.h"

#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "core/ir/str_util.h"
#include "passes/simplifiers/algsimp_internal.h"

namespace passlab {
namespace algsimp {

HloInstruction* RuleContext::Constant(const Shape& shape, double value) {
  Literal scalar(Shape::Scalar(shape.element_type()));
  scalar.SetDouble(0, value);
  HloInstruction* c = Add(HloInstruction::CreateConstant(std::move(scalar)));
  if (shape.rank() == 0) return c;
  Shape target = shape;
  return Add(HloInstruction::CreateBroadcast(target, c, {}));
}

std::optional<double> ScalarConstantValue(const HloInstruction* inst) {
  if (inst->opcode() == HloOpcode::kBroadcast && inst->operand(0)->shape().IsScalar()) {
    inst = inst->operand(0);
  }
  if (inst->opcode() != HloOpcode::kConstant || !inst->shape().IsArray() || inst->literal().elided()) {
    return std::nullopt;
  }
  const Literal& l = inst->literal();
  if (l.element_count() == 0 || IsComplexType(l.shape().element_type())) return std::nullopt;
  double first = l.GetDouble(0);
  for (int64_t i = 1; i < l.element_count(); ++i) {
    double v = l.GetDouble(i);
    if (!(v == first) && !(std::isnan(v) && std::isnan(first))) return std::nullopt;
  }
  return first;
}

bool IsConstantScalarValue(const HloInstruction* inst, double value) {
  std::optional<double> v = ScalarConstantValue(inst);
  return v.has_value() && *v == value;
}

bool IsConstantLike(const HloInstruction* inst) {
  if (inst->opcode() == HloOpcode::kBroadcast) inst = inst->operand(0);
  return inst->opcode() == HloOpcode::kConstant;
}

bool IsNonNegative(const HloInstruction* inst) {
  PrimitiveType t = inst->shape().element_type();
  if (IsUnsignedIntegralType(t) || t == PrimitiveType::kPred) return true;
  switch (inst->opcode()) {
    case HloOpcode::kAbs: case HloOpcode::kExp: case HloOpcode::kSqrt: case HloOpcode::kRsqrt:
    case HloOpcode::kLogistic: case HloOpcode::kPopulationCount: case HloOpcode::kClz:
      return true;
    case HloOpcode::kMultiply:  // x * x
      return inst->operand(0) == inst->operand(1);
    case HloOpcode::kIota:
      return true;
    case HloOpcode::kBroadcast: case HloOpcode::kReshape: case HloOpcode::kTranspose:
    case HloOpcode::kCopy: case HloOpcode::kReverse: case HloOpcode::kSlice:
      return IsNonNegative(inst->operand(0));
    case HloOpcode::kMaximum:
      return IsNonNegative(inst->operand(0)) || IsNonNegative(inst->operand(1));
    case HloOpcode::kConstant: {
      if (!inst->shape().IsArray() || IsComplexType(t)) return false;
      const Literal& l = inst->literal();
      for (int64_t i = 0; i < l.element_count(); ++i) {
        double v = l.GetDouble(i);
        if (v < 0 || (v == 0 && std::signbit(v))) return false;
      }
      return !l.elided();
    }
    default:
      return false;
  }
}

}  // namespace algsimp

std::vector<std::string_view> AlgebraicSimplifier::RuleNames() {
  std::vector<std::string_view> names;
  for (const algsimp::Rule& r : algsimp::ArithmeticRules()) names.push_back(r.name);
  for (const algsimp::Rule& r : algsimp::ShapeRules()) names.push_back(r.name);
  return names;
}

absl::StatusOr<bool> AlgebraicSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  static const auto* by_opcode = [] {
    auto* m = new absl::flat_hash_map<HloOpcode, std::vector<algsimp::Rule>>();
    for (algsimp::Rule& r : algsimp::ArithmeticRules()) (*m)[r.opcode].push_back(std::move(r));
    for (algsimp::Rule& r : algsimp::ShapeRules()) (*m)[r.opcode].push_back(std::move(r));
    return m;
  }();
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    absl::flat_hash_map<const HloInstruction*, bool> removed;
    c->set_removal_listener([&](const HloInstruction* i) { removed[i] = true; });
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (removed.contains(inst)) continue;
      auto it = by_opcode->find(inst->opcode());
      if (it == by_opcode->end()) continue;
      for (const algsimp::Rule& rule : it->second) {
        algsimp::RuleContext ctx(inst, options_);
        HloInstruction* replacement = rule.apply(inst, ctx);
        if (replacement == nullptr || replacement == inst) continue;
        if (!replacement->shape().Compatible(inst->shape())) {
          c->set_removal_listener(nullptr);
          return absl::InternalError(StrCat("algsimp rule '", rule.name, "' changed the shape of '", inst->name(),
                                            "' from ", inst->shape().ToString(), " to ", replacement->shape().ToString()));
        }
        // Keep the instruction's layout on the replacement's result.
        if (replacement->shape() != inst->shape() && replacement->user_count() == 0 &&
            replacement->opcode() != HloOpcode::kParameter) {
          *replacement->mutable_shape() = inst->shape();
        }
        BumpCounter(rule.name);
        if (absl::Status s = c->ReplaceInstruction(inst, replacement); !s.ok()) {
          c->set_removal_listener(nullptr);
          return s;
        }
        changed = true;
        break;
      }
    }
    c->set_removal_listener(nullptr);
  }
  return changed;
}

}  // namespace passlab
