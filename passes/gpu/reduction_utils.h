// Shared by the GPU reduction passes (ReductionDegenerateDimRemover,
// ReductionDimensionGrouper, ReductionLayoutNormalizer, ReductionSplitter,
// TreeReductionRewriter): reduce operands, building reduces, and the
// row/column classification with XLA:GPU's tiling and race-free bounds
// (seed 003, section 3.8).
#ifndef PASSLAB_PASSES_GPU_REDUCTION_UTILS_H_
#define PASSLAB_PASSES_GPU_REDUCTION_UTILS_H_

#include <array>
#include <optional>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {

// Whether the reduce is well formed enough to rewrite: an even operand
// count, array inputs of one rank and dimensions, scalar inits, reduced
// dimensions in range and distinct. The passes leave other reduces for the
// verifier to report.
bool IsRewritableReduce(const HloInstruction& reduce);

// A reduce's inputs (first half of its operands) and init values.
std::vector<HloInstruction*> ReduceInputs(const HloInstruction& reduce);
std::vector<HloInstruction*> ReduceInits(const HloInstruction& reduce);

// Adds reduce(inputs, inits) over `dims` with `reducer`; the result shape is
// derived (a tuple when there are several inputs) with default layouts.
HloInstruction* AddReduce(ExpansionBuilder& b, const std::vector<HloInstruction*>& inputs,
                          const std::vector<HloInstruction*>& inits, std::vector<int64_t> dims,
                          HloComputation* reducer);

// The dimensions of `shape` from major to minor in memory (the layout's
// reverse minor_to_major; logical order without a layout).
std::vector<int64_t> MajorToMinor(const Shape& shape);
bool HasDefaultLayout(const Shape& shape);

// A reduction whose reduced and kept dimensions each form at most two
// blocks in memory order, as XLA:GPU's reduction emitter wants it:
//   row:    [reduced d0][kept d1][reduced d2]   (the minor-most dims reduced)
//   column: [kept d0][reduced d1][kept d2]
// Size-1 dimensions are ignored. Other reductions have no kind (nullopt).
struct ReductionDimensions {
  bool is_row_reduction = true;
  std::array<int64_t, 3> dims = {1, 1, 1};
};
std::optional<ReductionDimensions> GetReductionKind(const HloInstruction& reduce);

// XLA:GPU's classification (xla/service/gpu/reduction_utils.cc), which
// the reduction passes XLA specifies by it use: with the kept or the
// reduced dimensions consecutive in the layout (size-1 dimensions count),
// the reduction is [reduced, kept, reduced] (row) or [kept, reduced, kept]
// (column) in memory order, with no kept dimension a row reduction of all
// elements. For other reductions the components are meaningless.
ReductionDimensions GetReductionKindAndContiguousComponents(const HloInstruction& reduce);
// A reduce whose kept or reduced dimensions are consecutive in the layout
// and that the reduction emitter does faster than the elemental one: a row
// reduction of at least a warp's width (32) or of a width dividing it, or
// a column reduction not in the small ranges XLA measured as slower.
bool IsReductionFromOrToContiguousDimensions(const HloInstruction& reduce);
// The largest reduced block one kernel reduces without atomics: row
// 1024 threads x 16, column warp 32 x 128.
int64_t ReductionDimensionRaceFreeBound(const ReductionDimensions& r);
// How big the batch (major reduced) block of a row reduction may be.
inline constexpr int64_t kBatchedReductionRaceFreeBound = 8;

// XLA:GPU's reduction tiling: row {min(d0, 8), 1, 16}, column {1, 128, 1}.
std::array<int64_t, 3> GetReductionTiling(const ReductionDimensions& r);
// Whether one kernel can reduce it without atomics: row d2 <= 1024 * 16 and
// d0 <= 8; column d1 <= 32 * 128.
bool IsReductionRaceFree(const ReductionDimensions& r);

}  // namespace passlab

#endif  // PASSLAB_PASSES_GPU_REDUCTION_UTILS_H_
