// Internals shared by the evaluator's files (one per op family): index
// iteration, element arithmetic with XLA's integer/float semantics, reducer
// recognition, the context handlers use to call nested computations, and one
// handler declaration per op family. hlo_evaluator.cc dispatches every opcode
// to one of these.
#ifndef PASSLAB_CORE_EVAL_EVAL_INTERNAL_H_
#define PASSLAB_CORE_EVAL_EVAL_INTERNAL_H_

#include <array>
#include <complex>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/eval/hlo_evaluator.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/literal.h"

namespace passlab::eval {

using Index = std::vector<int64_t>;
// The values of an instruction's operands, in operand order.
using Operands = absl::Span<const Literal* const>;

// Calls fn(index, linear) for every element of `dims` in row-major order.
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& dims, Fn&& fn) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (n == 0) return;
  Index idx(dims.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    fn(static_cast<const Index&>(idx), linear);
    for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
}

// Row-major linear position of `idx` in `dims`.
int64_t Linear(const Index& idx, const std::vector<int64_t>& dims);

// Runs work(begin, end) over [0, n), on up to `threads` threads when `cost`
// (a rough count of inner-loop steps) makes that worthwhile.
void ParallelFor(int64_t n, int64_t cost, int threads, const std::function<void(int64_t, int64_t)>& work);

// Element-level operations with XLA semantics.
enum class Kind { kPred, kSigned, kUnsigned, kFloat, kComplex };
Kind KindOf(PrimitiveType t);

// Applies an elementwise binary opcode to element i of a and j of b and
// stores into out[k] (types from the literals). Floats narrower than f32 are
// computed in f32 and rounded back, as XLA does.
absl::Status BinaryElement(HloOpcode op, ComparisonDirection dir, ComparisonType ctype, const Literal& a,
                           int64_t i, const Literal& b, int64_t j, Literal& out, int64_t k);
absl::Status UnaryElement(const HloInstruction& inst, const Literal& a, int64_t i, Literal& out, int64_t k);

// A reducer/comparator computation of the form op(param0, param1) (or
// compare(param0, param1), direction): the opcode, so callers skip the
// general (slow) path of evaluating the computation per element.
struct SimpleBinary {
  HloOpcode opcode;
  ComparisonDirection direction = ComparisonDirection::kEq;
  ComparisonType type = ComparisonType::kDefault;
  bool swapped = false;  // op(param1, param0)
};
std::optional<SimpleBinary> RecognizeSimpleBinary(const HloComputation* c);

// XLA's reduce-precision on one value of a float type.
double ReducePrecision(double value, PrimitiveType type, int exponent_bits, int mantissa_bits);

// A scalar literal holding element i of l.
Literal Element(const Literal& l, int64_t i);
// dst[i] = src[j] (same element type, raw bytes).
void CopyElement(Literal& dst, int64_t i, const Literal& src, int64_t j);
// A literal of `shape` with every element equal to the scalar `value`.
Literal Filled(const Shape& shape, const Literal& value);
// Every element as double / written from double (rounding to the type).
std::vector<double> ToDoubles(const Literal& l);
void FromDoubles(absl::Span<const double> values, Literal& out);

class EvalContext;

// One participant (replica, partition) of a multi-participant evaluation
// (multi_participant_evaluator.cc): collectives meet the other participants
// of their group here instead of running as on one device.
class CollectiveParticipant {
 public:
  virtual ~CollectiveParticipant() = default;
  // Evaluates a collective (or replica-id / partition-id) for this
  // participant, waiting for the other members of its group.
  virtual absl::StatusOr<Literal> Evaluate(const HloInstruction& inst, Operands ops, EvalContext& ctx) = 0;
};

// What handlers need from the evaluator: nested computations, options, and
// the state of the `rng` op.
class EvalContext {
 public:
  virtual ~EvalContext() = default;
  virtual absl::StatusOr<Literal> Call(const HloComputation& computation, Operands args) = 0;
  virtual const EvaluatorOptions& options() const = 0;
  // A fresh counter value for each evaluation of an `rng` op.
  virtual uint64_t NextRngCounter() = 0;
  // The 128-bit state behind rng-get-and-update-state (low, high words).
  virtual std::array<uint64_t, 2>& RngState() = 0;
  // The participant collectives run as; null on one device.
  virtual CollectiveParticipant* participant() { return nullptr; }
};

// Evaluates `computation` as `participant` (null: one replica, one partition).
absl::StatusOr<Literal> EvaluateAsParticipant(const HloComputation& computation, Operands args,
                                              const EvaluatorOptions& options, CollectiveParticipant* participant);

// Folds element i of each `xs` into element k of each `accs` with the
// reducer (a recognized simple binary op, or a call of the computation).
absl::Status Accumulate(EvalContext& ctx, const std::optional<SimpleBinary>& simple, const HloComputation* reducer,
                        absl::Span<Literal* const> accs, int64_t k, absl::Span<const Literal* const> xs, int64_t i);

// Handlers, one per op family (file named in the comment).
// eval_elementwise.cc: unary/binary ops, compare, select, clamp, convert,
// bitcast-convert, reduce-precision, stochastic-convert, iota.
absl::StatusOr<Literal> EvalElementwise(const HloInstruction& inst, Operands ops);
// eval_data_movement.cc: broadcast, reshape, copy, bitcast, transpose,
// reverse, slice, dynamic-slice, dynamic-update-slice, concatenate, pad,
// dynamic-reshape, gather.
absl::StatusOr<Literal> EvalDataMovement(const HloInstruction& inst, Operands ops);
// eval_scatter_sort.cc
absl::StatusOr<Literal> EvalScatter(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalSort(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalTopK(const HloInstruction& inst, Operands ops);
// eval_reduce.cc: reduce, reduce-window, select-and-scatter, batch norm.
// eval_ragged_scan.cc: ragged-dot, scaled-dot (the scales applied, then a
// dot), scan (to_apply called once per step along the scan dimension).
absl::StatusOr<Literal> EvalRaggedDot(const HloInstruction& inst, Operands ops);
absl::StatusOr<Literal> EvalScaledDot(const HloInstruction& inst, Operands ops, int threads);
absl::StatusOr<Literal> EvalScan(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalReduce(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalReduceWindow(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalSelectAndScatter(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalBatchNorm(const HloInstruction& inst, Operands ops);
// eval_conv_dot.cc
absl::StatusOr<Literal> EvalDot(const HloInstruction& inst, Operands ops, int threads);
absl::StatusOr<Literal> EvalConvolution(const HloInstruction& inst, Operands ops, int threads);
// eval_rng.cc: rng, rng-bit-generator, rng-get-and-update-state.
absl::StatusOr<Literal> EvalRng(const HloInstruction& inst, Operands ops, EvalContext& ctx);
// eval_linalg.cc: cholesky, triangular-solve, fft.
absl::StatusOr<Literal> EvalLinearAlgebra(const HloInstruction& inst, Operands ops);
// eval_linalg.cc: XLA's Householder QR custom calls, "Qr" (a => (a with R
// above the diagonal and the reflectors below it, taus), LAPACK geqrf's
// form) and "ProductOfElementaryHouseholderReflectors" ((a, taus) => the
// first columns of Q, orgqr's form); real types.
absl::StatusOr<Literal> EvalHouseholderCall(const HloInstruction& inst, Operands ops, EvalContext& ctx);
// eval_control.cc: call, fusion, map, while, conditional, async and copy
// start/update/done, single-replica collectives, custom calls.
absl::StatusOr<Literal> EvalControl(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalCollective(const HloInstruction& inst, Operands ops, EvalContext& ctx);
absl::StatusOr<Literal> EvalCustomCall(const HloInstruction& inst, Operands ops, EvalContext& ctx);
// eval_library_call.cc: `__blas$gemm`, `__dnn$conv*` and the solver calls
// `__lapack$potrf`, `__blas$trsm` (core/libcall).
absl::StatusOr<Literal> EvalLibraryCall(const HloInstruction& inst, Operands ops, EvalContext& ctx);

// Philox4x32-10 and Threefry2x32-20 blocks (Random123; XLA's prng.cc).
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);
std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> counter, std::array<uint32_t, 2> key);

}  // namespace passlab::eval

#endif  // PASSLAB_CORE_EVAL_EVAL_INTERNAL_H_
