#include "core/verify/shape_inference.h"

#include <algorithm>
#include <set>

#include "absl/algorithm/container.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/verify/shape_inference_internal.h"

namespace passlab {

using namespace shape_inference_internal;

namespace {

// The fewest operands an opcode's inference reads (fixed arities exactly;
// variadic ones at least this many).
int64_t MinOperands(HloOpcode op) {
  int arity = HloOpcodeArity(op);
  if (arity != kVariadic) return arity;
  switch (op) {
    case HloOpcode::kDot: case HloOpcode::kReduce: case HloOpcode::kReduceWindow:
    case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kRng:
      return 2;
    case HloOpcode::kScatter:
      return 3;
    case HloOpcode::kDynamicSlice: case HloOpcode::kConcatenate: case HloOpcode::kSort:
    case HloOpcode::kMap: case HloOpcode::kConditional: case HloOpcode::kDynamicReshape:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: case HloOpcode::kAllToAll: case HloOpcode::kReduceScatter:
    case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kWhile: case HloOpcode::kAsyncUpdate:
    case HloOpcode::kRaggedAllToAll: case HloOpcode::kScan:
      return 1;
    default:
      return 0;
  }
}


// An elementwise result is laid out like its (first) operand, as XLA's
// InferUnaryOpShape and InferElementwiseBinaryOpShape keep the operand's
// layout: `abs(x)` written without a shape gets x's minor_to_major.
absl::StatusOr<Shape> WithOperandLayout(absl::StatusOr<Shape> inferred, const Shape& operand) {
  if (!inferred.ok() || !inferred->IsArray() || !operand.IsArray() || !operand.has_layout() ||
      operand.rank() != inferred->rank()) {
    return inferred;
  }
  Layout layout = Layout::Default(inferred->rank());
  layout.mutable_minor_to_major() = operand.layout().minor_to_major();
  inferred->set_layout(std::move(layout));
  return inferred;
}

}  // namespace

absl::StatusOr<Shape> InferInstructionShape(const HloInstruction& inst) {
  int arity = HloOpcodeArity(inst.opcode());
  int64_t needed = MinOperands(inst.opcode());
  if (inst.operand_count() < needed || (arity != kVariadic && inst.operand_count() != arity)) {
    return Err(inst, StrCat("has ", inst.operand_count(), " operand(s) but needs ",
                            arity != kVariadic ? "exactly " : "at least ", needed));
  }
  for (const HloInstruction* op : inst.operands()) {
    if (op->shape().element_type() == PrimitiveType::kInvalid) {
      return Err(inst, StrCat("operand '", op->name(), "' has no shape"));
    }
  }
  const HloAttributes& a = inst.attrs();
  auto operand = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  switch (inst.opcode()) {
    // Elementwise.
    case HloOpcode::kAbs: case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kClz:
    case HloOpcode::kCopy: case HloOpcode::kCos: case HloOpcode::kErf: case HloOpcode::kExp:
    case HloOpcode::kExpm1: case HloOpcode::kFloor: case HloOpcode::kImag: case HloOpcode::kIsFinite:
    case HloOpcode::kLog: case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kNegate:
    case HloOpcode::kNot: case HloOpcode::kPopulationCount: case HloOpcode::kReal:
    case HloOpcode::kReducePrecision: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kSign: case HloOpcode::kSin:
    case HloOpcode::kSqrt: case HloOpcode::kTan: case HloOpcode::kTanh:
    case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh:
    case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh:
      if (inst.opcode() == HloOpcode::kReducePrecision && (a.exponent_bits < 1 || a.mantissa_bits < 0)) {
        return Err(inst, "needs exponent_bits >= 1 and mantissa_bits >= 0");
      }
      if (inst.opcode() == HloOpcode::kCopy && !operand(0).IsArray()) return operand(0);
      return WithOperandLayout(InferUnary(inst), operand(0));
    case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2: case HloOpcode::kCompare:
    case HloOpcode::kComplex: case HloOpcode::kDivide: case HloOpcode::kMaximum: case HloOpcode::kMinimum:
    case HloOpcode::kMultiply: case HloOpcode::kOr: case HloOpcode::kPower: case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical:
    case HloOpcode::kStochasticConvert: case HloOpcode::kSubtract: case HloOpcode::kXor:
    case HloOpcode::kMulhi:
      return WithOperandLayout(InferBinary(inst), operand(0));
    case HloOpcode::kClamp: {
      const Shape& x = operand(1);
      for (int i : {0, 2}) {
        if (!operand(i).IsScalar() && !operand(i).SameDimensions(x)) return Err(inst, "min and max must be scalars or match the operand");
        if (operand(i).element_type() != x.element_type()) return Err(inst, "min, operand and max must share an element type");
      }
      return ArrayLike(x, x.element_type());
    }
    case HloOpcode::kSelect: {
      const Shape& p = operand(0);
      if (p.element_type() != PrimitiveType::kPred) return Err(inst, "the predicate must be pred");
      if (!operand(1).Compatible(operand(2))) return Err(inst, "on_true and on_false must have the same shape");
      if (!p.IsScalar() && !p.SameDimensions(operand(1))) return Err(inst, "the predicate must match the operands' dimensions");
      return operand(1).IsArray() ? ArrayLike(operand(1), operand(1).element_type()) : operand(1);
    }
    case HloOpcode::kConvert:
      if (!HasShape(inst)) return OwnShape(inst, "the target type is chosen by the instruction");
      if (!operand(0).IsArray()) return Err(inst, "needs an array operand");
      return ArrayLike(operand(0), inst.shape().element_type());
    case HloOpcode::kBitcastConvert:
      return InferBitcastConvert(inst);
    case HloOpcode::kMap: {
      if (inst.operand_count() == 0) return Err(inst, "needs operands");
      std::vector<Shape> params;
      for (const HloInstruction* op : inst.operands()) {
        if (!op->shape().SameDimensions(operand(0))) return Err(inst, "operands must have the same dimensions");
        params.push_back(Shape::Scalar(op->shape().element_type()));
      }
      const HloComputation* f = inst.to_apply();
      if (f == nullptr || f->root_instruction() == nullptr || !f->root_instruction()->shape().IsScalar()) {
        return Err(inst, "the mapped computation must return a scalar");
      }
      RETURN_IF_ERROR(CheckSignature(inst, f, params, f->root_instruction()->shape(), "mapped"));
      return ArrayLike(operand(0), f->root_instruction()->shape().element_type());
    }
    // Shape-defining ops.
    case HloOpcode::kParameter:
      return OwnShape(inst, "parameters declare their shape");
    case HloOpcode::kConstant:
      return inst.literal().shape();
    case HloOpcode::kIota:
      if (!HasShape(inst)) return OwnShape(inst, "iota declares its shape");
      if (!inst.shape().IsArray() || inst.iota_dimension() < 0 || inst.iota_dimension() >= std::max<int64_t>(inst.shape().rank(), 1)) {
        return Err(inst, "iota_dimension is out of range");
      }
      return inst.shape();
    case HloOpcode::kRng:
      if (!HasShape(inst)) return OwnShape(inst, "rng declares its shape");
      for (const HloInstruction* op : inst.operands()) {
        if (!op->shape().IsScalar() || op->shape().element_type() != inst.shape().element_type()) {
          return Err(inst, "the distribution parameters must be scalars of the result type");
        }
      }
      return inst.shape();
    case HloOpcode::kRngBitGenerator:
      if (!HasShape(inst)) return OwnShape(inst, "rng-bit-generator declares its shape");
      if (!inst.shape().IsTuple() || inst.shape().tuple_shapes_size() != 2 ||
          !inst.shape().tuple_shapes(0).Compatible(operand(0))) {
        return Err(inst, "the result must be (state, values) with the state shaped like the operand");
      }
      return inst.shape();
    case HloOpcode::kRngGetAndUpdateState:
      return Shape(PrimitiveType::kU64, {2});
    case HloOpcode::kReshape: case HloOpcode::kDynamicReshape: case HloOpcode::kBitcast: {
      if (!HasShape(inst)) return OwnShape(inst, "reshapes declare their shape");
      if (inst.opcode() == HloOpcode::kReshape || inst.opcode() == HloOpcode::kBitcast) {
        const Shape& in = operand(0);
        if (!in.IsArray() || !inst.shape().IsArray()) return Err(inst, "needs array shapes");
        if (inst.opcode() == HloOpcode::kReshape && in.element_type() != inst.shape().element_type()) {
          return Err(inst, "cannot change the element type (use convert)");
        }
        int64_t in_bytes = in.element_count() * PrimitiveBitWidth(in.element_type());
        int64_t out_bytes = inst.shape().element_count() * PrimitiveBitWidth(inst.shape().element_type());
        if (inst.opcode() == HloOpcode::kReshape ? in.element_count() != inst.shape().element_count()
                                                 : in_bytes != out_bytes) {
          return Err(inst, StrCat("cannot reshape ", in.ToString(false), " (", in.element_count(),
                                  " elements) to ", inst.shape().ToString(false), " (",
                                  inst.shape().element_count(), " elements)"));
        }
      }
      return inst.shape();
    }
    case HloOpcode::kBroadcast:
      return InferBroadcast(inst);
    case HloOpcode::kTranspose:
      return InferTranspose(inst);
    case HloOpcode::kReverse:
      RETURN_IF_ERROR(CheckDimsValid(inst, inst.dimensions(), operand(0).rank(), "reversed dimension"));
      return ArrayLike(operand(0), operand(0).element_type());
    case HloOpcode::kSlice:
      return InferSlice(inst);
    case HloOpcode::kDynamicSlice:
      return InferDynamicSlice(inst);
    case HloOpcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice(inst);
    case HloOpcode::kConcatenate:
      return InferConcatenate(inst);
    case HloOpcode::kPad:
      return InferPad(inst);
    case HloOpcode::kReduce:
      return InferReduce(inst);
    case HloOpcode::kReduceWindow:
      return InferReduceWindow(inst);
    case HloOpcode::kSelectAndScatter: {
      const Shape& op = operand(0);
      absl::StatusOr<Shape> windowed = InferWindowOutputShape(op, inst.window(), op.element_type());
      if (!windowed.ok()) return Err(inst, std::string(windowed.status().message()));
      if (!windowed->SameDimensions(operand(1))) {
        return Err(inst, StrCat("source is ", operand(1).ToString(false), " but the window gives ",
                                windowed->ToString(false)));
      }
      if (!operand(2).IsScalar()) return Err(inst, "init value must be a scalar");
      PrimitiveType t = op.element_type();
      if (absl::Status s = CheckSignature(inst, inst.select(), {Shape::Scalar(t), Shape::Scalar(t)},
                                          Shape::Scalar(PrimitiveType::kPred), "select");
          !s.ok()) {
        return s;
      }
      RETURN_IF_ERROR(CheckReducer(inst, inst.scatter(), {t}));
      return ArrayLike(op, t);
    }
    case HloOpcode::kDot: {
      PrimitiveType t = HasShape(inst) ? inst.shape().element_type() : operand(0).element_type();
      absl::StatusOr<Shape> s = InferDotShape(operand(0), operand(1), a.dot_dnums, t);
      return s;
    }
    case HloOpcode::kConvolution: {
      if (!a.conv_dnums.has_value()) return Err(inst, "missing dim_labels");
      PrimitiveType t = HasShape(inst) ? inst.shape().element_type() : operand(0).element_type();
      return InferConvolveShape(operand(0), operand(1), a.feature_group_count, a.batch_group_count,
                                inst.window(), *a.conv_dnums, t);
    }
    case HloOpcode::kGather:
      return InferGatherShape(operand(0), operand(1), a.gather_dnums, a.slice_sizes);
    case HloOpcode::kScatter:
      return InferScatter(inst);
    case HloOpcode::kSort:
      return InferSort(inst);
    case HloOpcode::kRaggedDot:
      return InferRaggedDot(inst);
    case HloOpcode::kScaledDot:
      return InferScaledDot(inst);
    case HloOpcode::kScan:
      return InferScan(inst);
    case HloOpcode::kTopK: {
      const Shape& op = operand(0);
      if (op.rank() < 1 || a.k < 0 || a.k > op.dimensions(op.rank() - 1)) return Err(inst, "k must be within the last dimension");
      Shape values = ArrayLike(op, op.element_type());
      values.set_dimensions(op.rank() - 1, a.k);
      Shape indices = ArrayLike(values, PrimitiveType::kS32);
      return Shape::Tuple({values, indices});
    }
    case HloOpcode::kFft:
      return InferFft(inst);
    case HloOpcode::kCholesky: {
      const Shape& op = operand(0);
      if (op.rank() < 2 || op.dimensions(op.rank() - 1) != op.dimensions(op.rank() - 2)) {
        return Err(inst, "needs square matrices in the minor two dimensions");
      }
      return ArrayLike(op, op.element_type());
    }
    case HloOpcode::kTriangularSolve: {
      const Shape& am = operand(0);
      const Shape& b = operand(1);
      if (am.rank() < 2 || am.dimensions(am.rank() - 1) != am.dimensions(am.rank() - 2)) return Err(inst, "a must be square");
      if (b.rank() != am.rank()) return Err(inst, "a and b need the same rank");
      int64_t n = am.dimensions(am.rank() - 1);
      int64_t bdim = a.triangular_solve.left_side ? b.dimensions(b.rank() - 2) : b.dimensions(b.rank() - 1);
      if (bdim != n) return Err(inst, "b's shared dimension must match a");
      return ArrayLike(b, b.element_type());
    }
    case HloOpcode::kBatchNormTraining: case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormGrad:
      return InferBatchNorm(inst);
    // Tuples and control flow.
    case HloOpcode::kTuple:
      return InferTuple(inst);
    case HloOpcode::kGetTupleElement: {
      const Shape& t = operand(0);
      if (!t.IsTuple() || inst.tuple_index() < 0 || inst.tuple_index() >= t.tuple_shapes_size()) {
        return Err(inst, StrCat("index ", inst.tuple_index(), " is out of range for ", t.ToString(false)));
      }
      return t.tuple_shapes(inst.tuple_index());
    }
    case HloOpcode::kWhile: {
      const Shape& s = operand(0);
      if (inst.called_computations().size() != 2) return Err(inst, "needs a condition and a body");
      RETURN_IF_ERROR(CheckSignature(inst, inst.while_condition(), {s}, Shape::Scalar(PrimitiveType::kPred), "condition"));
      RETURN_IF_ERROR(CheckSignature(inst, inst.while_body(), {s}, s, "body"));
      return s;
    }
    case HloOpcode::kConditional: {
      const Shape& index = operand(0);
      int64_t branches = inst.branch_count();
      if (branches < 1) return Err(inst, "needs at least one branch");
      if (!index.IsScalar() || (index.element_type() != PrimitiveType::kS32 &&
                                !(index.element_type() == PrimitiveType::kPred && branches == 2))) {
        return Err(inst, "the branch index must be s32[] (or pred[] with two branches)");
      }
      if (inst.operand_count() != branches + 1) return Err(inst, "needs one operand per branch");
      const HloComputation* b0 = inst.branch_computation(0);
      if (b0 == nullptr || b0->root_instruction() == nullptr) return Err(inst, "branch 0 is empty");
      Shape result = b0->root_instruction()->shape();
      for (int64_t i = 0; i < branches; ++i) {
        if (absl::Status s = CheckSignature(inst, inst.branch_computation(i), {operand(i + 1)}, result,
                                            StrCat("branch ", i));
            !s.ok()) {
          return s;
        }
      }
      return result;
    }
    case HloOpcode::kCall: case HloOpcode::kFusion: {
      const HloComputation* c = inst.to_apply();
      if (c == nullptr || c->root_instruction() == nullptr) return Err(inst, "needs a called computation");
      std::vector<Shape> params;
      for (const HloInstruction* op : inst.operands()) params.push_back(op->shape());
      if (absl::Status s = CheckSignature(inst, c, params, c->root_instruction()->shape(),
                                          inst.opcode() == HloOpcode::kCall ? "called" : "fused");
          !s.ok()) {
        return s;
      }
      return c->root_instruction()->shape();
    }
    case HloOpcode::kCustomCall:
      return OwnShape(inst, "custom calls declare their shape");
    case HloOpcode::kOptimizationBarrier: case HloOpcode::kDomain:
      return operand(0);
    case HloOpcode::kAddDependency:
      if (!operand(1).IsToken()) return Err(inst, "the second operand must be a token");
      return operand(0);
    case HloOpcode::kAfterAll:
      for (const HloInstruction* op : inst.operands()) {
        if (!op->shape().IsToken()) return Err(inst, "operands must be tokens");
      }
      return Shape::Token();
    case HloOpcode::kGetDimensionSize:
      if (inst.dimensions().size() != 1 || inst.dimensions(0) < 0 || inst.dimensions(0) >= operand(0).rank()) {
        return Err(inst, "needs one dimension within the rank");
      }
      return Shape::Scalar(PrimitiveType::kS32);
    case HloOpcode::kSetDimensionSize: {
      if (inst.dimensions().size() != 1 || inst.dimensions(0) < 0 || inst.dimensions(0) >= operand(0).rank()) {
        return Err(inst, "needs one dimension within the rank");
      }
      Shape r = ArrayLike(operand(0), operand(0).element_type());
      r.set_dynamic_dimension(inst.dimensions(0), true);
      return r;
    }
    case HloOpcode::kReplicaId: case HloOpcode::kPartitionId:
      return Shape::Scalar(PrimitiveType::kU32);
    // Collectives.
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kReduceScatter:
    case HloOpcode::kRaggedAllToAll:
      return InferCollective(inst);
    case HloOpcode::kAllReduceDone: case HloOpcode::kAllGatherDone: case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCopyDone: {
      const Shape& s = operand(0);
      if (inst.opcode() == HloOpcode::kAllReduceDone) return s;
      if (!s.IsTuple() || s.tuple_shapes_size() < 2) return Err(inst, "needs the tuple its -start produced");
      return s.tuple_shapes(1);
    }
    case HloOpcode::kCollectivePermuteStart:
      return Shape::Tuple({operand(0), operand(0), Shape::Scalar(PrimitiveType::kU32),
                           Shape::Scalar(PrimitiveType::kU32)});
    case HloOpcode::kCopyStart:
      return Shape::Tuple({operand(0), operand(0), Shape::Scalar(PrimitiveType::kU32)});
    case HloOpcode::kSend:
      if (!operand(1).IsToken()) return Err(inst, "the second operand must be a token");
      return Shape::Tuple({operand(0), Shape::Scalar(PrimitiveType::kU32), Shape::Token()});
    case HloOpcode::kSendDone:
      return Shape::Token();
    case HloOpcode::kRecv:
      return OwnShape(inst, "recv declares what it receives");
    case HloOpcode::kRecvDone: {
      const Shape& s = operand(0);
      if (!s.IsTuple() || s.tuple_shapes_size() != 3) return Err(inst, "needs the tuple recv produced");
      return Shape::Tuple({s.tuple_shapes(0), Shape::Token()});
    }
    case HloOpcode::kInfeed:
      return OwnShape(inst, "infeed declares what it reads");
    case HloOpcode::kOutfeed:
      if (!operand(1).IsToken()) return Err(inst, "the second operand must be a token");
      return Shape::Token();
    // Async ops (seed 001).
    case HloOpcode::kAsyncStart: {
      if (!HasShape(inst)) {
        const HloInstruction* w = inst.async_wrapped_instruction();
        if (w == nullptr) return Err(inst, "needs a wrapped computation");
        std::vector<Shape> ops;
        for (const HloInstruction* op : inst.operands()) ops.push_back(op->shape());
        return Shape::Tuple({Shape::Tuple(ops), w->shape(), Shape::Scalar(PrimitiveType::kS32)});
      }
      return inst.shape();
    }
    case HloOpcode::kAsyncUpdate:
      return operand(0);
    case HloOpcode::kAsyncDone: {
      const Shape& s = operand(0);
      if (!s.IsTuple() || s.tuple_shapes_size() < 2) return Err(inst, "needs the async-start tuple");
      return s.tuple_shapes(1);
    }
  }
  return Err(inst, "unknown opcode");
}

}  // namespace passlab
