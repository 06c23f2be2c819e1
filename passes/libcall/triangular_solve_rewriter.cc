#include "passes/libcall/triangular_solve_rewriter.h"

#include "core/ir/hlo_computation.h"
#include "core/libcall/library_call.h"

namespace passlab {

bool TriangularSolveRewriter::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kTriangularSolve) return false;
  const Shape& s = inst->shape();
  return s.IsArray() && s.rank() >= 2 && s.is_static() && inst->operand(0)->shape().is_static() &&
         (s.element_type() == PrimitiveType::kF32 || s.element_type() == PrimitiveType::kF64);
}

absl::StatusOr<HloInstruction*> TriangularSolveRewriter::ExpandInstruction(HloInstruction* solve) {
  auto call = HloInstruction::CreateCustomCall(
      solve->shape(), {solve->mutable_operand(0), solve->mutable_operand(1)}, std::string(kTriangularSolveCallTarget),
      TriangularSolveBackendConfigJson(solve->attrs().triangular_solve));
  call->set_metadata(solve->metadata());
  return solve->parent()->AddInstruction(std::move(call));
}

}  // namespace passlab
