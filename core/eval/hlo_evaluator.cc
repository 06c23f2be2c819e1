#include "core/eval/hlo_evaluator.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "core/eval/eval_internal.h"
#include "core/ir/str_util.h"

namespace passlab {

using eval::ForEachIndex;
using eval::Index;

class EvalVisitor {
 public:
  EvalVisitor(HloEvaluator& evaluator) : ev_(evaluator) {}

  absl::StatusOr<Literal> Run(const HloComputation& c, absl::Span<const Literal* const> args) {
    if (static_cast<int64_t>(args.size()) != c.num_parameters()) {
      return absl::InvalidArgumentError(StrCat("computation '", c.name(), "' takes ", c.num_parameters(),
                                               " arguments, got ", args.size()));
    }
    absl::flat_hash_map<const HloInstruction*, Literal> values;
    auto value = [&](const HloInstruction* i) -> const Literal& { return values.at(i); };
    for (const HloInstruction* inst : c.MakeInstructionPostOrder()) {
      absl::StatusOr<Literal> v = inst->opcode() == HloOpcode::kParameter
                                      ? absl::StatusOr<Literal>(*args[inst->parameter_number()])
                                      : Eval(*inst, value);
      if (!v.ok()) {
        std::string msg(v.status().message());
        if (msg.rfind("evaluating '", 0) == 0) return v.status();
        return absl::Status(v.status().code(), StrCat("evaluating '", inst->name(), "' (", HloOpcodeString(inst->opcode()),
                                                      ") in '", c.name(), "': ", msg));
      }
      values.emplace(inst, std::move(*v));
    }
    return std::move(values.at(c.root_instruction()));
  }

 private:
  using Values = std::function<const Literal&(const HloInstruction*)>;

  absl::StatusOr<Literal> Call(const HloComputation* c, std::vector<const Literal*> args) {
    return Run(*c, args);
  }

  absl::StatusOr<Literal> Eval(const HloInstruction& inst, const Values& value) {
    auto op = [&](int64_t i) -> const Literal& { return value(inst.operand(i)); };
    const Shape& shape = inst.shape();
    switch (inst.opcode()) {
      case HloOpcode::kConstant:
        if (inst.literal().elided()) return absl::FailedPreconditionError("the constant's values were elided ({...})");
        return inst.literal();
      case HloOpcode::kParameter:
        return absl::InternalError("parameters are bound by the caller");
      case HloOpcode::kTuple: {
        std::vector<Literal> elements;
        for (int64_t i = 0; i < inst.operand_count(); ++i) elements.push_back(op(i));
        return Literal::Tuple(std::move(elements));
      }
      case HloOpcode::kGetTupleElement:
        return op(0).tuple_elements()[inst.tuple_index()];
      case HloOpcode::kCopy: case HloOpcode::kBitcast: case HloOpcode::kReshape:
      case HloOpcode::kOptimizationBarrier: case HloOpcode::kDomain: case HloOpcode::kAddDependency:
        return Relabel(op(0), shape, inst.opcode() == HloOpcode::kBitcast);
      case HloOpcode::kConvert: {
        absl::StatusOr<Literal> r = op(0).Convert(shape.element_type());
        if (!r.ok()) return r;
        r->set_shape_layout(shape);
        return r;
      }
      case HloOpcode::kBitcastConvert:
        return BitcastConvert(op(0), shape);
      case HloOpcode::kCompare: case HloOpcode::kAdd: case HloOpcode::kSubtract: case HloOpcode::kMultiply:
      case HloOpcode::kDivide: case HloOpcode::kRemainder: case HloOpcode::kPower: case HloOpcode::kAtan2:
      case HloOpcode::kMaximum: case HloOpcode::kMinimum: case HloOpcode::kAnd: case HloOpcode::kOr:
      case HloOpcode::kXor: case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightLogical:
      case HloOpcode::kShiftRightArithmetic: case HloOpcode::kComplex: {
        Literal out(shape);
        const Literal& a = op(0);
        const Literal& b = op(1);
        for (int64_t i = 0; i < out.element_count(); ++i) {
          absl::Status s = eval::BinaryElement(inst.opcode(), inst.attrs().comparison_direction,
                                               inst.attrs().comparison_type, a, i, b, i, out, i);
          if (!s.ok()) return s;
        }
        return out;
      }
      case HloOpcode::kAbs: case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kClz:
      case HloOpcode::kCos: case HloOpcode::kErf: case HloOpcode::kExp: case HloOpcode::kExpm1:
      case HloOpcode::kFloor: case HloOpcode::kImag: case HloOpcode::kIsFinite: case HloOpcode::kLog:
      case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kNegate: case HloOpcode::kNot:
      case HloOpcode::kPopulationCount: case HloOpcode::kReal: case HloOpcode::kReducePrecision:
      case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt:
      case HloOpcode::kSign: case HloOpcode::kSin: case HloOpcode::kSqrt: case HloOpcode::kTan:
      case HloOpcode::kTanh: {
        Literal out(shape);
        const Literal& a = op(0);
        for (int64_t i = 0; i < out.element_count(); ++i) {
          if (absl::Status s = eval::UnaryElement(inst, a, i, out, i); !s.ok()) return s;
        }
        return out;
      }
      case HloOpcode::kSelect: {
        Literal out(shape);
        const Literal& p = op(0);
        const Literal& t = op(1);
        const Literal& f = op(2);
        bool scalar = p.shape().rank() == 0;
        int w = PrimitiveByteWidth(shape.element_type());
        for (int64_t i = 0; i < out.element_count(); ++i) {
          const Literal& src = p.GetBits(scalar ? 0 : i) ? t : f;
          std::memcpy(out.untyped_data() + i * w, src.untyped_data() + i * w, w);
        }
        return out;
      }
      case HloOpcode::kClamp: {
        Literal out(shape);
        const Literal& lo = op(0);
        const Literal& x = op(1);
        const Literal& hi = op(2);
        Literal tmp(shape);
        for (int64_t i = 0; i < out.element_count(); ++i) {
          int64_t li = lo.shape().rank() == 0 ? 0 : i, hi_i = hi.shape().rank() == 0 ? 0 : i;
          // clamp = min(max(x, lo), hi) with XLA's NaN propagation.
          if (absl::Status s = eval::BinaryElement(HloOpcode::kMaximum, {}, {}, x, i, lo, li, tmp, i); !s.ok()) return s;
          if (absl::Status s = eval::BinaryElement(HloOpcode::kMinimum, {}, {}, tmp, i, hi, hi_i, out, i); !s.ok()) return s;
        }
        return out;
      }
      case HloOpcode::kBroadcast: {
        Literal out(shape);
        const Literal& a = op(0);
        int w = PrimitiveByteWidth(shape.element_type());
        const auto& dims = inst.dimensions();
        ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
          int64_t src = 0;
          for (size_t k = 0; k < dims.size(); ++k) src = src * a.shape().dimensions(k) + idx[dims[k]];
          std::memcpy(out.untyped_data() + linear * w, a.untyped_data() + src * w, w);
        });
        return out;
      }
      case HloOpcode::kTranspose: {
        Literal out(shape);
        const Literal& a = op(0);
        int w = PrimitiveByteWidth(shape.element_type());
        std::vector<int64_t> strides = RowMajorStrides(a.shape().dimensions());
        const auto& perm = inst.dimensions();
        ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
          int64_t src = 0;
          for (size_t k = 0; k < perm.size(); ++k) src += idx[k] * strides[perm[k]];
          std::memcpy(out.untyped_data() + linear * w, a.untyped_data() + src * w, w);
        });
        return out;
      }
      case HloOpcode::kReverse: {
        Literal out(shape);
        const Literal& a = op(0);
        int w = PrimitiveByteWidth(shape.element_type());
        ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
          Index src = idx;
          for (int64_t d : inst.dimensions()) src[d] = shape.dimensions(d) - 1 - idx[d];
          std::memcpy(out.untyped_data() + linear * w, a.untyped_data() + eval::Linear(src, shape.dimensions()) * w, w);
        });
        return out;
      }
      case HloOpcode::kSlice: {
        Literal out(shape);
        const Literal& a = op(0);
        int w = PrimitiveByteWidth(shape.element_type());
        const auto& sl = inst.attrs().slice;
        ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
          Index src(idx.size());
          for (size_t d = 0; d < idx.size(); ++d) src[d] = sl[d].start + idx[d] * sl[d].stride;
          std::memcpy(out.untyped_data() + linear * w, a.untyped_data() + eval::Linear(src, a.shape().dimensions()) * w, w);
        });
        return out;
      }
      case HloOpcode::kDynamicSlice: {
        const Literal& a = op(0);
        Index start = ClampedStarts(inst, value, 1, a.shape(), inst.attrs().slice_sizes);
        Literal out(shape);
        int w = PrimitiveByteWidth(shape.element_type());
        ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
          Index src(idx.size());
          for (size_t d = 0; d < idx.size(); ++d) src[d] = start[d] + idx[d];
          std::memcpy(out.untyped_data() + linear * w, a.untyped_data() + eval::Linear(src, a.shape().dimensions()) * w, w);
        });
        return out;
      }
      case HloOpcode::kDynamicUpdateSlice: {
        Literal out = Relabel(op(0), shape, false);
        const Literal& u = op(1);
        Index start = ClampedStarts(inst, value, 2, shape, u.shape().dimensions());
        int w = PrimitiveByteWidth(shape.element_type());
        ForEachIndex(u.shape().dimensions(), [&](const Index& idx, int64_t linear) {
          Index dst(idx.size());
          for (size_t d = 0; d < idx.size(); ++d) dst[d] = start[d] + idx[d];
          std::memcpy(out.untyped_data() + eval::Linear(dst, shape.dimensions()) * w, u.untyped_data() + linear * w, w);
        });
        return out;
      }
      case HloOpcode::kConcatenate: {
        Literal out(shape);
        int w = PrimitiveByteWidth(shape.element_type());
        int64_t dim = inst.concatenate_dimension();
        int64_t offset = 0;
        for (int64_t k = 0; k < inst.operand_count(); ++k) {
          const Literal& a = op(k);
          ForEachIndex(a.shape().dimensions(), [&](const Index& idx, int64_t linear) {
            Index dst = idx;
            dst[dim] += offset;
            std::memcpy(out.untyped_data() + eval::Linear(dst, shape.dimensions()) * w, a.untyped_data() + linear * w, w);
          });
          offset += a.shape().dimensions(dim);
        }
        return out;
      }
      case HloOpcode::kPad: {
        Literal out(shape);
        const Literal& a = op(0);
        const Literal& pad = op(1);
        int w = PrimitiveByteWidth(shape.element_type());
        for (int64_t i = 0; i < out.element_count(); ++i) std::memcpy(out.untyped_data() + i * w, pad.untyped_data(), w);
        const auto& pc = inst.attrs().padding_config.dimensions;
        ForEachIndex(a.shape().dimensions(), [&](const Index& idx, int64_t linear) {
          Index dst(idx.size());
          for (size_t d = 0; d < idx.size(); ++d) {
            dst[d] = pc[d].edge_padding_low + idx[d] * (pc[d].interior_padding + 1);
            if (dst[d] < 0 || dst[d] >= shape.dimensions(d)) return;
          }
          std::memcpy(out.untyped_data() + eval::Linear(dst, shape.dimensions()) * w, a.untyped_data() + linear * w, w);
        });
        return out;
      }
      case HloOpcode::kIota: {
        Literal out(shape);
        int64_t dim = inst.iota_dimension();
        ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
          if (IsFloatingPointType(shape.element_type()) || IsComplexType(shape.element_type())) {
            out.SetDouble(linear, static_cast<double>(idx[dim]));
          } else {
            out.SetInt(linear, idx[dim]);
          }
        });
        return out;
      }
      case HloOpcode::kReduce:
        return Reduce(inst, value);
      case HloOpcode::kDot:
        return Dot(inst, op(0), op(1));
      case HloOpcode::kConvolution:
        return Convolution(inst, op(0), op(1));
      case HloOpcode::kMap: {
        Literal out(shape);
        for (int64_t i = 0; i < out.element_count(); ++i) {
          std::vector<Literal> scalars;
          for (int64_t k = 0; k < inst.operand_count(); ++k) scalars.push_back(Element(op(k), i));
          std::vector<const Literal*> ptrs;
          for (const Literal& l : scalars) ptrs.push_back(&l);
          absl::StatusOr<Literal> r = Call(inst.to_apply(), ptrs);
          if (!r.ok()) return r;
          SetElement(out, i, *r, 0);
        }
        return out;
      }
      case HloOpcode::kCall: case HloOpcode::kFusion: {
        std::vector<const Literal*> args;
        for (int64_t k = 0; k < inst.operand_count(); ++k) args.push_back(&op(k));
        absl::StatusOr<Literal> r = Call(inst.to_apply(), args);
        if (!r.ok()) return r;
        return Relabel(*r, shape, false);
      }
      case HloOpcode::kWhile: {
        Literal state = op(0);
        for (int64_t it = 0;; ++it) {
          if (it >= ev_.options_.max_loop_iterations) {
            return absl::ResourceExhaustedError(StrCat("while loop ran more than ", ev_.options_.max_loop_iterations, " iterations"));
          }
          absl::StatusOr<Literal> cond = Call(inst.while_condition(), {&state});
          if (!cond.ok()) return cond;
          if (!cond->GetBits(0)) break;
          absl::StatusOr<Literal> next = Call(inst.while_body(), {&state});
          if (!next.ok()) return next;
          state = std::move(*next);
        }
        return state;
      }
      case HloOpcode::kConditional: {
        const Literal& index = op(0);
        int64_t n = inst.branch_count();
        int64_t b;
        if (index.shape().element_type() == PrimitiveType::kPred) {
          b = index.GetBits(0) ? 0 : 1;
        } else {
          b = index.GetInt(0);
          if (b < 0 || b >= n) b = n - 1;  // out of range selects the last branch
        }
        absl::StatusOr<Literal> r = Call(inst.branch_computation(b), {&op(b + 1)});
        if (!r.ok()) return r;
        return Relabel(*r, shape, false);
      }
      case HloOpcode::kAsyncStart: {
        std::vector<const Literal*> args;
        for (int64_t k = 0; k < inst.operand_count(); ++k) args.push_back(&op(k));
        absl::StatusOr<Literal> r = Call(inst.async_wrapped_computation(), args);
        if (!r.ok()) return r;
        Literal out(shape);
        if (shape.tuple_shapes(0).IsTuple()) {
          for (int64_t k = 0; k < inst.operand_count(); ++k) out.tuple_elements()[0].tuple_elements()[k] = op(k);
        } else if (inst.operand_count() == 1) {
          out.tuple_elements()[0] = op(0);
        }
        out.tuple_elements()[1] = std::move(*r);
        return out;
      }
      case HloOpcode::kAsyncUpdate:
        return op(0);
      case HloOpcode::kAsyncDone: case HloOpcode::kCopyDone:
        return op(0).tuple_elements()[1];
      case HloOpcode::kCopyStart: {
        Literal out(shape);
        out.tuple_elements()[0] = op(0);
        out.tuple_elements()[1] = op(0);
        return out;
      }
      case HloOpcode::kAfterAll:
        return Literal(Shape::Token());
      case HloOpcode::kReplicaId: case HloOpcode::kPartitionId:
        return Literal(shape);  // zero: a single replica and partition
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherStart: case HloOpcode::kReduceScatter: case HloOpcode::kAllToAll:
      case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute: {
        // One replica: every collective passes its operand through.
        if (inst.operand_count() == 1 && op(0).shape().Compatible(shape)) return op(0);
        if (shape.IsTuple() && inst.operand_count() == shape.tuple_shapes_size()) {
          std::vector<Literal> e;
          for (int64_t k = 0; k < inst.operand_count(); ++k) e.push_back(op(k));
          return Literal::Tuple(std::move(e));
        }
        if (shape.IsTuple() && inst.operand_count() == 1) {  // *-start: (operand, result)
          return Literal::Tuple({op(0), op(0)});
        }
        return absl::UnimplementedError("this collective's shape does not describe a single-replica run");
      }
      case HloOpcode::kAllReduceDone:
        return op(0);
      case HloOpcode::kAllGatherDone: case HloOpcode::kCollectivePermuteDone:
        return op(0).shape().IsTuple() ? op(0).tuple_elements()[1] : op(0);
      case HloOpcode::kCollectivePermuteStart:
        return Literal::Tuple({op(0), op(0), Literal(Shape::Scalar(PrimitiveType::kU32)), Literal(Shape::Scalar(PrimitiveType::kU32))});
      case HloOpcode::kGetDimensionSize: {
        Literal out(Shape::Scalar(PrimitiveType::kS32));
        out.SetInt(0, op(0).shape().dimensions(inst.dimensions(0)));
        return out;
      }
      case HloOpcode::kSetDimensionSize:
        return Relabel(op(0), shape, false);
      case HloOpcode::kRng: {
        Literal out(shape);
        std::mt19937_64 gen(ev_.options_.rng_seed + ev_.rng_state_++);
        double a = op(0).GetDouble(0), b = op(1).GetDouble(0);
        for (int64_t i = 0; i < out.element_count(); ++i) {
          if (inst.attrs().distribution == RandomDistribution::kUniform) {
            out.SetDouble(i, IsIntegralType(shape.element_type())
                                 ? static_cast<double>(std::uniform_int_distribution<int64_t>(static_cast<int64_t>(a), static_cast<int64_t>(b) - 1)(gen))
                                 : std::uniform_real_distribution<double>(a, b)(gen));
          } else {
            out.SetDouble(i, std::normal_distribution<double>(a, b)(gen));
          }
        }
        return out;
      }
      case HloOpcode::kReduceWindow: case HloOpcode::kSelectAndScatter: case HloOpcode::kGather:
      case HloOpcode::kScatter: case HloOpcode::kSort: case HloOpcode::kBatchNormTraining:
      case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormGrad:
        return EvalMore(inst, value);
      case HloOpcode::kInfeed: case HloOpcode::kOutfeed: case HloOpcode::kSend: case HloOpcode::kSendDone:
      case HloOpcode::kRecv: case HloOpcode::kRecvDone:
        return absl::UnimplementedError("needs the outside world (infeed/outfeed/send/recv are not evaluated)");
      case HloOpcode::kCustomCall:
        return absl::UnimplementedError(StrCat("unsupported custom call target \"", inst.custom_call_target(), "\""));
      case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState: case HloOpcode::kFft:
      case HloOpcode::kCholesky: case HloOpcode::kTriangularSolve: case HloOpcode::kTopK:
      case HloOpcode::kDynamicReshape: case HloOpcode::kStochasticConvert: case HloOpcode::kRaggedAllToAll:
        return absl::UnimplementedError("not evaluated yet");
    }
    return absl::InternalError("unknown opcode");
  }

  // A copy with another shape's dims/layout (same row-major element order).
  static Literal Relabel(const Literal& src, const Shape& shape, bool bitcast) {
    if (shape.IsTuple() || src.shape().IsTuple()) {
      Literal l = src;
      if (l.shape().Compatible(shape)) l.set_shape_layout(shape);
      return l;
    }
    Literal out(shape);
    size_t n = std::min<size_t>(out.size_bytes(), src.size_bytes());
    if (n > 0) std::memcpy(out.untyped_data(), src.untyped_data(), n);
    (void)bitcast;
    return out;
  }

  static absl::StatusOr<Literal> BitcastConvert(const Literal& src, const Shape& shape) {
    // Reinterpret the bits; sizes of the element types may differ (XLA adds
    // or removes a minor dimension).
    Literal out(shape);
    int in_bits = PrimitiveBitWidth(src.shape().element_type());
    int out_bits = PrimitiveBitWidth(shape.element_type());
    if (in_bits == out_bits) {
      for (int64_t i = 0; i < out.element_count(); ++i) out.SetBits(i, src.GetBits(i));
    } else if (in_bits > out_bits) {
      int ratio = in_bits / out_bits;
      for (int64_t i = 0; i < src.element_count(); ++i) {
        uint64_t bits = src.GetBits(i);
        for (int r = 0; r < ratio; ++r) out.SetBits(i * ratio + r, (bits >> (r * out_bits)) & ((uint64_t{1} << out_bits) - 1));
      }
    } else {
      int ratio = out_bits / in_bits;
      for (int64_t i = 0; i < out.element_count(); ++i) {
        uint64_t bits = 0;
        for (int r = 0; r < ratio; ++r) bits |= src.GetBits(i * ratio + r) << (r * in_bits);
        out.SetBits(i, bits);
      }
    }
    return out;
  }

  Index ClampedStarts(const HloInstruction& inst, const Values& value, int64_t first, const Shape& operand,
                      const std::vector<int64_t>& sizes) {
    Index start(operand.rank());
    for (int64_t d = 0; d < operand.rank(); ++d) {
      int64_t s = value(inst.operand(first + d)).GetInt(0);
      start[d] = std::clamp<int64_t>(s, 0, operand.dimensions(d) - sizes[d]);
    }
    return start;
  }

  static Literal Element(const Literal& l, int64_t i) {
    Literal s(Shape::Scalar(l.shape().element_type()));
    int w = PrimitiveByteWidth(l.shape().element_type());
    std::memcpy(s.untyped_data(), l.untyped_data() + i * w, w);
    return s;
  }
  static void SetElement(Literal& dst, int64_t i, const Literal& src, int64_t j) {
    int w = PrimitiveByteWidth(dst.shape().element_type());
    std::memcpy(dst.untyped_data() + i * w, src.untyped_data() + j * w, w);
  }

  // Reduces `acc` (element k of out) with element i of `x` using the reducer.
  absl::Status Accumulate(const std::optional<eval::SimpleBinary>& simple, const HloComputation* reducer,
                          std::vector<Literal*> accs, int64_t k, std::vector<const Literal*> xs, int64_t i) {
    if (simple.has_value() && accs.size() == 1) {
      return simple->swapped ? eval::BinaryElement(simple->opcode, simple->direction, simple->type, *xs[0], i, *accs[0], k, *accs[0], k)
                             : eval::BinaryElement(simple->opcode, simple->direction, simple->type, *accs[0], k, *xs[0], i, *accs[0], k);
    }
    std::vector<Literal> scalars;
    for (Literal* a : accs) scalars.push_back(Element(*a, k));
    for (const Literal* x : xs) scalars.push_back(Element(*x, i));
    std::vector<const Literal*> ptrs;
    for (const Literal& l : scalars) ptrs.push_back(&l);
    absl::StatusOr<Literal> r = Call(reducer, ptrs);
    if (!r.ok()) return r.status();
    if (accs.size() == 1) {
      SetElement(*accs[0], k, *r, 0);
    } else {
      for (size_t n = 0; n < accs.size(); ++n) SetElement(*accs[n], k, r->tuple_elements()[n], 0);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Literal> Reduce(const HloInstruction& inst, const Values& value) {
    int64_t n = inst.operand_count() / 2;
    const Shape& in = inst.operand(0)->shape();
    std::vector<Literal> outs;
    for (int64_t k = 0; k < n; ++k) {
      Shape s = inst.shape().IsTuple() ? inst.shape().tuple_shapes(k) : inst.shape();
      Literal o(s);
      const Literal& init = value(inst.operand(n + k));
      for (int64_t i = 0; i < o.element_count(); ++i) SetElement(o, i, init, 0);
      outs.push_back(std::move(o));
    }
    std::vector<bool> reduced(in.rank(), false);
    for (int64_t d : inst.dimensions()) reduced[d] = true;
    std::vector<int64_t> out_dims;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (!reduced[d]) out_dims.push_back(in.dimensions(d));
    }
    std::optional<eval::SimpleBinary> simple = eval::RecognizeSimpleBinary(inst.to_apply());
    std::vector<Literal*> accs;
    for (Literal& o : outs) accs.push_back(&o);
    std::vector<const Literal*> xs;
    for (int64_t k = 0; k < n; ++k) xs.push_back(&value(inst.operand(k)));
    absl::Status status;
    Index out_idx(out_dims.size());
    ForEachIndex(in.dimensions(), [&](const Index& idx, int64_t linear) {
      if (!status.ok()) return;
      size_t j = 0;
      for (int64_t d = 0; d < in.rank(); ++d) {
        if (!reduced[d]) out_idx[j++] = idx[d];
      }
      status = Accumulate(simple, inst.to_apply(), accs, eval::Linear(out_idx, out_dims), xs, linear);
    });
    if (!status.ok()) return status;
    if (n == 1) return std::move(outs[0]);
    return Literal::Tuple(std::move(outs));
  }

  // dot: canonicalise to [batch, m, k] x [batch, k, n] in double precision.
  absl::StatusOr<Literal> Dot(const HloInstruction& inst, const Literal& lhs, const Literal& rhs) {
    const DotDimensionNumbers& d = inst.attrs().dot_dnums;
    const Shape& ls = lhs.shape();
    const Shape& rs = rhs.shape();
    if (IsComplexType(ls.element_type())) return absl::UnimplementedError("complex dot is not evaluated yet");
    auto free_dims = [](int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
      std::vector<int64_t> out;
      for (int64_t i = 0; i < rank; ++i) {
        if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) out.push_back(i);
      }
      return out;
    };
    std::vector<int64_t> lf = free_dims(ls.rank(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions);
    std::vector<int64_t> rf = free_dims(rs.rank(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions);
    auto product = [](const Shape& s, const std::vector<int64_t>& dims) {
      int64_t p = 1;
      for (int64_t x : dims) p *= s.dimensions(x);
      return p;
    };
    int64_t B = product(ls, d.lhs_batch_dimensions), M = product(ls, lf), K = product(ls, d.lhs_contracting_dimensions),
            N = product(rs, rf);
    // Gather into canonical row-major arrays.
    auto gather = [](const Literal& l, const std::vector<int64_t>& order) {
      std::vector<double> out(l.element_count());
      const Shape& s = l.shape();
      std::vector<int64_t> strides = RowMajorStrides(s.dimensions());
      std::vector<int64_t> dims;
      for (int64_t o : order) dims.push_back(s.dimensions(o));
      ForEachIndex(dims, [&](const Index& idx, int64_t linear) {
        int64_t src = 0;
        for (size_t k = 0; k < order.size(); ++k) src += idx[k] * strides[order[k]];
        out[linear] = l.GetDouble(src);
      });
      return out;
    };
    std::vector<int64_t> lorder = d.lhs_batch_dimensions;
    lorder.insert(lorder.end(), lf.begin(), lf.end());
    lorder.insert(lorder.end(), d.lhs_contracting_dimensions.begin(), d.lhs_contracting_dimensions.end());
    std::vector<int64_t> rorder = d.rhs_batch_dimensions;
    rorder.insert(rorder.end(), d.rhs_contracting_dimensions.begin(), d.rhs_contracting_dimensions.end());
    rorder.insert(rorder.end(), rf.begin(), rf.end());
    std::vector<double> L = gather(lhs, lorder), R = gather(rhs, rorder);
    std::vector<double> O(static_cast<size_t>(B * M * N), 0.0);
    auto work = [&](int64_t row_begin, int64_t row_end) {
      for (int64_t r = row_begin; r < row_end; ++r) {
        int64_t b = r / std::max<int64_t>(M, 1), i = r % std::max<int64_t>(M, 1);
        double* o = &O[(b * M + i) * N];
        const double* l = &L[(b * M + i) * K];
        const double* rb = &R[b * K * N];
        for (int64_t k = 0; k < K; ++k) {
          double a = l[k];
          const double* rr = rb + k * N;
          for (int64_t j = 0; j < N; ++j) o[j] += a * rr[j];
        }
      }
    };
    Parallel(B * M, B * M * K * N, work);
    Literal out(inst.shape());
    for (int64_t i = 0; i < out.element_count(); ++i) out.SetDouble(i, O[i]);
    return out;
  }

  // Runs work(begin, end) over [0, n) on two threads when the job is large.
  static void Parallel(int64_t n, int64_t cost, const std::function<void(int64_t, int64_t)>& work) {
    unsigned threads = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
    if (cost < (1 << 16) || n < 2 || threads < 2) {
      work(0, n);
      return;
    }
    int64_t mid = n / 2;
    std::thread t([&] { work(mid, n); });
    work(0, mid);
    t.join();
  }

  absl::StatusOr<Literal> Convolution(const HloInstruction& inst, const Literal& lhs, const Literal& rhs) {
    const ConvolutionDimensionNumbers& d = *inst.attrs().conv_dnums;
    const Window& w = inst.window();
    const Shape& ls = lhs.shape();
    const Shape& rs = rhs.shape();
    const Shape& os = inst.shape();
    if (IsComplexType(ls.element_type())) return absl::UnimplementedError("complex convolution is not evaluated yet");
    int64_t spatial = static_cast<int64_t>(d.input_spatial_dimensions.size());
    int64_t fgc = inst.attrs().feature_group_count, bgc = inst.attrs().batch_group_count;
    int64_t k_in = rs.dimensions(d.kernel_input_feature_dimension);
    int64_t k_out = rs.dimensions(d.kernel_output_feature_dimension);
    int64_t out_per_fgroup = k_out / fgc, out_per_bgroup = k_out / bgc;
    int64_t in_batch_per_bgroup = ls.dimensions(d.input_batch_dimension) / bgc;
    std::vector<double> L(lhs.element_count()), R(rhs.element_count());
    for (int64_t i = 0; i < lhs.element_count(); ++i) L[i] = lhs.GetDouble(i);
    for (int64_t i = 0; i < rhs.element_count(); ++i) R[i] = rhs.GetDouble(i);
    std::vector<int64_t> lstr = RowMajorStrides(ls.dimensions()), rstr = RowMajorStrides(rs.dimensions());
    std::vector<int64_t> kdims(spatial);
    for (int64_t s = 0; s < spatial; ++s) kdims[s] = rs.dimensions(d.kernel_spatial_dimensions[s]);
    std::vector<double> O(os.element_count(), 0.0);
    std::vector<int64_t> out_dims = os.dimensions();
    auto work = [&](int64_t begin, int64_t end) {
      Index oidx(out_dims.size());
      std::vector<int64_t> in_pos(spatial);
      for (int64_t linear = begin; linear < end; ++linear) {
        int64_t rem = linear;
        for (int64_t k = static_cast<int64_t>(out_dims.size()) - 1; k >= 0; --k) {
          oidx[k] = rem % out_dims[k];
          rem /= out_dims[k];
        }
        int64_t ob = oidx[d.output_batch_dimension], of = oidx[d.output_feature_dimension];
        int64_t fgroup = of / out_per_fgroup, bgroup = of / out_per_bgroup;
        int64_t ib = bgroup * in_batch_per_bgroup + ob;
        double sum = 0;
        ForEachIndex(kdims, [&](const Index& kidx, int64_t) {
          int64_t loff = ib * lstr[d.input_batch_dimension];
          int64_t roff = of * rstr[d.kernel_output_feature_dimension];
          for (int64_t s = 0; s < spatial; ++s) {
            const WindowDimension& wd = w.dimensions[s];
            int64_t kpos = wd.window_reversal ? kdims[s] - 1 - kidx[s] : kidx[s];
            int64_t pos = oidx[d.output_spatial_dimensions[s]] * wd.stride - wd.padding_low + kidx[s] * wd.window_dilation;
            if (pos < 0 || pos % wd.base_dilation != 0) return;
            pos /= wd.base_dilation;
            if (pos >= ls.dimensions(d.input_spatial_dimensions[s])) return;
            loff += pos * lstr[d.input_spatial_dimensions[s]];
            roff += kpos * rstr[d.kernel_spatial_dimensions[s]];
          }
          for (int64_t c = 0; c < k_in; ++c) {
            int64_t ic = fgroup * k_in + c;
            sum += L[loff + ic * lstr[d.input_feature_dimension]] * R[roff + c * rstr[d.kernel_input_feature_dimension]];
          }
        });
        O[linear] = sum;
      }
    };
    int64_t kernel_volume = k_in;
    for (int64_t k : kdims) kernel_volume *= k;
    Parallel(os.element_count(), os.element_count() * kernel_volume, work);
    Literal out(os);
    for (int64_t i = 0; i < out.element_count(); ++i) out.SetDouble(i, O[i]);
    return out;
  }

  absl::StatusOr<Literal> EvalMore(const HloInstruction& inst, const Values& value);

  HloEvaluator& ev_;
};

absl::StatusOr<Literal> EvalVisitor::EvalMore(const HloInstruction& inst, const Values& value) {
  auto op = [&](int64_t i) -> const Literal& { return value(inst.operand(i)); };
  const Shape& shape = inst.shape();
  switch (inst.opcode()) {
    case HloOpcode::kReduceWindow: {
      int64_t n = inst.operand_count() / 2;
      const Shape& in = inst.operand(0)->shape();
      const Window& w = inst.window();
      std::vector<Literal> outs;
      for (int64_t k = 0; k < n; ++k) {
        Literal o(shape.IsTuple() ? shape.tuple_shapes(k) : shape);
        for (int64_t i = 0; i < o.element_count(); ++i) SetElement(o, i, op(n + k), 0);
        outs.push_back(std::move(o));
      }
      std::vector<Literal*> accs;
      for (Literal& o : outs) accs.push_back(&o);
      std::vector<const Literal*> xs;
      for (int64_t k = 0; k < n; ++k) xs.push_back(&op(k));
      std::optional<eval::SimpleBinary> simple = eval::RecognizeSimpleBinary(inst.to_apply());
      std::vector<int64_t> wdims;
      for (const WindowDimension& wd : w.dimensions) wdims.push_back(wd.size);
      const std::vector<int64_t>& out_dims = outs[0].shape().dimensions();
      absl::Status status;
      ForEachIndex(out_dims, [&](const Index& oidx, int64_t olin) {
        ForEachIndex(wdims, [&](const Index& widx, int64_t) {
          if (!status.ok()) return;
          Index src(in.rank());
          for (int64_t dd = 0; dd < in.rank(); ++dd) {
            const WindowDimension& wd = w.dimensions[dd];
            int64_t pos = oidx[dd] * wd.stride - wd.padding_low + widx[dd] * wd.window_dilation;
            if (pos < 0 || pos % wd.base_dilation != 0) return;
            pos /= wd.base_dilation;
            if (pos >= in.dimensions(dd)) return;
            src[dd] = pos;
          }
          status = Accumulate(simple, inst.to_apply(), accs, olin, xs, eval::Linear(src, in.dimensions()));
        });
      });
      if (!status.ok()) return status;
      if (n == 1) return std::move(outs[0]);
      return Literal::Tuple(std::move(outs));
    }
    case HloOpcode::kSelectAndScatter: {
      const Literal& operand = op(0);
      const Literal& source = op(1);
      Literal out(shape);
      for (int64_t i = 0; i < out.element_count(); ++i) SetElement(out, i, op(2), 0);
      const Window& w = inst.window();
      const Shape& in = operand.shape();
      std::vector<int64_t> wdims;
      for (const WindowDimension& wd : w.dimensions) wdims.push_back(wd.size);
      std::optional<eval::SimpleBinary> select = eval::RecognizeSimpleBinary(inst.select());
      std::optional<eval::SimpleBinary> scatter = eval::RecognizeSimpleBinary(inst.scatter());
      absl::Status status;
      ForEachIndex(source.shape().dimensions(), [&](const Index& sidx, int64_t slin) {
        int64_t best = -1;
        ForEachIndex(wdims, [&](const Index& widx, int64_t) {
          if (!status.ok()) return;
          Index src(in.rank());
          for (int64_t dd = 0; dd < in.rank(); ++dd) {
            const WindowDimension& wd = w.dimensions[dd];
            int64_t pos = sidx[dd] * wd.stride - wd.padding_low + widx[dd];
            if (pos < 0 || pos >= in.dimensions(dd)) return;
            src[dd] = pos;
          }
          int64_t cand = eval::Linear(src, in.dimensions());
          if (best < 0) {
            best = cand;
            return;
          }
          // Keep `best` when select(best, cand) is true.
          bool keep;
          if (select.has_value() && select->opcode == HloOpcode::kCompare) {
            Literal r(Shape::Scalar(PrimitiveType::kPred));
            int64_t a = select->swapped ? cand : best, b = select->swapped ? best : cand;
            status = eval::BinaryElement(HloOpcode::kCompare, select->direction, select->type, operand, a, operand, b, r, 0);
            keep = r.GetBits(0);
          } else {
            Literal x = Element(operand, best), y = Element(operand, cand);
            absl::StatusOr<Literal> r = Call(inst.select(), {&x, &y});
            if (!r.ok()) {
              status = r.status();
              return;
            }
            keep = r->GetBits(0);
          }
          if (!keep) best = cand;
        });
        if (best < 0 || !status.ok()) return;
        status = Accumulate(scatter, inst.scatter(), {&out}, best, {&source}, slin);
      });
      if (!status.ok()) return status;
      return out;
    }
    case HloOpcode::kSort: {
      int64_t n = inst.operand_count();
      const Shape& s = inst.operand(0)->shape();
      int64_t dim = inst.dimensions(0);
      std::vector<Literal> outs;
      for (int64_t k = 0; k < n; ++k) outs.push_back(op(k));
      std::vector<int64_t> outer = s.dimensions();
      outer[dim] = 1;
      std::vector<int64_t> strides = RowMajorStrides(s.dimensions());
      std::optional<eval::SimpleBinary> simple = eval::RecognizeSimpleBinary(inst.to_apply());
      absl::Status status;
      ForEachIndex(outer, [&](const Index& base, int64_t) {
        int64_t start = eval::Linear(base, s.dimensions());
        std::vector<int64_t> order(s.dimensions(dim));
        std::iota(order.begin(), order.end(), 0);
        auto less = [&](int64_t a, int64_t b) -> bool {
          if (!status.ok()) return false;
          int64_t ia = start + a * strides[dim], ib = start + b * strides[dim];
          if (simple.has_value() && simple->opcode == HloOpcode::kCompare && n == 1) {
            Literal r(Shape::Scalar(PrimitiveType::kPred));
            status = eval::BinaryElement(HloOpcode::kCompare, simple->direction, simple->type, op(0),
                                         simple->swapped ? ib : ia, op(0), simple->swapped ? ia : ib, r, 0);
            return r.GetBits(0);
          }
          std::vector<Literal> scalars;
          for (int64_t k = 0; k < n; ++k) {
            scalars.push_back(Element(op(k), ia));
            scalars.push_back(Element(op(k), ib));
          }
          std::vector<const Literal*> ptrs;
          for (const Literal& l : scalars) ptrs.push_back(&l);
          absl::StatusOr<Literal> r = Call(inst.to_apply(), ptrs);
          if (!r.ok()) {
            status = r.status();
            return false;
          }
          return r->GetBits(0) != 0;
        };
        std::stable_sort(order.begin(), order.end(), less);
        for (int64_t k = 0; k < n; ++k) {
          for (size_t p = 0; p < order.size(); ++p) {
            SetElement(outs[k], start + p * strides[dim], op(k), start + order[p] * strides[dim]);
          }
        }
      });
      if (!status.ok()) return status;
      if (n == 1) return std::move(outs[0]);
      return Literal::Tuple(std::move(outs));
    }
    case HloOpcode::kGather: {
      const Literal& operand = op(0);
      const Literal& indices = op(1);
      const GatherDimensionNumbers& g = inst.attrs().gather_dnums;
      const auto& sizes = inst.attrs().slice_sizes;
      const Shape& os = operand.shape();
      Literal out(shape);
      std::vector<int64_t> batch_out_dims, offset_out_dims;
      for (int64_t i = 0; i < shape.rank(); ++i) {
        (std::find(g.offset_dims.begin(), g.offset_dims.end(), i) != g.offset_dims.end() ? offset_out_dims : batch_out_dims).push_back(i);
      }
      // Operand dims that offsets walk along (not collapsed, not batching).
      std::vector<int64_t> offset_operand_dims;
      for (int64_t i = 0; i < os.rank(); ++i) {
        if (std::find(g.collapsed_slice_dims.begin(), g.collapsed_slice_dims.end(), i) == g.collapsed_slice_dims.end() &&
            std::find(g.operand_batching_dims.begin(), g.operand_batching_dims.end(), i) == g.operand_batching_dims.end()) {
          offset_operand_dims.push_back(i);
        }
      }
      int w = PrimitiveByteWidth(shape.element_type());
      const Shape& is = indices.shape();
      ForEachIndex(shape.dimensions(), [&](const Index& oidx, int64_t olin) {
        // The batch index into start_indices (index_vector_dim removed).
        Index bidx;
        for (int64_t d : batch_out_dims) bidx.push_back(oidx[d]);
        Index sidx(is.rank());
        size_t bj = 0;
        for (int64_t d = 0; d < is.rank(); ++d) {
          if (d != g.index_vector_dim) sidx[d] = bidx[bj++];
        }
        Index start(os.rank(), 0);
        for (size_t k = 0; k < g.start_index_map.size(); ++k) {
          if (g.index_vector_dim < is.rank()) sidx[g.index_vector_dim] = static_cast<int64_t>(k);
          start[g.start_index_map[k]] = indices.GetInt(eval::Linear(sidx, is.dimensions()));
        }
        for (size_t k = 0; k < g.operand_batching_dims.size(); ++k) {
          int64_t ibd = g.start_indices_batching_dims[k];
          start[g.operand_batching_dims[k]] = sidx[ibd];
        }
        Index src(os.rank());
        for (int64_t d = 0; d < os.rank(); ++d) {
          bool batching = std::find(g.operand_batching_dims.begin(), g.operand_batching_dims.end(), d) != g.operand_batching_dims.end();
          src[d] = batching ? start[d] : std::clamp<int64_t>(start[d], 0, os.dimensions(d) - sizes[d]);
        }
        for (size_t k = 0; k < offset_operand_dims.size(); ++k) src[offset_operand_dims[k]] += oidx[offset_out_dims[k]];
        std::memcpy(out.untyped_data() + olin * w, operand.untyped_data() + eval::Linear(src, os.dimensions()) * w, w);
      });
      return out;
    }
    case HloOpcode::kScatter: {
      int64_t n = (inst.operand_count() - 1) / 2;
      const Literal& indices = op(n);
      const ScatterDimensionNumbers& sd = inst.attrs().scatter_dnums;
      std::vector<Literal> outs;
      for (int64_t k = 0; k < n; ++k) outs.push_back(op(k));
      const Shape& os = outs[0].shape();
      const Shape& us = op(n + 1).shape();
      const Shape& is = indices.shape();
      std::vector<int64_t> window_operand_dims;
      for (int64_t i = 0; i < os.rank(); ++i) {
        if (std::find(sd.inserted_window_dims.begin(), sd.inserted_window_dims.end(), i) == sd.inserted_window_dims.end() &&
            std::find(sd.input_batching_dims.begin(), sd.input_batching_dims.end(), i) == sd.input_batching_dims.end()) {
          window_operand_dims.push_back(i);
        }
      }
      std::optional<eval::SimpleBinary> simple = eval::RecognizeSimpleBinary(inst.to_apply());
      std::vector<Literal*> accs;
      for (Literal& o : outs) accs.push_back(&o);
      std::vector<const Literal*> xs;
      for (int64_t k = 0; k < n; ++k) xs.push_back(&op(n + 1 + k));
      absl::Status status;
      ForEachIndex(us.dimensions(), [&](const Index& uidx, int64_t ulin) {
        if (!status.ok()) return;
        Index scatter_idx, window_idx;
        for (int64_t d = 0; d < us.rank(); ++d) {
          (std::find(sd.update_window_dims.begin(), sd.update_window_dims.end(), d) != sd.update_window_dims.end() ? window_idx : scatter_idx)
              .push_back(uidx[d]);
        }
        Index sidx(is.rank());
        size_t j = 0;
        for (int64_t d = 0; d < is.rank(); ++d) {
          if (d != sd.index_vector_dim) sidx[d] = scatter_idx[j++];
        }
        Index dst(os.rank(), 0);
        for (size_t k = 0; k < sd.scatter_dims_to_operand_dims.size(); ++k) {
          if (sd.index_vector_dim < is.rank()) sidx[sd.index_vector_dim] = static_cast<int64_t>(k);
          dst[sd.scatter_dims_to_operand_dims[k]] = indices.GetInt(eval::Linear(sidx, is.dimensions()));
        }
        for (size_t k = 0; k < sd.input_batching_dims.size(); ++k) dst[sd.input_batching_dims[k]] = sidx[sd.scatter_indices_batching_dims[k]];
        for (size_t k = 0; k < window_operand_dims.size(); ++k) dst[window_operand_dims[k]] += window_idx[k];
        for (int64_t d = 0; d < os.rank(); ++d) {
          if (dst[d] < 0 || dst[d] >= os.dimensions(d)) return;  // out of bounds updates are skipped
        }
        status = Accumulate(simple, inst.to_apply(), accs, eval::Linear(dst, os.dimensions()), xs, ulin);
      });
      if (!status.ok()) return status;
      if (n == 1) return std::move(outs[0]);
      return Literal::Tuple(std::move(outs));
    }
    case HloOpcode::kBatchNormTraining: case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormGrad: {
      const Literal& x = op(0);
      const Shape& xs = x.shape();
      int64_t f = inst.attrs().feature_index;
      int64_t nf = xs.dimensions(f);
      double eps = inst.attrs().epsilon;
      std::vector<double> mean(nf, 0), var(nf, 0), count(nf, 0);
      auto feature_of = [&](int64_t linear) {
        int64_t rem = linear;
        for (int64_t d = xs.rank() - 1; d > f; --d) rem /= xs.dimensions(d);
        return rem % nf;
      };
      if (inst.opcode() == HloOpcode::kBatchNormInference) {
        const Literal& scale = op(1);
        const Literal& offset = op(2);
        Literal out(shape);
        for (int64_t i = 0; i < x.element_count(); ++i) {
          int64_t c = feature_of(i);
          double m = op(3).GetDouble(c), v = op(4).GetDouble(c);
          out.SetDouble(i, (x.GetDouble(i) - m) / std::sqrt(v + eps) * scale.GetDouble(c) + offset.GetDouble(c));
        }
        return out;
      }
      if (inst.opcode() == HloOpcode::kBatchNormTraining) {
        for (int64_t i = 0; i < x.element_count(); ++i) {
          int64_t c = feature_of(i);
          mean[c] += x.GetDouble(i);
          count[c] += 1;
        }
        for (int64_t c = 0; c < nf; ++c) mean[c] /= std::max(count[c], 1.0);
        for (int64_t i = 0; i < x.element_count(); ++i) {
          double dlt = x.GetDouble(i) - mean[feature_of(i)];
          var[feature_of(i)] += dlt * dlt;
        }
        for (int64_t c = 0; c < nf; ++c) var[c] /= std::max(count[c], 1.0);
        Literal y(shape.tuple_shapes(0)), m(shape.tuple_shapes(1)), v(shape.tuple_shapes(2));
        for (int64_t i = 0; i < x.element_count(); ++i) {
          int64_t c = feature_of(i);
          y.SetDouble(i, (x.GetDouble(i) - mean[c]) / std::sqrt(var[c] + eps) * op(1).GetDouble(c) + op(2).GetDouble(c));
        }
        for (int64_t c = 0; c < nf; ++c) {
          m.SetDouble(c, mean[c]);
          v.SetDouble(c, var[c]);
        }
        return Literal::Tuple({std::move(y), std::move(m), std::move(v)});
      }
      // batch-norm-grad(operand, scale, mean, variance, grad_output).
      const Literal& scale = op(1);
      const Literal& gm = op(2);
      const Literal& gv = op(3);
      const Literal& dy = op(4);
      std::vector<double> sum_dy(nf, 0), sum_dy_xmu(nf, 0);
      for (int64_t i = 0; i < x.element_count(); ++i) {
        int64_t c = feature_of(i);
        count[c] += 1;
        sum_dy[c] += dy.GetDouble(i);
        sum_dy_xmu[c] += dy.GetDouble(i) * (x.GetDouble(i) - gm.GetDouble(c));
      }
      Literal dx(shape.tuple_shapes(0)), dscale(shape.tuple_shapes(1)), doffset(shape.tuple_shapes(2));
      for (int64_t i = 0; i < x.element_count(); ++i) {
        int64_t c = feature_of(i);
        double inv = 1.0 / std::sqrt(gv.GetDouble(c) + eps), n = count[c];
        double xmu = x.GetDouble(i) - gm.GetDouble(c);
        dx.SetDouble(i, scale.GetDouble(c) * inv / n *
                            (n * dy.GetDouble(i) - sum_dy[c] - xmu * inv * inv * sum_dy_xmu[c]));
      }
      for (int64_t c = 0; c < nf; ++c) {
        dscale.SetDouble(c, sum_dy_xmu[c] / std::sqrt(gv.GetDouble(c) + eps));
        doffset.SetDouble(c, sum_dy[c]);
      }
      return Literal::Tuple({std::move(dx), std::move(dscale), std::move(doffset)});
    }
    default:
      return absl::InternalError("EvalMore called for an unexpected opcode");
  }
}

absl::StatusOr<Literal> HloEvaluator::Evaluate(const HloModule& module, absl::Span<const Literal> args) {
  std::vector<const Literal*> ptrs;
  for (const Literal& a : args) ptrs.push_back(&a);
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  for (int64_t i = 0; i < entry->num_parameters() && i < static_cast<int64_t>(args.size()); ++i) {
    if (!args[i].shape().Compatible(entry->parameter_instruction(i)->shape())) {
      return absl::InvalidArgumentError(StrCat("argument ", i, " ('", entry->parameter_instruction(i)->name(), "') is ",
                                               args[i].shape().ToString(false), " but the parameter is ",
                                               entry->parameter_instruction(i)->shape().ToString(false)));
    }
  }
  return EvaluateComputation(*entry, ptrs);
}

absl::StatusOr<Literal> HloEvaluator::EvaluateComputation(const HloComputation& computation,
                                                          absl::Span<const Literal* const> args) {
  EvalVisitor visitor(*this);
  return visitor.Run(computation, args);
}

}  // namespace passlab
