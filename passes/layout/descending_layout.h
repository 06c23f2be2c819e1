// Permutation and shape helpers shared by the layout-normalization passes
// (LayoutNormalization, ReshapeDecomposer, ReduceDecomposer, ...): a layout
// read as the transposition that produces it from the default layout, and
// a shape rewritten so that its layout is descending with the same bytes
// (XLA's ShapeUtil::MakeShapeWithDescendingLayoutAndSamePhysicalLayout).
#ifndef PASSLAB_PASSES_LAYOUT_DESCENDING_LAYOUT_H_
#define PASSLAB_PASSES_LAYOUT_DESCENDING_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "core/ir/shape.h"

namespace passlab {

// Whether an array shape's layout is {rank-1,...,1,0} (a shape without a
// layout counts as descending); false for tuples and tokens.
bool HasDescendingLayout(const Shape& shape);

// The array's dimensions from most major to most minor: the transposition
// that, applied to the logical shape, gives the physical order (XLA's
// ToTransposeDimensions, minor_to_major reversed).
std::vector<int64_t> MajorToMinorDims(const Shape& shape);

// p^-1: result[p[i]] = i.
std::vector<int64_t> InversePermutation(const std::vector<int64_t>& p);
// XLA's ComposePermutations: result[i] = p1[p2[i]].
std::vector<int64_t> ComposePermutations(const std::vector<int64_t>& p1, const std::vector<int64_t>& p2);
bool IsIdentityPermutation(const std::vector<int64_t>& p);
// XLA's Permute: result[i] = input[permutation[i]].
template <typename T>
std::vector<T> PermuteByIndex(const std::vector<T>& input, const std::vector<int64_t>& permutation) {
  std::vector<T> out;
  out.reserve(permutation.size());
  for (int64_t p : permutation) out.push_back(input[p]);
  return out;
}

// The same bytes as `shape` seen with a descending layout: dimensions (and
// their dynamic flags) in major-to-minor order; other layout fields kept.
Shape DescendingShapeWithSamePhysicalLayout(const Shape& shape);

// `shape`'s dimensions and element type with the descending layout
// (XLA's ShapeUtil::MakeShapeWithDescendingLayout).
Shape WithDescendingLayout(const Shape& shape);

// `shape` without `dims` (sorted or not), the layout keeping the remaining
// dimensions' relative order (XLA's ShapeUtil::DeleteDimensions).
Shape DeleteDimensions(const Shape& shape, std::vector<int64_t> dims);

}  // namespace passlab

#endif  // PASSLAB_PASSES_LAYOUT_DESCENDING_LAYOUT_H_
