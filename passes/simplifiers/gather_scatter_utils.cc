#include "passes/simplifiers/gather_scatter_utils.h"

#include <algorithm>

namespace passlab {

HloInstruction* AddReshape(HloInstruction* x, std::vector<int64_t> dims) {
  return x->parent()->AddInstruction(
      HloInstruction::CreateReshape(Shape(x->shape().element_type(), std::move(dims)), x));
}

HloInstruction* MaybeTranspose(HloInstruction* x, const std::vector<int64_t>& permutation) {
  bool identity = true;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < permutation.size(); ++i) {
    identity = identity && permutation[i] == static_cast<int64_t>(i);
    dims.push_back(x->shape().dimensions(permutation[i]));
  }
  if (identity) return x;
  return x->parent()->AddInstruction(
      HloInstruction::CreateTranspose(Shape(x->shape().element_type(), std::move(dims)), x, permutation));
}

HloInstruction* InsertDegenerateDims(HloInstruction* x, const std::vector<int64_t>& inserted) {
  std::vector<int64_t> dims;
  const int64_t rank = x->shape().rank() + static_cast<int64_t>(inserted.size());
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    bool is_inserted = std::find(inserted.begin(), inserted.end(), d) != inserted.end();
    dims.push_back(is_inserted ? 1 : x->shape().dimensions(next++));
  }
  return AddReshape(x, std::move(dims));
}

HloInstruction* TransformStartIndices(HloInstruction* indices, int64_t index_vector_dim) {
  int64_t rank = indices->shape().rank();
  if (index_vector_dim == rank) {
    indices = InsertDegenerateDims(indices, {index_vector_dim});
    ++rank;
  } else if (index_vector_dim < rank - 1) {
    std::vector<int64_t> permutation;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != index_vector_dim) permutation.push_back(d);
    }
    permutation.push_back(index_vector_dim);
    indices = MaybeTranspose(indices, permutation);
  }
  if (rank > 2) {
    int64_t n = 1;
    for (int64_t d = 0; d < rank - 1; ++d) n *= indices->shape().dimensions(d);
    return AddReshape(indices, {n, indices->shape().dimensions(rank - 1)});
  }
  if (rank == 1) return InsertDegenerateDims(indices, {0});
  return indices;
}

}  // namespace passlab
