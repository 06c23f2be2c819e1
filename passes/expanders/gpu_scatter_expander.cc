#include "passes/expanders/gpu_scatter_expander.h"

#include <algorithm>

namespace passlab {
namespace {

bool WiderThan64Bits(const Shape& shape) { return PrimitiveBitWidth(shape.element_type()) > 64; }

}  // namespace

bool GpuScatterExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kScatter) return false;
  const Shape& shape = inst->shape();
  if (shape.IsTuple()) {
    // The GPU emitter handles a variadic scatter only when no two updates
    // can hit the same element.
    return !inst->attrs().unique_indices ||
           std::any_of(shape.tuple_shapes().begin(), shape.tuple_shapes().end(), WiderThan64Bits);
  }
  return WiderThan64Bits(shape);
}

}  // namespace passlab
