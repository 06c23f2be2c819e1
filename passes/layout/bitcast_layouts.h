// The layouts that make a reshape or a transpose a bitcast (elements stay
// where they are), for GpuLayoutAssignment (after XLA's
// ShapeUtil::AlignLayouts and XLA:GPU's AlignLayoutsGPU).
#ifndef PASSLAB_PASSES_LAYOUT_BITCAST_LAYOUTS_H_
#define PASSLAB_PASSES_LAYOUT_BITCAST_LAYOUTS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/layout.h"

namespace passlab {

// Whether reshaping `in` laid out as `in_layout` into `out` laid out as
// `out_layout` keeps every element where it is.
bool ReshapeIsBitcast(const std::vector<int64_t>& in, const Layout& in_layout, const std::vector<int64_t>& out,
                      const Layout& out_layout);

// The layout of `out` that makes the reshape from `in` (laid out as
// `in_layout`) a bitcast, its size-1 dimensions placed relative to the
// others as in `template_layout` (the fewest layouts change). Nothing when
// no layout does, or both sides are effectively vectors.
std::optional<Layout> ReshapeBitcastLayout(const std::vector<int64_t>& in, const Layout& in_layout,
                                           const std::vector<int64_t>& out, const Layout& template_layout);

// The output layout that makes `transpose` a bitcast of its operand laid out
// as `operand_layout`, and the operand layout for a given output layout.
Layout TransposeOutputLayout(const HloInstruction& transpose, const Layout& operand_layout);
Layout TransposeOperandLayout(const HloInstruction& transpose, const Layout& output_layout);

// `layout` with dimension `dim` moved to the most major place (XLA's
// ShapeUtil::MoveDimToMajor).
Layout MoveDimToMajor(const Layout& layout, int64_t dim);

}  // namespace passlab

#endif  // PASSLAB_PASSES_LAYOUT_BITCAST_LAYOUTS_H_
