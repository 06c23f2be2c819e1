#include "passes/expanders/stochastic_convert_decomposer.h"

#include <cmath>
#include <utility>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

// `value` in `type` (rounded to it), broadcast to `dims`.
HloInstruction* Splat(ExpansionBuilder& b, PrimitiveType type, double value, const std::vector<int64_t>& dims) {
  Literal l(Shape::Scalar(type));
  l.SetDouble(0, value);
  return b.Broadcast(b.ConstantLiteral(std::move(l)), dims);
}

}  // namespace

bool StochasticConvertDecomposer::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kStochasticConvert || inst->operand_count() != 2) return false;
  const Shape& x = inst->operand(0)->shape();
  const Shape& random = inst->operand(1)->shape();
  const Shape& result = inst->shape();
  return x.IsArray() && random.IsArray() && result.IsArray() && IsFloatingPointType(x.element_type()) &&
         IsUnsignedIntegralType(random.element_type()) &&
         PrimitiveBitWidth(random.element_type()) == PrimitiveBitWidth(x.element_type()) &&
         PrimitiveBitWidth(x.element_type()) >= 16 && IsIntegralType(result.element_type()) &&
         result.element_type() != PrimitiveType::kPred;
}

absl::StatusOr<HloInstruction*> StochasticConvertDecomposer::ExpandInstruction(HloInstruction* convert) {
  ExpansionBuilder b(convert->parent(), convert->metadata());
  HloInstruction* x = convert->mutable_operand(0);
  HloInstruction* random = convert->mutable_operand(1);
  const PrimitiveType f = x->shape().element_type();
  const PrimitiveType u = random->shape().element_type();
  const PrimitiveType out = convert->shape().element_type();
  const std::vector<int64_t> dims = x->shape().dimensions();
  const int width = PrimitiveBitWidth(u), out_width = PrimitiveBitWidth(out);
  // |x| = whole + fraction; round up when random < fraction * 2^width.
  HloInstruction* magnitude = b.Unary(HloOpcode::kAbs, x);
  HloInstruction* whole = b.Unary(HloOpcode::kFloor, magnitude);
  HloInstruction* fraction = b.Binary(HloOpcode::kSubtract, magnitude, whole);
  HloInstruction* threshold =
      b.Convert(b.Binary(HloOpcode::kMultiply, fraction, Splat(b, f, std::ldexp(1.0, width), dims)), u);
  HloInstruction* round_up = b.Compare(random, threshold, ComparisonDirection::kLt);
  HloInstruction* rounded =
      b.Binary(HloOpcode::kAdd, whole, b.Select(round_up, Splat(b, f, 1, dims), Splat(b, f, 0, dims)));
  HloInstruction* zeros = Splat(b, f, 0, dims);
  HloInstruction* r = b.Select(b.Compare(x, zeros, ComparisonDirection::kLt), b.Unary(HloOpcode::kNegate, rounded),
                               rounded);
  // Saturate: the bounds are powers of two, exact in every float type (or
  // infinite where the type cannot reach them).
  const bool is_signed = IsSignedIntegralType(out);
  const double upper = std::ldexp(1.0, is_signed ? out_width - 1 : out_width);  // first value too large
  const double lower = is_signed ? -upper : 0;                                  // least value in range
  HloInstruction* too_large = b.Compare(r, Splat(b, f, upper, dims), ComparisonDirection::kGe);
  HloInstruction* too_small = b.Compare(r, Splat(b, f, lower, dims), ComparisonDirection::kLt);
  HloInstruction* max_value = b.Broadcast(b.ConstantLiteral([&] {
                                            Literal l(Shape::Scalar(out));
                                            l.SetBits(0, is_signed ? (uint64_t{1} << (out_width - 1)) - 1
                                                                   : ~uint64_t{0} >> (64 - out_width));
                                            return l;
                                          }()),
                                          dims);
  HloInstruction* min_value = b.Broadcast(b.ConstantLiteral([&] {
                                            Literal l(Shape::Scalar(out));
                                            if (is_signed) l.SetBits(0, uint64_t{1} << (out_width - 1));
                                            return l;
                                          }()),
                                          dims);
  HloInstruction* in_range = b.Convert(r, out);
  HloInstruction* saturated = b.Select(too_large, max_value, b.Select(too_small, min_value, in_range));
  // NaN => 0.
  HloInstruction* is_nan = b.Compare(x, x, ComparisonDirection::kNe);
  return b.Select(is_nan, b.Broadcast(b.Zero(out), dims), saturated);
}

}  // namespace passlab
