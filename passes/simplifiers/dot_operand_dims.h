// DotOperandDims: one dot operand's dimensions sorted into batch,
// non-contracting and contracting categories, with the shape edits the dot
// normalization passes make on them (after XLA's
// xla/service/matmul_indexing_utils.h). Batch and contracting dimensions keep
// the order the dot lists them in; non-contracting ones are ascending. Also
// the shape helpers these passes share, as XLA's ShapeUtil defines them.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_DOT_OPERAND_DIMS_H_
#define PASSLAB_PASSES_SIMPLIFIERS_DOT_OPERAND_DIMS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/hlo_instruction.h"

namespace passlab {

class DotOperandDims {
 public:
  enum Category : int { kBatch = 0, kNonContracting = 1, kContracting = 2 };

  // The dimensions of operand `operand` (0: lhs, 1: rhs) of `dot`.
  static DotOperandDims FromDotOperand(const HloInstruction& dot, int operand);

  const std::vector<int64_t>& Indices(Category c) const { return dims_[c]; }
  int64_t Rank(Category c) const { return static_cast<int64_t>(dims_[c].size()); }
  std::vector<int64_t> Sizes(Category c) const;
  const std::vector<int64_t>& shape() const { return shape_; }

  // Sorted and each one more than the previous.
  bool IsConsecutive(Category c) const;
  // `permutation` as a transpose's dimensions: output dim i is dim
  // permutation[i]; dimension numbers follow their dimensions.
  void ApplyPermutation(const std::vector<int64_t>& permutation);
  // Moves the category's dimensions last, in their listed order, unless they
  // are consecutive already; returns the permutation applied.
  std::optional<std::vector<int64_t>> PermuteToConsecutive(Category c);
  // Merges the (consecutive) dimensions of the category into one.
  void CollapseCategory(Category c);

  // The dot's dimension numbers and (default-layout) shape for two operands.
  static DotDimensionNumbers MakeDotDimensionNumbers(const DotOperandDims& lhs, const DotOperandDims& rhs);
  static Shape OutputShape(PrimitiveType type, const DotOperandDims& lhs, const DotOperandDims& rhs);

 private:
  void EraseDimensions(int64_t start, int64_t end);

  std::vector<int64_t> shape_;
  std::array<std::vector<int64_t>, 3> dims_;
};

// XLA's ShapeUtil::PermuteDimensions: dims permuted as a transpose with
// `permutation` would, and the layout chosen so that transpose is a bitcast.
Shape PermuteShapeDimensions(const std::vector<int64_t>& permutation, const Shape& shape);
// The shape's layout, or the default one when it has none.
Layout LayoutOrDefault(const Shape& shape);

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_DOT_OPERAND_DIMS_H_
