// Control flow, tuples and wrappers (call, fusion, map, while, conditional,
// async and copy start/update/done), collectives as run by one replica, and
// custom calls.
#include <algorithm>
#include <cstring>

#include "core/eval/eval_internal.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab::eval {
namespace {

// The same values under the instruction's shape (layouts only).
Literal WithShape(Literal l, const Shape& shape) {
  if (l.shape().Compatible(shape)) l.set_shape_layout(shape);
  return l;
}

absl::StatusOr<Literal> CallWith(EvalContext& ctx, const HloComputation* c, Operands ops, const Shape& shape) {
  if (c == nullptr) return absl::InvalidArgumentError("no called computation");
  ASSIGN_OR_RETURN(Literal r, ctx.Call(*c, ops));
  return WithShape(std::move(r), shape);
}

absl::StatusOr<Literal> Map(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  Literal out(inst.shape());
  std::vector<Literal> scalars(ops.size());
  std::vector<const Literal*> ptrs(ops.size());
  for (int64_t i = 0, count = out.element_count(); i < count; ++i) {
    for (size_t k = 0; k < ops.size(); ++k) {
      scalars[k] = Element(*ops[k], i);
      ptrs[k] = &scalars[k];
    }
    ASSIGN_OR_RETURN(Literal r, ctx.Call(*inst.to_apply(), ptrs));
    CopyElement(out, i, r, 0);
  }
  return out;
}

absl::StatusOr<Literal> While(const HloInstruction& inst, const Literal& init, EvalContext& ctx) {
  Literal state = init;
  for (int64_t it = 0;; ++it) {
    if (it >= ctx.options().max_loop_iterations) {
      return absl::ResourceExhaustedError(
          StrCat("while loop ran more than ", ctx.options().max_loop_iterations, " iterations"));
    }
    const Literal* arg = &state;
    ASSIGN_OR_RETURN(Literal cond, ctx.Call(*inst.while_condition(), {&arg, 1}));
    if (!cond.GetBits(0)) break;
    ASSIGN_OR_RETURN(Literal next, ctx.Call(*inst.while_body(), {&arg, 1}));
    state = std::move(next);
  }
  return WithShape(std::move(state), inst.shape());
}

absl::StatusOr<Literal> Conditional(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  const Literal& index = *ops[0];
  int64_t n = inst.branch_count();
  int64_t b;
  if (index.shape().element_type() == PrimitiveType::kPred) {
    b = index.GetBits(0) ? 0 : 1;  // true_computation first
  } else {
    b = index.GetInt(0);
    if (b < 0 || b >= n) b = n - 1;  // out of range selects the last branch
  }
  if (b + 1 >= static_cast<int64_t>(ops.size())) return absl::InvalidArgumentError("conditional branch without operand");
  return CallWith(ctx, inst.branch_computation(b), ops.subspan(b + 1, 1), inst.shape());
}

}  // namespace

absl::StatusOr<Literal> EvalControl(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  const Shape& shape = inst.shape();
  switch (inst.opcode()) {
    case HloOpcode::kTuple: {
      std::vector<Literal> elements;
      for (const Literal* l : ops) elements.push_back(*l);
      return WithShape(Literal::Tuple(std::move(elements)), shape);
    }
    case HloOpcode::kGetTupleElement: {
      if (!ops[0]->shape().IsTuple() || inst.tuple_index() >= static_cast<int64_t>(ops[0]->tuple_elements().size())) {
        return absl::InvalidArgumentError("get-tuple-element index out of range");
      }
      return WithShape(ops[0]->tuple_elements()[inst.tuple_index()], shape);
    }
    case HloOpcode::kOptimizationBarrier: case HloOpcode::kDomain: case HloOpcode::kAddDependency:
      return WithShape(*ops[0], shape);
    case HloOpcode::kAfterAll:
      return Literal(Shape::Token());
    case HloOpcode::kCall: case HloOpcode::kFusion:
      return CallWith(ctx, inst.called_computations().empty() ? nullptr : inst.called_computations()[0], ops, shape);
    case HloOpcode::kMap:
      return Map(inst, ops, ctx);
    case HloOpcode::kWhile:
      return While(inst, *ops[0], ctx);
    case HloOpcode::kConditional:
      return Conditional(inst, ops, ctx);
    case HloOpcode::kAsyncStart: {
      // ((operands...), result, context...): the wrapped op runs here.
      ASSIGN_OR_RETURN(Literal r, CallWith(ctx, inst.async_wrapped_computation(), ops, shape.tuple_shapes(1)));
      Literal out(shape);
      if (shape.tuple_shapes(0).IsTuple()) {
        for (size_t k = 0; k < ops.size() && k < out.tuple_elements()[0].tuple_elements().size(); ++k) {
          out.tuple_elements()[0].tuple_elements()[k] = *ops[k];
        }
      } else if (ops.size() == 1) {
        out.tuple_elements()[0] = *ops[0];
      }
      out.tuple_elements()[1] = std::move(r);
      return out;
    }
    case HloOpcode::kAsyncUpdate:
      return WithShape(*ops[0], shape);
    case HloOpcode::kAsyncDone:
      return WithShape(ops[0]->tuple_elements()[1], shape);
    case HloOpcode::kCopyStart: {
      // (destination, source, context).
      Literal out(shape);
      out.tuple_elements()[0] = WithShape(*ops[0], shape.tuple_shapes(0));
      out.tuple_elements()[1] = WithShape(*ops[0], shape.tuple_shapes(1));
      return out;
    }
    case HloOpcode::kCopyDone:
      return WithShape(ops[0]->tuple_elements()[0], shape);
    default:
      return absl::InternalError(StrCat("'", HloOpcodeString(inst.opcode()), "' is not a control op"));
  }
}

absl::StatusOr<Literal> EvalCollective(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ctx.participant() != nullptr) return ctx.participant()->Evaluate(inst, ops, ctx);
  const Shape& shape = inst.shape();
  // With one participant every collective returns its operands: all-reduce
  // reduces one value, all-gather/reduce-scatter/all-to-all split or join
  // one piece. A result whose shape says otherwise needs more devices.
  auto passthrough = [&](const Shape& result) -> absl::StatusOr<Literal> {
    if (ops.size() == 1 && ops[0]->shape().Compatible(result)) return WithShape(*ops[0], result);
    if (result.IsTuple() && static_cast<int64_t>(ops.size()) == result.tuple_shapes_size()) {
      std::vector<Literal> elements;
      for (size_t k = 0; k < ops.size() && ops[k]->shape().Compatible(result.tuple_shapes(k)); ++k) {
        elements.push_back(*ops[k]);
      }
      if (elements.size() == ops.size()) return WithShape(Literal::Tuple(std::move(elements)), result);
    }
    return absl::UnimplementedError(
        "its result shape needs more than one participant; the evaluator runs one replica and one partition");
  };
  switch (inst.opcode()) {
    case HloOpcode::kReplicaId: case HloOpcode::kPartitionId:
      return Literal(shape);  // zero: one replica, one partition
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kAllGather:
    case HloOpcode::kReduceScatter: case HloOpcode::kAllToAll: case HloOpcode::kCollectiveBroadcast:
      return passthrough(shape);
    case HloOpcode::kCollectivePermute: {
      // Replica 0 receives its own value only when a pair sends 0 -> 0;
      // otherwise it receives nothing and the result is zeros.
      const auto& pairs = inst.attrs().source_target_pairs;
      bool self = std::find(pairs.begin(), pairs.end(), std::pair<int64_t, int64_t>{0, 0}) != pairs.end();
      if (ops.size() != 1) return absl::UnimplementedError("in-place collective-permute is not evaluated");
      return self ? WithShape(*ops[0], shape) : Literal(shape);
    }
    case HloOpcode::kAllGatherStart: {
      // (operands, results).
      ASSIGN_OR_RETURN(Literal r, passthrough(shape.tuple_shapes(1)));
      Literal operands = ops.size() == 1 ? *ops[0] : *passthrough(shape.tuple_shapes(0));
      return Literal::Tuple({WithShape(std::move(operands), shape.tuple_shapes(0)), std::move(r)});
    }
    case HloOpcode::kCollectivePermuteStart: {
      // (operand, result, contexts...).
      const auto& pairs = inst.attrs().source_target_pairs;
      bool self = std::find(pairs.begin(), pairs.end(), std::pair<int64_t, int64_t>{0, 0}) != pairs.end();
      Literal out(shape);
      out.tuple_elements()[0] = WithShape(*ops[0], shape.tuple_shapes(0));
      if (self) out.tuple_elements()[1] = WithShape(*ops[0], shape.tuple_shapes(1));
      return out;
    }
    case HloOpcode::kAllReduceDone:
      return WithShape(*ops[0], shape);
    case HloOpcode::kAllGatherDone: case HloOpcode::kCollectivePermuteDone:
      return WithShape(ops[0]->shape().IsTuple() ? ops[0]->tuple_elements()[1] : *ops[0], shape);
    case HloOpcode::kRaggedAllToAll: {
      // (input, output, input_offsets, send_sizes, output_offsets,
      // recv_sizes): every chunk goes to replica 0, rows along dim 0.
      if (ops.size() < 6) return absl::InvalidArgumentError("ragged-all-to-all takes six operands");
      const Literal& input = *ops[0];
      Literal out = WithShape(*ops[1], shape);
      int64_t row = input.shape().rank() == 0 || input.shape().dimensions(0) == 0
                        ? 0
                        : input.element_count() / input.shape().dimensions(0);
      int w = PrimitiveByteWidth(shape.element_type());
      for (int64_t i = 0; i < ops[2]->element_count(); ++i) {
        int64_t in_off = ops[2]->GetInt(i), size = ops[3]->GetInt(i), out_off = ops[4]->GetInt(i);
        if (in_off < 0 || out_off < 0 || size < 0 || (in_off + size) * row > input.element_count() ||
            (out_off + size) * row > out.element_count()) {
          return absl::OutOfRangeError(StrCat("ragged-all-to-all chunk ", i, " is out of bounds"));
        }
        std::memcpy(out.untyped_data() + out_off * row * w, input.untyped_data() + in_off * row * w, size * row * w);
      }
      return out;
    }
    default:
      return absl::InternalError(StrCat("'", HloOpcodeString(inst.opcode()), "' is not a collective"));
  }
  (void)ctx;
}

// ---------------------------------------------------------------- custom calls
//
// One function per target; add a target by writing its function and a row
// in kCustomCalls. Library calls (core/libcall) are evaluated in
// eval_library_call.cc, under passlab's and XLA's spellings of the targets.

namespace {

using CustomCallFn = absl::StatusOr<Literal> (*)(const HloInstruction&, Operands, EvalContext&);

// Annotations that leave their operand unchanged on one device.
absl::StatusOr<Literal> IdentityCall(const HloInstruction& inst, Operands ops, EvalContext&) {
  if (ops.size() != 1 || !ops[0]->shape().Compatible(inst.shape())) {
    return absl::InvalidArgumentError(StrCat("custom call \"", inst.custom_call_target(),
                                             "\" must take one operand of the result's shape"));
  }
  return WithShape(*ops[0], inst.shape());
}

struct CustomCallTarget {
  std::string_view name;
  bool prefix;  // matches every target starting with `name`
  CustomCallFn fn;
};

constexpr CustomCallTarget kCustomCalls[] = {
    {"Sharding", false, IdentityCall},
    {"SPMDFullToShardShape", false, IdentityCall},
    {"SPMDShardToFullShape", false, IdentityCall},
    {"MoveToHost", false, IdentityCall},
    {"MoveToDevice", false, IdentityCall},
    {"LayoutConstraint", false, IdentityCall},
    {"__blas$gemm", false, EvalLibraryCall},
    {"__cublas$gemm", false, EvalLibraryCall},
    {"__dnn$conv", true, EvalLibraryCall},
    {"__cudnn$conv", true, EvalLibraryCall},
    {"__lapack$potrf", false, EvalLibraryCall},
    {"__blas$trsm", false, EvalLibraryCall},
    {"Qr", false, EvalHouseholderCall},
    {"ProductOfElementaryHouseholderReflectors", false, EvalHouseholderCall},
};

}  // namespace

absl::StatusOr<Literal> EvalCustomCall(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  const std::string& target = inst.custom_call_target();
  for (const CustomCallTarget& t : kCustomCalls) {
    if (t.prefix ? std::string_view(target).substr(0, t.name.size()) == t.name : target == t.name) {
      return t.fn(inst, ops, ctx);
    }
  }
  return absl::UnimplementedError(StrCat("unsupported custom call target \"", target, "\""));
}

}  // namespace passlab::eval
