// Shape inference: elementwise ops, tuples and bitcast-convert.
#include "core/verify/shape_inference_internal.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace shape_inference_internal {

absl::StatusOr<Shape> InferUnary(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  RETURN_IF_ERROR(CheckArray(inst, op, "the operand"));
  PrimitiveType t = op.element_type();
  switch (inst.opcode()) {
    case HloOpcode::kIsFinite:
      if (!IsFloatingPointType(t)) return Err(inst, "needs a floating-point operand");
      return ArrayLike(op, PrimitiveType::kPred);
    case HloOpcode::kReal: case HloOpcode::kImag:
      if (IsComplexType(t)) return ArrayLike(op, ComplexComponentType(t));
      if (!IsFloatingPointType(t)) return Err(inst, "needs a float or complex operand");
      return ArrayLike(op, t);
    case HloOpcode::kAbs:
      if (IsComplexType(t)) return ArrayLike(op, ComplexComponentType(t));
      if (t == PrimitiveType::kPred || IsUnsignedIntegralType(t)) {
        return Err(inst, StrCat("is not defined for ", PrimitiveTypeName(t)));
      }
      return ArrayLike(op, t);
    case HloOpcode::kNot:
      if (!IsIntegralType(t) && t != PrimitiveType::kPred) return Err(inst, "needs a pred or integer operand");
      return ArrayLike(op, t);
    case HloOpcode::kPopulationCount: case HloOpcode::kClz:
      if (!IsIntegralType(t)) return Err(inst, "needs an integer operand");
      return ArrayLike(op, t);
    case HloOpcode::kNegate: case HloOpcode::kSign:
      if (t == PrimitiveType::kPred) return Err(inst, "is not defined for pred");
      return ArrayLike(op, t);
    case HloOpcode::kCopy:
      return ArrayLike(op, t);
    case HloOpcode::kCeil: case HloOpcode::kFloor: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kReducePrecision: case HloOpcode::kCbrt:
    case HloOpcode::kErf:
      if (!IsFloatingPointType(t)) return Err(inst, StrCat("needs a floating-point operand, not ", PrimitiveTypeName(t)));
      return ArrayLike(op, t);
    default:  // transcendental: float or complex
      if (!IsFloatOrComplex(t)) {
        return Err(inst, StrCat("needs a floating-point or complex operand, not ", PrimitiveTypeName(t)));
      }
      return ArrayLike(op, t);
  }
}

absl::StatusOr<Shape> InferBinary(const HloInstruction& inst) {
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  RETURN_IF_ERROR(CheckArray(inst, a, "lhs"));
  RETURN_IF_ERROR(CheckArray(inst, b, "rhs"));
  if (!a.SameDimensions(b)) {
    return Err(inst, StrCat("operand shapes differ: ", a.ToString(false), " vs ", b.ToString(false),
                            " (HLO needs an explicit broadcast)"));
  }
  PrimitiveType t = a.element_type();
  if (inst.opcode() != HloOpcode::kStochasticConvert && b.element_type() != t) {
    // As XLA's InferElementwiseBinaryOpShape: floating-point operands may
    // differ in precision (SameElementTypeIgnoringFpPrecision) and the
    // result has the higher one (the evaluator and the CPU backend compute
    // such ops in the result's type).
    PrimitiveType u = b.element_type();
    if (!IsFloatingPointType(t) || !IsFloatingPointType(u)) {
      return Err(inst, StrCat("operand element types differ: ", PrimitiveTypeName(t), " vs ", PrimitiveTypeName(u)));
    }
    if (std::pair(PrimitiveBitWidth(u), MantissaBits(u)) > std::pair(PrimitiveBitWidth(t), MantissaBits(t))) t = u;
  }
  switch (inst.opcode()) {
    case HloOpcode::kCompare:
      return ArrayLike(a, PrimitiveType::kPred);
    case HloOpcode::kComplex:
      if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) return Err(inst, "needs f32 or f64 operands");
      return ArrayLike(a, t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128);
    case HloOpcode::kAnd: case HloOpcode::kOr: case HloOpcode::kXor:
      if (!IsIntegralType(t) && t != PrimitiveType::kPred) return Err(inst, "needs pred or integer operands");
      return ArrayLike(a, t);
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical: case HloOpcode::kMulhi:
      if (!IsIntegralType(t)) return Err(inst, "needs integer operands");
      return ArrayLike(a, t);
    case HloOpcode::kAtan2:
      if (!IsFloatOrComplex(t)) return Err(inst, "needs floating-point operands");
      return ArrayLike(a, t);
    case HloOpcode::kStochasticConvert:
      return OwnShape(inst, "the result type is chosen by the instruction");
    default:
      if (t == PrimitiveType::kPred && inst.opcode() != HloOpcode::kMaximum &&
          inst.opcode() != HloOpcode::kMinimum) {
        return Err(inst, "is not defined for pred");
      }
      return ArrayLike(a, t);
  }
}

absl::StatusOr<Shape> InferTuple(const HloInstruction& inst) {
  std::vector<Shape> e;
  for (const HloInstruction* op : inst.operands()) e.push_back(op->shape());
  return Shape::Tuple(std::move(e));
}

absl::StatusOr<Shape> InferBitcastConvert(const HloInstruction& inst) {
  if (!HasShape(inst)) return OwnShape(inst, "the result type is chosen by the instruction");
  const Shape& op = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  int in_bits = PrimitiveBitWidth(op.element_type());
  int out_bits = PrimitiveBitWidth(out.element_type());
  Shape expected = ArrayLike(op, out.element_type());
  if (in_bits > out_bits) {
    expected.add_dimension(in_bits / out_bits);
  } else if (in_bits < out_bits) {
    if (op.rank() == 0 || op.dimensions(op.rank() - 1) != out_bits / in_bits) {
      return Err(inst, StrCat("converting ", in_bits, "-bit to ", out_bits, "-bit elements needs a minor dimension of ",
                              out_bits / in_bits));
    }
    std::vector<int64_t> dims(op.dimensions().begin(), op.dimensions().end() - 1);
    expected = Shape(out.element_type(), dims);
  }
  return expected;
}

}  // namespace shape_inference_internal

}  // namespace passlab
