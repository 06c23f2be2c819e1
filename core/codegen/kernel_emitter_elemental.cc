// The elemental emitter's per-op code (see kernel_emitter.h): EmitOp's
// switch over every opcode, and the unary, binary, compare and convert
// lowerings of scalar values, as the evaluator defines each op.
#include "core/codegen/kernel_emitter.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "llvm/ADT/ArrayRef.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace passlab {
namespace codegen_internal {

absl::StatusOr<Value> KernelEmitter::Convert(Value v, PrimitiveType from, PrimitiveType to) {
  namespace arith = mlir::arith;
  if (from == to) return v;
  mlir::Type tt = ComputeType(to);
  bool ffloat = IsFloatingPointType(from), tfloat = IsFloatingPointType(to);
  if (to == PrimitiveType::kPred) {
    if (ffloat) return Value(arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::UNE, v, FConst(v.getType(), 0)));
    return Cmp(arith::CmpIPredicate::ne, v, IConst(v.getType(), 0));
  }
  if (from == PrimitiveType::kPred) {
    if (tfloat) return Round(arith::UIToFPOp::create(b_, loc_, tt, v), to);
    return Value(arith::ExtUIOp::create(b_, loc_, tt, v));
  }
  if (!ffloat && !tfloat) {
    int fw = PrimitiveBitWidth(from), tw = PrimitiveBitWidth(to);
    if (fw == tw) return v;
    if (fw > tw) return Value(arith::TruncIOp::create(b_, loc_, tt, v));
    if (IsSignedIntegralType(from)) return Value(arith::ExtSIOp::create(b_, loc_, tt, v));
    return Value(arith::ExtUIOp::create(b_, loc_, tt, v));
  }
  if (!ffloat && tfloat) {
    Value r = IsSignedIntegralType(from) ? Value(arith::SIToFPOp::create(b_, loc_, tt, v))
                                         : Value(arith::UIToFPOp::create(b_, loc_, tt, v));
    return Round(r, to);
  }
  if (ffloat && tfloat) {
    mlir::Type ft = v.getType();
    Value r = v;
    if (FloatTy(r).getWidth() < llvm::cast<mlir::FloatType>(tt).getWidth()) {
      r = arith::ExtFOp::create(b_, loc_, tt, r);
    } else if (FloatTy(r).getWidth() > llvm::cast<mlir::FloatType>(tt).getWidth()) {
      r = arith::TruncFOp::create(b_, loc_, tt, r);
    }
    (void)ft;
    return Round(r, to);
  }
  // Float -> int: NaN -> 0, saturating at the type's range.
  int w = PrimitiveBitWidth(to);
  mlir::Type ft = v.getType();
  Value is_nan = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::UNO, v, v);
  Value zero = IConst(tt, 0);
  if (IsSignedIntegralType(to)) {
    double lo = -std::ldexp(1.0, w - 1), hi = std::ldexp(1.0, w - 1);
    Value conv = arith::FPToSIOp::create(b_, loc_, tt, v);
    Value min = IConst(tt, w == 64 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(lo));
    Value max = IConst(tt, w == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi) - 1);
    Value le = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OLE, v, FConst(ft, lo));
    Value ge = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OGE, v, FConst(ft, hi));
    return Select(is_nan, zero, Select(le, min, Select(ge, max, conv)));
  }
  double hi = std::ldexp(1.0, w);
  Value conv = arith::FPToUIOp::create(b_, loc_, tt, v);
  Value le = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OLE, v, FConst(ft, 0));
  Value ge = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OGE, v, FConst(ft, hi));
  return Select(is_nan, zero, Select(le, zero, Select(ge, IConst(tt, -1), conv)));
}

Value KernelEmitter::CompareValues(Value x, Value y, PrimitiveType t, ComparisonDirection dir, ComparisonType ctype) {
  namespace arith = mlir::arith;
  if (ctype == ComparisonType::kDefault) ctype = DefaultComparisonType(t);
  if (IsFloatingPointType(t) && ctype == ComparisonType::kTotalOrder) {
    int w = FloatTy(x).getWidth();
    mlir::Type it = b_.getIntegerType(w);
    auto key = [&](Value v) {
      Value bits = arith::BitcastOp::create(b_, loc_, it, v);
      Value neg = Cmp(arith::CmpIPredicate::slt, bits, IConst(it, 0));
      Value flipped = arith::XOrIOp::create(b_, loc_, bits, IConst(it, w == 64 ? std::numeric_limits<int64_t>::max()
                                                                                : (int64_t{1} << (w - 1)) - 1));
      return Select(neg, flipped, bits);
    };
    x = key(x);
    y = key(y);
    ctype = ComparisonType::kSigned;
  } else if (IsFloatingPointType(t)) {
    arith::CmpFPredicate p = arith::CmpFPredicate::OEQ;
    switch (dir) {
      case ComparisonDirection::kEq: p = arith::CmpFPredicate::OEQ; break;
      case ComparisonDirection::kNe: p = arith::CmpFPredicate::UNE; break;
      case ComparisonDirection::kLt: p = arith::CmpFPredicate::OLT; break;
      case ComparisonDirection::kLe: p = arith::CmpFPredicate::OLE; break;
      case ComparisonDirection::kGt: p = arith::CmpFPredicate::OGT; break;
      case ComparisonDirection::kGe: p = arith::CmpFPredicate::OGE; break;
    }
    return arith::CmpFOp::create(b_, loc_, p, x, y);
  }
  bool is_signed = ctype == ComparisonType::kSigned ||
                   (ctype != ComparisonType::kUnsigned && IsSignedIntegralType(t));
  arith::CmpIPredicate p = arith::CmpIPredicate::eq;
  switch (dir) {
    case ComparisonDirection::kEq: p = arith::CmpIPredicate::eq; break;
    case ComparisonDirection::kNe: p = arith::CmpIPredicate::ne; break;
    case ComparisonDirection::kLt: p = is_signed ? arith::CmpIPredicate::slt : arith::CmpIPredicate::ult; break;
    case ComparisonDirection::kLe: p = is_signed ? arith::CmpIPredicate::sle : arith::CmpIPredicate::ule; break;
    case ComparisonDirection::kGt: p = is_signed ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::ugt; break;
    case ComparisonDirection::kGe: p = is_signed ? arith::CmpIPredicate::sge : arith::CmpIPredicate::uge; break;
  }
  return Cmp(p, x, y);
}

absl::StatusOr<Value> KernelEmitter::Binary(HloOpcode op, Value x, Value y, PrimitiveType t, const HloInstruction* h) {
  namespace arith = mlir::arith;
  namespace math = mlir::math;
  if (IsFloatingPointType(t)) {
    Value r;
    switch (op) {
      case HloOpcode::kAdd: r = arith::AddFOp::create(b_, loc_, x, y); break;
      case HloOpcode::kSubtract: r = arith::SubFOp::create(b_, loc_, x, y); break;
      case HloOpcode::kMultiply: r = arith::MulFOp::create(b_, loc_, x, y); break;
      case HloOpcode::kDivide: r = arith::DivFOp::create(b_, loc_, x, y); break;
      case HloOpcode::kRemainder: r = arith::RemFOp::create(b_, loc_, x, y); break;
      case HloOpcode::kPower: r = math::PowFOp::create(b_, loc_, x, y); break;
      case HloOpcode::kAtan2: r = math::Atan2Op::create(b_, loc_, x, y); break;
      case HloOpcode::kMaximum: r = arith::MaximumFOp::create(b_, loc_, x, y); break;
      case HloOpcode::kMinimum: r = arith::MinimumFOp::create(b_, loc_, x, y); break;
      case HloOpcode::kAbs: case HloOpcode::kAddDependency: case HloOpcode::kAfterAll:
      case HloOpcode::kAllGather: case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart:
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart:
      case HloOpcode::kAllToAll: case HloOpcode::kAnd: case HloOpcode::kAsyncDone:
      case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kBatchNormGrad:
      case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormTraining: case HloOpcode::kBitcast:
      case HloOpcode::kBitcastConvert: case HloOpcode::kBroadcast: case HloOpcode::kCall:
      case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kCholesky: case HloOpcode::kClamp:
      case HloOpcode::kClz: case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectivePermuteStart:
      case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kConcatenate:
      case HloOpcode::kConditional: case HloOpcode::kConstant: case HloOpcode::kConvert:
      case HloOpcode::kConvolution: case HloOpcode::kCopy: case HloOpcode::kCopyDone:
      case HloOpcode::kCopyStart: case HloOpcode::kCos: case HloOpcode::kCustomCall:
      case HloOpcode::kDomain: case HloOpcode::kDot: case HloOpcode::kDynamicReshape:
      case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kErf:
      case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kFft: case HloOpcode::kFloor:
      case HloOpcode::kFusion: case HloOpcode::kGather: case HloOpcode::kGetDimensionSize:
      case HloOpcode::kGetTupleElement: case HloOpcode::kImag: case HloOpcode::kInfeed:
      case HloOpcode::kIota: case HloOpcode::kIsFinite: case HloOpcode::kLog: case HloOpcode::kLog1p:
      case HloOpcode::kLogistic: case HloOpcode::kMap: case HloOpcode::kNegate: case HloOpcode::kNot:
      case HloOpcode::kOptimizationBarrier: case HloOpcode::kOr: case HloOpcode::kOutfeed:
      case HloOpcode::kPad: case HloOpcode::kParameter: case HloOpcode::kPartitionId:
      case HloOpcode::kPopulationCount: case HloOpcode::kRaggedAllToAll: case HloOpcode::kReal:
      case HloOpcode::kRecv: case HloOpcode::kRecvDone: case HloOpcode::kReduce:
      case HloOpcode::kReducePrecision: case HloOpcode::kReduceScatter: case HloOpcode::kReduceWindow:
      case HloOpcode::kReplicaId: case HloOpcode::kReshape: case HloOpcode::kReverse: case HloOpcode::kRng:
      case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState:
      case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt:
      case HloOpcode::kScatter: case HloOpcode::kSelect: case HloOpcode::kSelectAndScatter:
      case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize:
      case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
      case HloOpcode::kShiftRightLogical: case HloOpcode::kSign: case HloOpcode::kSin:
      case HloOpcode::kSlice: case HloOpcode::kSort: case HloOpcode::kSqrt:
      case HloOpcode::kStochasticConvert: case HloOpcode::kTan: case HloOpcode::kTanh:
      case HloOpcode::kTopK: case HloOpcode::kTranspose: case HloOpcode::kTriangularSolve:
      case HloOpcode::kTuple: case HloOpcode::kWhile: case HloOpcode::kXor:
      case HloOpcode::kMulhi: case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
        return absl::UnimplementedError(StrCat("codegen: ", h->name(), ": '", HloOpcodeString(op), "' on floats"));
    }
    if (reassociate_ && r.getDefiningOp() != nullptr && r.getDefiningOp()->hasAttr("fastmath")) {
      r.getDefiningOp()->setAttr("fastmath", mlir::arith::FastMathFlagsAttr::get(
                                                 context_, mlir::arith::FastMathFlags::reassoc));
    }
    return Round(r, t);
  }
  mlir::Type it = x.getType();
  int w = it.getIntOrFloatBitWidth();
  bool is_signed = IsSignedIntegralType(t);
  Value zero = IConst(it, 0);
  switch (op) {
    case HloOpcode::kAdd: return Value(arith::AddIOp::create(b_, loc_, x, y));
    case HloOpcode::kSubtract: return Value(arith::SubIOp::create(b_, loc_, x, y));
    case HloOpcode::kMultiply: return Value(arith::MulIOp::create(b_, loc_, x, y));
    // The high half of the double-width product (XLA's mulhi).
    case HloOpcode::kMulhi:
      return is_signed ? Value(arith::MulSIExtendedOp::create(b_, loc_, x, y).getHigh())
                       : Value(arith::MulUIExtendedOp::create(b_, loc_, x, y).getHigh());
    case HloOpcode::kAnd: return Value(arith::AndIOp::create(b_, loc_, x, y));
    case HloOpcode::kOr: return Value(arith::OrIOp::create(b_, loc_, x, y));
    case HloOpcode::kXor: return Value(arith::XOrIOp::create(b_, loc_, x, y));
    case HloOpcode::kMaximum:
      return is_signed ? Value(arith::MaxSIOp::create(b_, loc_, x, y)) : Value(arith::MaxUIOp::create(b_, loc_, x, y));
    case HloOpcode::kMinimum:
      return is_signed ? Value(arith::MinSIOp::create(b_, loc_, x, y)) : Value(arith::MinUIOp::create(b_, loc_, x, y));
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder: {
      Value y_zero = Cmp(arith::CmpIPredicate::eq, y, zero);
      if (!is_signed) {
        Value safe = Select(y_zero, IConst(it, 1), y);
        if (op == HloOpcode::kDivide) {
          return Select(y_zero, IConst(it, -1), arith::DivUIOp::create(b_, loc_, x, safe));
        }
        return Select(y_zero, x, arith::RemUIOp::create(b_, loc_, x, safe));
      }
      Value min = IConst(it, w == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (w - 1)));
      Value overflow = And(Cmp(arith::CmpIPredicate::eq, x, min), Cmp(arith::CmpIPredicate::eq, y, IConst(it, -1)));
      Value safe = Select(mlir::arith::OrIOp::create(b_, loc_, y_zero, overflow), IConst(it, 1), y);
      if (op == HloOpcode::kDivide) {
        return Select(y_zero, IConst(it, -1), Select(overflow, min, arith::DivSIOp::create(b_, loc_, x, safe)));
      }
      return Select(y_zero, x, Select(overflow, zero, arith::RemSIOp::create(b_, loc_, x, safe)));
    }
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kShiftRightArithmetic: {
      Value too_big = Cmp(arith::CmpIPredicate::uge, y, IConst(it, w));
      Value safe = Select(too_big, zero, y);
      if (op == HloOpcode::kShiftLeft) return Select(too_big, zero, arith::ShLIOp::create(b_, loc_, x, safe));
      if (op == HloOpcode::kShiftRightLogical) return Select(too_big, zero, arith::ShRUIOp::create(b_, loc_, x, safe));
      Value fill = arith::ShRSIOp::create(b_, loc_, x, IConst(it, w - 1));
      return Select(too_big, fill, arith::ShRSIOp::create(b_, loc_, x, safe));
    }
    case HloOpcode::kPower: {
      // Negative exponents give 0 except for bases 1 and -1 (math.ipowi's
      // rule, the evaluator's too).
      if (!is_signed) {
        Value neg_y = Cmp(arith::CmpIPredicate::slt, y, zero);
        Value r = math::IPowIOp::create(b_, loc_, x, y);
        (void)neg_y;
        return r;
      }
      return Value(math::IPowIOp::create(b_, loc_, x, y));
    }
    case HloOpcode::kAbs: case HloOpcode::kAddDependency: case HloOpcode::kAfterAll:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll: case HloOpcode::kAsyncDone: case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate: case HloOpcode::kAtan2: case HloOpcode::kBatchNormGrad:
    case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormTraining: case HloOpcode::kBitcast:
    case HloOpcode::kBitcastConvert: case HloOpcode::kBroadcast: case HloOpcode::kCall:
    case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kCholesky: case HloOpcode::kClamp:
    case HloOpcode::kClz: case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kConcatenate:
    case HloOpcode::kConditional: case HloOpcode::kConstant: case HloOpcode::kConvert:
    case HloOpcode::kConvolution: case HloOpcode::kCopy: case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart: case HloOpcode::kCos: case HloOpcode::kCustomCall: case HloOpcode::kDomain:
    case HloOpcode::kDot: case HloOpcode::kDynamicReshape: case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kErf: case HloOpcode::kExp:
    case HloOpcode::kExpm1: case HloOpcode::kFft: case HloOpcode::kFloor: case HloOpcode::kFusion:
    case HloOpcode::kGather: case HloOpcode::kGetDimensionSize: case HloOpcode::kGetTupleElement:
    case HloOpcode::kImag: case HloOpcode::kInfeed: case HloOpcode::kIota: case HloOpcode::kIsFinite:
    case HloOpcode::kLog: case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kMap:
    case HloOpcode::kNegate: case HloOpcode::kNot: case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kOutfeed: case HloOpcode::kPad: case HloOpcode::kParameter:
    case HloOpcode::kPartitionId: case HloOpcode::kPopulationCount: case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kReal: case HloOpcode::kRecv: case HloOpcode::kRecvDone: case HloOpcode::kReduce:
    case HloOpcode::kReducePrecision: case HloOpcode::kReduceScatter: case HloOpcode::kReduceWindow:
    case HloOpcode::kReplicaId: case HloOpcode::kReshape: case HloOpcode::kReverse: case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt:
    case HloOpcode::kScatter: case HloOpcode::kSelect: case HloOpcode::kSelectAndScatter:
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize:
    case HloOpcode::kSign: case HloOpcode::kSin: case HloOpcode::kSlice: case HloOpcode::kSort:
    case HloOpcode::kSqrt: case HloOpcode::kStochasticConvert: case HloOpcode::kTan: case HloOpcode::kTanh:
    case HloOpcode::kTopK: case HloOpcode::kTranspose: case HloOpcode::kTriangularSolve:
    case HloOpcode::kTuple: case HloOpcode::kWhile:
      case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh: case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh: case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
      return absl::UnimplementedError(StrCat("codegen: ", h->name(), ": '", HloOpcodeString(op), "' on ",
                                             PrimitiveTypeName(t)));
  }
  return absl::InternalError("codegen: binary opcode out of range");
}

absl::StatusOr<Value> KernelEmitter::Unary(HloOpcode op, Value x, PrimitiveType t, const HloInstruction* h) {
  namespace arith = mlir::arith;
  namespace math = mlir::math;
  if (op == HloOpcode::kCopy || op == HloOpcode::kReal) return x;
  if (IsFloatingPointType(t)) {
    mlir::Type ft = x.getType();
    Value r;
    switch (op) {
      case HloOpcode::kAbs: r = math::AbsFOp::create(b_, loc_, x); break;
      case HloOpcode::kNegate: r = arith::NegFOp::create(b_, loc_, x); break;
      case HloOpcode::kExp: r = math::ExpOp::create(b_, loc_, x); break;
      case HloOpcode::kExpm1: r = math::ExpM1Op::create(b_, loc_, x); break;
      case HloOpcode::kLog: r = math::LogOp::create(b_, loc_, x); break;
      case HloOpcode::kLog1p: r = math::Log1pOp::create(b_, loc_, x); break;
      case HloOpcode::kLogistic: {
        Value e = math::ExpOp::create(b_, loc_, arith::NegFOp::create(b_, loc_, x));
        r = arith::DivFOp::create(b_, loc_, FConst(ft, 1), arith::AddFOp::create(b_, loc_, FConst(ft, 1), e));
        break;
      }
      case HloOpcode::kSqrt: r = math::SqrtOp::create(b_, loc_, x); break;
      case HloOpcode::kRsqrt:
        r = arith::DivFOp::create(b_, loc_, FConst(ft, 1), math::SqrtOp::create(b_, loc_, x));
        break;
      case HloOpcode::kCbrt: r = math::CbrtOp::create(b_, loc_, x); break;
      case HloOpcode::kSin: r = math::SinOp::create(b_, loc_, x); break;
      case HloOpcode::kCos: r = math::CosOp::create(b_, loc_, x); break;
      case HloOpcode::kTan: r = math::TanOp::create(b_, loc_, x); break;
      case HloOpcode::kTanh: r = math::TanhOp::create(b_, loc_, x); break;
      case HloOpcode::kAcos: r = math::AcosOp::create(b_, loc_, x); break;
      case HloOpcode::kAcosh: r = math::AcoshOp::create(b_, loc_, x); break;
      case HloOpcode::kAsin: r = math::AsinOp::create(b_, loc_, x); break;
      case HloOpcode::kAsinh: r = math::AsinhOp::create(b_, loc_, x); break;
      case HloOpcode::kAtanh: r = math::AtanhOp::create(b_, loc_, x); break;
      case HloOpcode::kCosh: r = math::CoshOp::create(b_, loc_, x); break;
      case HloOpcode::kSinh: r = math::SinhOp::create(b_, loc_, x); break;
      case HloOpcode::kErf: r = math::ErfOp::create(b_, loc_, x); break;
      case HloOpcode::kCeil: r = math::CeilOp::create(b_, loc_, x); break;
      case HloOpcode::kFloor: r = math::FloorOp::create(b_, loc_, x); break;
      case HloOpcode::kRoundNearestAfz: r = math::RoundOp::create(b_, loc_, x); break;
      case HloOpcode::kRoundNearestEven: r = math::RoundEvenOp::create(b_, loc_, x); break;
      case HloOpcode::kSign: {
        Value zero = FConst(ft, 0);
        Value pos = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OGT, x, zero);
        Value neg = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OLT, x, zero);
        r = Select(pos, FConst(ft, 1), Select(neg, FConst(ft, -1), x));
        break;
      }
      case HloOpcode::kIsFinite: {
        Value a = math::AbsFOp::create(b_, loc_, x);
        return Value(arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::ONE, a,
                                           FConst(ft, std::numeric_limits<double>::infinity())));
      }
      case HloOpcode::kAdd: case HloOpcode::kAddDependency: case HloOpcode::kAfterAll:
      case HloOpcode::kAllGather: case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart:
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart:
      case HloOpcode::kAllToAll: case HloOpcode::kAnd: case HloOpcode::kAsyncDone:
      case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAtan2:
      case HloOpcode::kBatchNormGrad: case HloOpcode::kBatchNormInference:
      case HloOpcode::kBatchNormTraining: case HloOpcode::kBitcast: case HloOpcode::kBitcastConvert:
      case HloOpcode::kBroadcast: case HloOpcode::kCall: case HloOpcode::kCholesky: case HloOpcode::kClamp:
      case HloOpcode::kClz: case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectivePermuteStart:
      case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kConcatenate:
      case HloOpcode::kConditional: case HloOpcode::kConstant: case HloOpcode::kConvert:
      case HloOpcode::kConvolution: case HloOpcode::kCopy: case HloOpcode::kCopyDone:
      case HloOpcode::kCopyStart: case HloOpcode::kCustomCall: case HloOpcode::kDivide:
      case HloOpcode::kDomain: case HloOpcode::kDot: case HloOpcode::kDynamicReshape:
      case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kFft:
      case HloOpcode::kFusion: case HloOpcode::kGather: case HloOpcode::kGetDimensionSize:
      case HloOpcode::kGetTupleElement: case HloOpcode::kImag: case HloOpcode::kInfeed:
      case HloOpcode::kIota: case HloOpcode::kMap: case HloOpcode::kMaximum: case HloOpcode::kMinimum:
      case HloOpcode::kMultiply: case HloOpcode::kNot: case HloOpcode::kOptimizationBarrier:
      case HloOpcode::kOr: case HloOpcode::kOutfeed: case HloOpcode::kPad: case HloOpcode::kParameter:
      case HloOpcode::kPartitionId: case HloOpcode::kPopulationCount: case HloOpcode::kPower:
      case HloOpcode::kRaggedAllToAll: case HloOpcode::kReal: case HloOpcode::kRecv:
      case HloOpcode::kRecvDone: case HloOpcode::kReduce: case HloOpcode::kReducePrecision:
      case HloOpcode::kReduceScatter: case HloOpcode::kReduceWindow: case HloOpcode::kRemainder:
      case HloOpcode::kReplicaId: case HloOpcode::kReshape: case HloOpcode::kReverse: case HloOpcode::kRng:
      case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState: case HloOpcode::kScatter:
      case HloOpcode::kSelect: case HloOpcode::kSelectAndScatter: case HloOpcode::kSend:
      case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize: case HloOpcode::kShiftLeft:
      case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical: case HloOpcode::kSlice:
      case HloOpcode::kSort: case HloOpcode::kStochasticConvert: case HloOpcode::kSubtract:
      case HloOpcode::kTopK: case HloOpcode::kTranspose: case HloOpcode::kTriangularSolve:
      case HloOpcode::kTuple: case HloOpcode::kWhile: case HloOpcode::kXor:
      case HloOpcode::kMulhi: case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
        return absl::UnimplementedError(StrCat("codegen: ", h->name(), ": '", HloOpcodeString(op), "' on floats"));
    }
    return Round(r, t);
  }
  mlir::Type it = x.getType();
  bool is_signed = IsSignedIntegralType(t);
  switch (op) {
    case HloOpcode::kNot: return Value(arith::XOrIOp::create(b_, loc_, x, IConst(it, -1)));
    case HloOpcode::kPopulationCount: return Value(math::CtPopOp::create(b_, loc_, x));
    case HloOpcode::kClz: return Value(math::CountLeadingZerosOp::create(b_, loc_, x));
    case HloOpcode::kNegate: return Value(arith::SubIOp::create(b_, loc_, IConst(it, 0), x));
    case HloOpcode::kAbs: return is_signed ? Value(math::AbsIOp::create(b_, loc_, x)) : x;
    case HloOpcode::kSign: {
      if (!is_signed) return Value(arith::ExtUIOp::create(b_, loc_, it, Cmp(arith::CmpIPredicate::ne, x, IConst(it, 0))));
      Value pos = arith::ExtUIOp::create(b_, loc_, it, Cmp(arith::CmpIPredicate::sgt, x, IConst(it, 0)));
      Value neg = arith::ExtUIOp::create(b_, loc_, it, Cmp(arith::CmpIPredicate::slt, x, IConst(it, 0)));
      return Value(arith::SubIOp::create(b_, loc_, pos, neg));
    }
    case HloOpcode::kAdd: case HloOpcode::kAddDependency: case HloOpcode::kAfterAll:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll: case HloOpcode::kAnd: case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAtan2:
    case HloOpcode::kBatchNormGrad: case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormTraining: case HloOpcode::kBitcast: case HloOpcode::kBitcastConvert:
    case HloOpcode::kBroadcast: case HloOpcode::kCall: case HloOpcode::kCbrt: case HloOpcode::kCeil:
    case HloOpcode::kCholesky: case HloOpcode::kClamp: case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kCompare: case HloOpcode::kComplex:
    case HloOpcode::kConcatenate: case HloOpcode::kConditional: case HloOpcode::kConstant:
    case HloOpcode::kConvert: case HloOpcode::kConvolution: case HloOpcode::kCopy:
    case HloOpcode::kCopyDone: case HloOpcode::kCopyStart: case HloOpcode::kCos:
    case HloOpcode::kCustomCall: case HloOpcode::kDivide: case HloOpcode::kDomain: case HloOpcode::kDot:
    case HloOpcode::kDynamicReshape: case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kErf: case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kFft:
    case HloOpcode::kFloor: case HloOpcode::kFusion: case HloOpcode::kGather:
    case HloOpcode::kGetDimensionSize: case HloOpcode::kGetTupleElement: case HloOpcode::kImag:
    case HloOpcode::kInfeed: case HloOpcode::kIota: case HloOpcode::kIsFinite: case HloOpcode::kLog:
    case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kMap: case HloOpcode::kMaximum:
    case HloOpcode::kMinimum: case HloOpcode::kMultiply: case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kOr: case HloOpcode::kOutfeed: case HloOpcode::kPad: case HloOpcode::kParameter:
    case HloOpcode::kPartitionId: case HloOpcode::kPower: case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kReal: case HloOpcode::kRecv: case HloOpcode::kRecvDone: case HloOpcode::kReduce:
    case HloOpcode::kReducePrecision: case HloOpcode::kReduceScatter: case HloOpcode::kReduceWindow:
    case HloOpcode::kRemainder: case HloOpcode::kReplicaId: case HloOpcode::kReshape:
    case HloOpcode::kReverse: case HloOpcode::kRng: case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kScatter:
    case HloOpcode::kSelect: case HloOpcode::kSelectAndScatter: case HloOpcode::kSend:
    case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize: case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical: case HloOpcode::kSin:
    case HloOpcode::kSlice: case HloOpcode::kSort: case HloOpcode::kSqrt:
    case HloOpcode::kStochasticConvert: case HloOpcode::kSubtract: case HloOpcode::kTan:
    case HloOpcode::kTanh: case HloOpcode::kTopK: case HloOpcode::kTranspose:
    case HloOpcode::kTriangularSolve: case HloOpcode::kTuple: case HloOpcode::kWhile: case HloOpcode::kXor:
      case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh: case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh: case HloOpcode::kMulhi: case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
      return absl::UnimplementedError(StrCat("codegen: ", h->name(), ": '", HloOpcodeString(op), "' on ",
                                             PrimitiveTypeName(t)));
  }
  return absl::InternalError("codegen: unary opcode out of range");
}

absl::StatusOr<Value> KernelEmitter::EmitConstant(const HloInstruction* h, const Index& idx) {
  const Literal& lit = h->literal();
  PrimitiveType t = h->shape().element_type();
  if (lit.element_count() == 1) {
    mlir::Type ct = ComputeType(t);
    if (t == PrimitiveType::kPred) return IConst(ct, lit.GetInt(0) != 0);
    if (IsFloatingPointType(t)) return FConst(ct, lit.GetDouble(0));
    return IConst(ct, static_cast<int64_t>(lit.GetBits(0)));
  }
  auto it = globals_.find(h);
  if (it == globals_.end()) {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(module_->getBody());
    auto type = mlir::MemRefType::get({lit.element_count()}, StorageType(t));
    auto tensor_type = mlir::RankedTensorType::get({lit.element_count()}, StorageType(t));
    llvm::ArrayRef<char> raw(reinterpret_cast<const char*>(lit.untyped_data()), lit.size_bytes());
    auto attr = mlir::DenseElementsAttr::getFromRawBuffer(tensor_type, raw);
    std::string name = StrCat("constant_", globals_.size());
    mlir::memref::GlobalOp::create(b_, loc_, name, b_.getStringAttr("private"), type, attr,
                                   /*constant=*/true, /*alignment=*/nullptr);
    it = globals_.emplace(h, name).first;
  }
  auto type = mlir::MemRefType::get({lit.element_count()}, StorageType(t));
  Value g = mlir::memref::GetGlobalOp::create(b_, loc_, type, it->second);
  Value off = Linearize(idx, RowMajorStrides(h->shape().dimensions()));
  Value v = mlir::memref::LoadOp::create(b_, loc_, g, mlir::ValueRange{off});
  return FromStorage(v, t);
}

absl::StatusOr<std::vector<Value>> KernelEmitter::EmitOp(const HloInstruction* h, const Index& idx) {
  auto one = [](absl::StatusOr<Value> v) -> absl::StatusOr<std::vector<Value>> {
    if (!v.ok()) return v.status();
    return std::vector<Value>{*v};
  };
  const Shape& shape = h->shape();
  PrimitiveType t = shape.element_type();
  auto operand_at = [&](int64_t i, const Index& at) { return EmitScalar(h->operand(i), at); };
  // Operand index for ops whose operands have the output's dims (scalars
  // broadcast implicitly for clamp/select).
  auto same = [&](int64_t i) -> Index { return h->operand(i)->shape().rank() == 0 ? Index{} : idx; };
  HloOpcode op = h->opcode();
  switch (op) {
    case HloOpcode::kParameter:
      return absl::InternalError(StrCat("codegen: unbound parameter ", h->name()));
    case HloOpcode::kConstant:
      return one(EmitConstant(h, idx));
    case HloOpcode::kGetTupleElement: {
      ASSIGN_OR_RETURN(std::vector<Value> r, EmitElement(h->operand(0), idx));
      return std::vector<Value>{r[h->tuple_index()]};
    }
    case HloOpcode::kReduce:
      return EmitReduce(h, idx);
    case HloOpcode::kReduceWindow:
      return one(EmitReduceWindow(h, idx));
    case HloOpcode::kDot:
      return one(EmitDot(h, idx));
    case HloOpcode::kConvolution:
      return one(EmitConvolution(h, idx));
    case HloOpcode::kGather:
      return one(EmitGather(h, idx));
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormGrad:
    case HloOpcode::kScatter:
      return absl::InternalError(StrCat("codegen: ", h->name(), " is emitted as its own kernel"));
    case HloOpcode::kBatchNormInference: {
      // (x - mean) / sqrt(var + epsilon) * scale + offset, per feature.
      Index f{idx[h->attrs().feature_index]};
      std::vector<Value> v;
      for (int64_t i = 0; i < 5; ++i) {
        ASSIGN_OR_RETURN(Value e, operand_at(i, i == 0 ? idx : f));
        v.push_back(e);
      }
      namespace arith = mlir::arith;
      Value eps = FConst(v[4].getType(), h->attrs().epsilon);
      Value rstd = mlir::math::SqrtOp::create(b_, loc_, arith::AddFOp::create(b_, loc_, v[4], eps));
      Value norm = arith::DivFOp::create(b_, loc_, arith::SubFOp::create(b_, loc_, v[0], v[3]), rstd);
      Value y = arith::AddFOp::create(b_, loc_, arith::MulFOp::create(b_, loc_, norm, v[1]), v[2]);
      return std::vector<Value>{Round(y, t)};
    }
    case HloOpcode::kAbs: case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kClz:
    case HloOpcode::kCopy: case HloOpcode::kCos: case HloOpcode::kErf: case HloOpcode::kExp:
    case HloOpcode::kExpm1: case HloOpcode::kFloor: case HloOpcode::kIsFinite: case HloOpcode::kLog:
    case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kNegate: case HloOpcode::kNot:
    case HloOpcode::kPopulationCount: case HloOpcode::kReal: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kSign: case HloOpcode::kSin:
    case HloOpcode::kSqrt: case HloOpcode::kTan: case HloOpcode::kTanh:
    case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh:
    case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh: {
      ASSIGN_OR_RETURN(Value x, operand_at(0, idx));
      return one(Unary(op, x, h->operand(0)->shape().element_type(), h));
    }
    case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2: case HloOpcode::kDivide:
    case HloOpcode::kMaximum: case HloOpcode::kMinimum: case HloOpcode::kMultiply: case HloOpcode::kOr:
    case HloOpcode::kPower: case HloOpcode::kRemainder: case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical: case HloOpcode::kSubtract:
    case HloOpcode::kXor: case HloOpcode::kMulhi: {
      ASSIGN_OR_RETURN(Value x, operand_at(0, idx));
      ASSIGN_OR_RETURN(Value y, operand_at(1, idx));
      return one(Binary(op, x, y, t, h));
    }
    case HloOpcode::kCompare: {
      ASSIGN_OR_RETURN(Value x, operand_at(0, idx));
      ASSIGN_OR_RETURN(Value y, operand_at(1, idx));
      return std::vector<Value>{CompareValues(x, y, h->operand(0)->shape().element_type(),
                                              h->attrs().comparison_direction, h->attrs().comparison_type)};
    }
    case HloOpcode::kSelect: {
      absl::StatusOr<Value> c = operand_at(0, same(0));
      absl::StatusOr<Value> x = operand_at(1, same(1));
      absl::StatusOr<Value> y = operand_at(2, same(2));
      if (!c.ok()) return c.status();
      if (!x.ok()) return x.status();
      if (!y.ok()) return y.status();
      return std::vector<Value>{Select(*c, *x, *y)};
    }
    case HloOpcode::kClamp: {
      absl::StatusOr<Value> lo = operand_at(0, same(0));
      absl::StatusOr<Value> x = operand_at(1, same(1));
      absl::StatusOr<Value> hi = operand_at(2, same(2));
      if (!lo.ok()) return lo.status();
      if (!x.ok()) return x.status();
      if (!hi.ok()) return hi.status();
      ASSIGN_OR_RETURN(Value m, Binary(HloOpcode::kMaximum, *x, *lo, t, h));
      return one(Binary(HloOpcode::kMinimum, m, *hi, t, h));
    }
    case HloOpcode::kConvert: {
      ASSIGN_OR_RETURN(Value x, operand_at(0, idx));
      return one(Convert(x, h->operand(0)->shape().element_type(), t));
    }
    case HloOpcode::kBitcastConvert: {
      ASSIGN_OR_RETURN(Value x, operand_at(0, idx));
      PrimitiveType from = h->operand(0)->shape().element_type();
      Value s = ToStorage(x, from);
      Value c = mlir::arith::BitcastOp::create(b_, loc_, StorageType(t), s);
      return std::vector<Value>{FromStorage(c, t)};
    }
    case HloOpcode::kMap: {
      llvm::SmallVector<Value> args;
      for (int64_t i = 0; i < h->operand_count(); ++i) {
        ASSIGN_OR_RETURN(Value v, operand_at(i, idx));
        args.push_back(v);
      }
      return EmitComputation(h->to_apply(), args);
    }
    case HloOpcode::kIota: {
      Value i = idx.empty() ? C(0) : idx[h->iota_dimension()];
      Value i64 = mlir::arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), i);
      return one(Convert(i64, PrimitiveType::kS64, t));
    }
    case HloOpcode::kBroadcast: {
      Index in;
      for (int64_t d : h->dimensions()) in.push_back(idx[d]);
      return one(operand_at(0, in));
    }
    case HloOpcode::kTranspose: {
      Index in(shape.rank());
      for (int64_t i = 0; i < shape.rank(); ++i) in[h->dimensions(i)] = idx[i];
      return one(operand_at(0, in));
    }
    case HloOpcode::kReshape: {
      const Shape& os = h->operand(0)->shape();
      Value linear = Linearize(idx, RowMajorStrides(shape.dimensions()));
      std::vector<int64_t> row_major_mtm;
      for (int64_t d = os.rank() - 1; d >= 0; --d) row_major_mtm.push_back(d);
      return one(operand_at(0, Delinearize(linear, os.dimensions(), row_major_mtm)));
    }
    case HloOpcode::kBitcast: {
      // Same bytes: the physical offset in the result's layout names the
      // operand element at that offset in the operand's layout.
      const Shape& os = h->operand(0)->shape();
      const PrimitiveType from = os.element_type();
      Value linear = Linearize(idx, PhysicalStrides(shape));
      const int64_t from_bits = PrimitiveBitWidth(from), to_bits = PrimitiveBitWidth(t);
      if (from == t || from_bits == to_bits) {
        absl::StatusOr<Value> x = operand_at(0, Delinearize(linear, os.dimensions(), MinorToMajor(os)));
        if (!x.ok() || from == t) return one(x);
        // An XLA bitcast may also change the element type of the same width
        // (algsimp's no-op bitcast-convert => bitcast): reinterpret the bits.
        Value c = mlir::arith::BitcastOp::create(b_, loc_, StorageType(t), ToStorage(*x, from));
        return std::vector<Value>{FromStorage(c, t)};
      }
      // A width-changing bitcast (algsimp's bitcast-convert => bitcast when
      // the minor dimension is contiguous): the narrow elements are the wide
      // one's bytes, least significant first (little-endian).
      auto as_int = [&](Value v, PrimitiveType type) {
        Value bits = ToStorage(v, type);
        mlir::Type int_type = b_.getIntegerType(PrimitiveBitWidth(type));
        return bits.getType() == int_type ? bits : mlir::arith::BitcastOp::create(b_, loc_, int_type, bits).getResult();
      };
      auto from_int = [&](Value bits, PrimitiveType type) {
        Value s = StorageType(type) == bits.getType() ? bits
                                                      : mlir::arith::BitcastOp::create(b_, loc_, StorageType(type), bits).getResult();
        return FromStorage(s, type);
      };
      if (to_bits < from_bits) {
        const int64_t k = from_bits / to_bits;
        ASSIGN_OR_RETURN(Value x, operand_at(0, Delinearize(Div(linear, k), os.dimensions(), MinorToMajor(os))));
        mlir::Type wide = b_.getIntegerType(from_bits);
        Value shift = mlir::arith::IndexCastOp::create(b_, loc_, wide, Mul(Rem(linear, k), to_bits));
        Value shifted = mlir::arith::ShRUIOp::create(b_, loc_, as_int(x, from), shift);
        Value narrow = mlir::arith::TruncIOp::create(b_, loc_, b_.getIntegerType(to_bits), shifted);
        return std::vector<Value>{from_int(narrow, t)};
      }
      const int64_t k = to_bits / from_bits;
      mlir::Type wide = b_.getIntegerType(to_bits);
      Value acc = mlir::arith::ConstantIntOp::create(b_, loc_, wide, 0);
      for (int64_t j = 0; j < k; ++j) {
        ASSIGN_OR_RETURN(Value x,
            operand_at(0, Delinearize(Add(Mul(linear, k), C(j)), os.dimensions(), MinorToMajor(os))));
        Value part = mlir::arith::ExtUIOp::create(b_, loc_, wide, as_int(x, from));
        Value shift = mlir::arith::ConstantIntOp::create(b_, loc_, wide, j * from_bits);
        acc = mlir::arith::OrIOp::create(b_, loc_, acc, mlir::arith::ShLIOp::create(b_, loc_, part, shift));
      }
      return std::vector<Value>{from_int(acc, t)};
    }
    case HloOpcode::kSlice: {
      Index in(shape.rank());
      for (int64_t d = 0; d < shape.rank(); ++d) {
        const SliceDimension& s = h->attrs().slice[d];
        in[d] = Add(Mul(idx[d], s.stride), C(s.start));
      }
      return one(operand_at(0, in));
    }
    case HloOpcode::kReverse: {
      Index in(idx.begin(), idx.end());
      for (int64_t d : h->dimensions()) in[d] = Sub(C(shape.dimensions(d) - 1), idx[d]);
      return one(operand_at(0, in));
    }
    case HloOpcode::kPad: {
      const Shape& os = h->operand(0)->shape();
      Value ok = mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI1Type(), 1);
      Index in(shape.rank());
      for (int64_t d = 0; d < shape.rank(); ++d) {
        const PaddingDimension& p = h->attrs().padding_config.dimensions[d];
        Value rel = Sub(idx[d], C(p.edge_padding_low));
        Value good = Cmp(mlir::arith::CmpIPredicate::sge, rel, C(0));
        Value safe = Select(good, rel, C(0));
        Value q = safe;
        if (p.interior_padding > 0) {
          good = And(good, Cmp(mlir::arith::CmpIPredicate::eq, Rem(safe, p.interior_padding + 1), C(0)));
          q = Div(safe, p.interior_padding + 1);
        }
        good = And(good, Cmp(mlir::arith::CmpIPredicate::slt, q, C(os.dimensions(d))));
        ok = And(ok, good);
        in[d] = q;
      }
      if (SpeculatableRead(*h->operand(0)) && SpeculatableRead(*h->operand(1)) && os.element_count() > 0) {
        // Read at the index clamped into the operand, keep it or the
        // padding value: no branch in the loop body.
        for (int64_t d = 0; d < shape.rank(); ++d) in[d] = Min(in[d], C(os.dimensions(d) - 1));
        ASSIGN_OR_RETURN(Value x, operand_at(0, in));
        ASSIGN_OR_RETURN(Value padding, operand_at(1, {}));
        return std::vector<Value>{Select(ok, x, padding)};
      }
      return one(EmitIf(
          ok, ComputeType(t), [&]() { return operand_at(0, in); }, [&]() { return operand_at(1, {}); }));
    }
    case HloOpcode::kConcatenate: {
      int64_t dim = h->concatenate_dimension();
      // A chain of ifs: operand i covers [offset_i, offset_i + size_i).
      std::function<absl::StatusOr<Value>(int64_t, int64_t)> pick = [&](int64_t i, int64_t offset) -> absl::StatusOr<Value> {
        int64_t size = h->operand(i)->shape().dimensions(dim);
        Index in(idx.begin(), idx.end());
        in[dim] = Sub(idx[dim], C(offset));
        if (i + 1 == h->operand_count()) return operand_at(i, in);
        Value inside = Cmp(mlir::arith::CmpIPredicate::slt, idx[dim], C(offset + size));
        return EmitIf(
            inside, ComputeType(t), [&]() { return operand_at(i, in); },
            [&]() { return pick(i + 1, offset + size); });
      };
      return one(pick(0, 0));
    }
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice: {
      bool dus = op == HloOpcode::kDynamicUpdateSlice;
      const Shape& os = h->operand(0)->shape();
      int64_t first_index = dus ? 2 : 1;
      Index starts;
      for (int64_t d = 0; d < os.rank(); ++d) {
        const HloInstruction* s = h->operand(first_index + d);
        ASSIGN_OR_RETURN(Value v, EmitScalar(s, {}));
        Value i = IsSignedIntegralType(s->shape().element_type())
                      ? Value(mlir::arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), v))
                      : Value(mlir::arith::IndexCastUIOp::create(b_, loc_, b_.getIndexType(), v));
        int64_t size = dus ? h->operand(1)->shape().dimensions(d) : shape.dimensions(d);
        Value clamped = mlir::arith::MaxSIOp::create(
            b_, loc_, C(0), mlir::arith::MinSIOp::create(b_, loc_, i, C(os.dimensions(d) - size)));
        starts.push_back(clamped);
      }
      if (!dus) {
        Index in;
        for (int64_t d = 0; d < os.rank(); ++d) in.push_back(Add(idx[d], starts[d]));
        return one(operand_at(0, in));
      }
      Value inside = mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI1Type(), 1);
      Index in;
      for (int64_t d = 0; d < os.rank(); ++d) {
        Value rel = Sub(idx[d], starts[d]);
        inside = And(inside, Cmp(mlir::arith::CmpIPredicate::sge, rel, C(0)));
        inside = And(inside, Cmp(mlir::arith::CmpIPredicate::slt, rel, C(h->operand(1)->shape().dimensions(d))));
        in.push_back(rel);
      }
      return one(EmitIf(
          inside, ComputeType(t), [&]() { return operand_at(1, in); }, [&]() { return operand_at(0, idx); }));
    }
    case HloOpcode::kTuple:
    case HloOpcode::kFusion:
      return absl::InternalError(StrCat("codegen: ", h->name(), " emitted elementally"));
    case HloOpcode::kAddDependency: case HloOpcode::kAfterAll: case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart: case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart: case HloOpcode::kAllToAll:
    case HloOpcode::kAsyncDone: case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate:

     case HloOpcode::kCall: case HloOpcode::kCholesky:
    case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kComplex: case HloOpcode::kConditional: 
    case HloOpcode::kCopyDone: case HloOpcode::kCopyStart: case HloOpcode::kCustomCall:
    case HloOpcode::kDomain: case HloOpcode::kDynamicReshape: case HloOpcode::kFft:
     case HloOpcode::kGetDimensionSize: case HloOpcode::kImag:
    case HloOpcode::kInfeed: case HloOpcode::kOptimizationBarrier: case HloOpcode::kOutfeed:
    case HloOpcode::kPartitionId: case HloOpcode::kRaggedAllToAll: case HloOpcode::kRecv:
    case HloOpcode::kRecvDone: case HloOpcode::kReducePrecision: case HloOpcode::kReduceScatter:
    case HloOpcode::kReplicaId: case HloOpcode::kRng: case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:  case HloOpcode::kSelectAndScatter:
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize:
    case HloOpcode::kSort: case HloOpcode::kStochasticConvert: case HloOpcode::kTopK:
    case HloOpcode::kTriangularSolve: case HloOpcode::kWhile:
      case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
      return absl::UnimplementedError(
          StrCat("codegen: ", h->name(), ": no emitter for '", HloOpcodeString(op), "'"));
  }
  return absl::InternalError(StrCat("codegen: ", h->name(), ": opcode out of range"));
}

}  // namespace codegen_internal
}  // namespace passlab
