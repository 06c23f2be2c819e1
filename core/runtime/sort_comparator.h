// A sort's comparator computation, compiled for the runtime's sort routine
// (no evaluator): a straight-line program over scalar slots holding raw
// element bits. It takes the forms passlab's pipelines and XLA front ends
// produce: compares of parameters or of derived values (any direction;
// FLOAT / TOTALORDER / SIGNED / UNSIGNED by element type), and / or / xor
// / not of those, select (StableSortExpander's tie breaker), constants,
// convert, bitcast-convert and negate. Anything else, and complex keys, is
// an UnimplementedError naming the sort and the comparator instruction.
//
// Recognizes single-key comparators, `compare(f(a), f(b))` with f a
// function of one element's parameters (a bare parameter, or XLA's
// ComparisonExpander form of a total order: bitcast-convert, select, xor),
// so that the sort orders precomputed keys f(x) instead.
#ifndef PASSLAB_CORE_RUNTIME_SORT_COMPARATOR_H_
#define PASSLAB_CORE_RUNTIME_SORT_COMPARATOR_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/hlo_attributes.h"
#include "core/ir/hlo_opcode.h"
#include "core/ir/primitive_type.h"

namespace passlab {

class HloInstruction;

class SortComparator {
 public:
  // comparator(a, b) = compare(key(a), key(b)) in `direction` (a and b
  // exchanged when `swapped`), key(x) = KeyBits(x) of `type`.
  struct KeyCompare {
    PrimitiveType type = PrimitiveType::kPred;
    ComparisonDirection direction = ComparisonDirection::kLt;
    bool total_order = false;  // floats: XLA's total order, else IEEE
    bool swapped = false;
  };

  static absl::StatusOr<SortComparator> Compile(const HloInstruction& sort);

  const std::optional<KeyCompare>& key_compare() const { return key_compare_; }

  // comparator(elements a, elements b) with `operands` the sort's operands
  // packed row-major (routine_internal::GatherRowMajor); `slots` is scratch
  // (reused across calls).
  bool Less(absl::Span<const uint8_t* const> operands, int64_t a, int64_t b, std::vector<uint64_t>& slots) const;

  // key(element x) of a single-key comparator (key_compare() set).
  uint64_t KeyBits(absl::Span<const uint8_t* const> operands, int64_t x, std::vector<uint64_t>& slots) const;

 private:
  struct Step {
    HloOpcode opcode = HloOpcode::kParameter;
    PrimitiveType type = PrimitiveType::kPred;          // of the result
    PrimitiveType operand_type = PrimitiveType::kPred;  // of operand 0
    int32_t operands[3] = {0, 0, 0};                    // slot indices
    int32_t arity = 0;                                  // operands used
    ComparisonDirection direction = ComparisonDirection::kEq;
    bool total_order = false;
    uint64_t constant = 0;  // kConstant's bits; kParameter's number
  };

  uint64_t Compare(const Step& s, uint64_t x, uint64_t y) const;
  uint64_t Convert(const Step& s, uint64_t x) const;
  void Evaluate(absl::Span<const uint8_t* const> operands, int64_t a, int64_t b, std::vector<uint64_t>& slots) const;
  // Whether slot `y` computes what slot `x` does with every parameter's
  // a / b side exchanged.
  bool Mirrors(int32_t x, int32_t y) const;
  // Bit 0: the slot reads an a-side parameter (even); bit 1: a b-side one.
  std::vector<uint8_t> Sides() const;
  void RecognizeKeyCompare();

  std::vector<Step> steps_;
  int32_t root_ = 0;
  int32_t key_slot_ = 0;
  std::optional<KeyCompare> key_compare_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_SORT_COMPARATOR_H_
