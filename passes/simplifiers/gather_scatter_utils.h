// Index and operand reshaping shared by the gather and scatter simplifiers
// (as XLA shares them in xla/service/gather_scatter_utils.cc).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_GATHER_SCATTER_UTILS_H_
#define PASSLAB_PASSES_SIMPLIFIERS_GATHER_SCATTER_UTILS_H_

#include <cstdint>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"

namespace passlab {

// A reshape of `x` to `dims`, added to x's computation.
HloInstruction* AddReshape(HloInstruction* x, std::vector<int64_t> dims);
// x transposed by `permutation`, or x itself for the identity.
HloInstruction* MaybeTranspose(HloInstruction* x, const std::vector<int64_t>& permutation);
// x with size-1 dimensions at the (sorted) positions `inserted` of the result.
HloInstruction* InsertDegenerateDims(HloInstruction* x, const std::vector<int64_t>& inserted);
// The indices as [N, K] (XLA's TransformStartIndices): a trailing size-1
// index vector dimension added when it is implicit, else the index vector
// dimension moved last; then the others collapsed into one (or a leading 1
// added to a single index vector).
HloInstruction* TransformStartIndices(HloInstruction* indices, int64_t index_vector_dim);

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_GATHER_SCATTER_UTILS_H_
