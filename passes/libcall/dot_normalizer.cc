#include "passes/libcall/dot_normalizer.h"

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"

namespace passlab {
namespace {

// XLA's ShapeUtil::AppendMinorDimension(1, shape): a trailing size-1
// dimension, minor-most in the layout.
Shape WithMinorUnitDimension(const Shape& shape) {
  Shape out = shape;
  out.add_dimension(1);
  if (shape.has_layout()) {
    Layout layout = shape.layout();
    std::vector<int64_t>& m2m = layout.mutable_minor_to_major();
    m2m.insert(m2m.begin(), shape.rank());
    out.set_layout(layout);
  }
  return out;
}

}  // namespace

// dot(a, b) with no contracting dims =>
//   dot(bitcast(a)[.., 1], bitcast(b)[.., 1]) contracting the new dims
absl::StatusOr<bool> DotNormalizer::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* dot : c->MakeInstructionPostOrder()) {
      if (dot->opcode() != HloOpcode::kDot || !dot->attrs().dot_dnums.lhs_contracting_dimensions.empty()) continue;
      for (int side = 0; side < 2; ++side) {
        HloInstruction* operand = dot->mutable_operand(side);
        HloInstruction* bitcast =
            c->AddInstruction(HloInstruction::CreateBitcast(WithMinorUnitDimension(operand->shape()), operand));
        dot->ReplaceOperandWith(side, bitcast);
      }
      DotDimensionNumbers& d = dot->mutable_attrs().dot_dnums;
      d.lhs_contracting_dimensions.push_back(dot->operand(0)->shape().rank() - 1);
      d.rhs_contracting_dimensions.push_back(dot->operand(1)->shape().rank() - 1);
      BumpCounter("added a degenerate contracting dimension");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
