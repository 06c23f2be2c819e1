#include "passes/expanders/scaled_dot_rewriter.h"

#include <utility>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

// XLA's GetTargetType: bf16 when both are narrower than 16 bits; the same
// type when equal; f32 for two different types of one width; else the wider.
PrimitiveType TargetType(PrimitiveType a, PrimitiveType b) {
  const int wa = PrimitiveBitWidth(a), wb = PrimitiveBitWidth(b);
  if (wa < 16 && wb < 16) return PrimitiveType::kBF16;
  if (a == b) return a;
  if (wa == wb) return PrimitiveType::kF32;
  return wa > wb ? a : b;
}

HloInstruction* ConvertTo(ExpansionBuilder& b, HloInstruction* x, PrimitiveType t) {
  return x->shape().element_type() == t ? x : b.Convert(x, t);
}

// operand * scale, the scale broadcast over its blocks; a scalar scale is
// no scale.
absl::StatusOr<HloInstruction*> Dequantize(ExpansionBuilder& b, const HloInstruction& dot, HloInstruction* operand,
                                           HloInstruction* scale, std::string_view side) {
  if (scale->shape().rank() == 0) return operand;
  const PrimitiveType t = TargetType(operand->shape().element_type(), scale->shape().element_type());
  operand = ConvertTo(b, operand, t);
  scale = ConvertTo(b, scale, t);
  const Shape& os = operand->shape();
  const Shape& ss = scale->shape();
  if (os.rank() != ss.rank()) {
    return absl::InvalidArgumentError(StrCat("scaled-dot '", dot.name(), "': ", side,
                                             " operand and scale must have the same rank"));
  }
  std::vector<int64_t> wide, scale_to_wide;
  for (int64_t i = 0; i < os.rank(); ++i) {
    if (ss.dimensions(i) == 0 || os.dimensions(i) % ss.dimensions(i) != 0) {
      return absl::InvalidArgumentError(StrCat("scaled-dot '", dot.name(), "': ", side, " dimension ", i,
                                               " is not a multiple of the scale's"));
    }
    scale_to_wide.push_back(static_cast<int64_t>(wide.size()));
    wide.push_back(ss.dimensions(i));
    if (os.dimensions(i) != ss.dimensions(i)) wide.push_back(os.dimensions(i) / ss.dimensions(i));
  }
  HloInstruction* blocks = b.Reshape(b.Broadcast(scale, wide, scale_to_wide), os.dimensions());
  return b.Binary(HloOpcode::kMultiply, operand, blocks);
}

}  // namespace

bool ScaledDotRewriter::InstructionMatchesPattern(HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kScaledDot;
}

absl::StatusOr<HloInstruction*> ScaledDotRewriter::ExpandInstruction(HloInstruction* inst) {
  ExpansionBuilder b(inst->parent(), inst->metadata());
  ASSIGN_OR_RETURN(HloInstruction* lhs, Dequantize(b, *inst, inst->mutable_operand(0), inst->mutable_operand(2), "LHS"));
  ASSIGN_OR_RETURN(HloInstruction* rhs, Dequantize(b, *inst, inst->mutable_operand(1), inst->mutable_operand(3), "RHS"));
  const PrimitiveType t = TargetType(lhs->shape().element_type(), rhs->shape().element_type());
  HloInstruction* l = ConvertTo(b, lhs, t);
  HloInstruction* r = ConvertTo(b, rhs, t);
  Shape dot_shape = inst->shape();
  dot_shape.set_element_type(TargetType(t, inst->shape().element_type()));
  HloInstruction* dot =
      b.Add(HloInstruction::CreateDot(dot_shape, l, r, inst->attrs().dot_dnums, inst->attrs().precision_config));
  return ConvertTo(b, dot, inst->shape().element_type());
}

}  // namespace passlab
