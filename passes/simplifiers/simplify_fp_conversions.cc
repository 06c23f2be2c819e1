#include "passes/simplifiers/simplify_fp_conversions.h"

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"

namespace passlab {
namespace {

bool IsFloatConvert(const HloInstruction* h) {
  return h->opcode() == HloOpcode::kConvert && IsFloatingPointType(h->shape().element_type());
}

}  // namespace

absl::StatusOr<bool> SimplifyFPConversions::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    // Post order: a chain's inner converts are seen (and collapsed) first,
    // so each instruction looks at an already-shortened chain. Collapsing
    // removes only the instruction and its dead operands, which come
    // earlier in the order.
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      HloInstruction* input = instruction;
      int64_t chain_length = 0;
      while (IsFloatConvert(input)) {
        input = input->mutable_operand(0);
        ++chain_length;
      }
      if (chain_length < 2) continue;
      // convert<T>(...convert(x: T)) => x
      if (instruction->shape().element_type() == input->shape().element_type()) {
        RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, input));
        BumpCounter("removed convert chain");
      } else {
        // convert<T>(...convert(x)) => convert<T>(x)
        RETURN_IF_ERROR(computation->ReplaceWithNewInstruction(
            instruction, HloInstruction::CreateConvert(instruction->shape(), input)));
        BumpCounter("collapsed convert chain");
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
