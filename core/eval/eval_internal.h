// Internals shared by the evaluator's files: index iteration, element
// arithmetic with XLA's integer/float semantics, and reducer recognition.
#ifndef PASSLAB_CORE_EVAL_EVAL_INTERNAL_H_
#define PASSLAB_CORE_EVAL_EVAL_INTERNAL_H_

#include <complex>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/literal.h"

namespace passlab::eval {

using Index = std::vector<int64_t>;

// Calls fn(index, linear) for every element of `dims` in row-major order.
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& dims, Fn&& fn) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (n == 0) return;
  Index idx(dims.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    fn(idx, linear);
    for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
}

int64_t Linear(const Index& idx, const std::vector<int64_t>& dims);

// Element-level operations with XLA semantics. Elements travel as Scalar.
enum class Kind { kPred, kSigned, kUnsigned, kFloat, kComplex };
Kind KindOf(PrimitiveType t);

// Applies an elementwise binary opcode to element i of a and j of b and
// stores into out[k] (types from the literals).
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

// XLA's reduce-precision on one value.
double ReducePrecision(double value, PrimitiveType type, int exponent_bits, int mantissa_bits);

}  // namespace passlab::eval

#endif  // PASSLAB_CORE_EVAL_EVAL_INTERNAL_H_
