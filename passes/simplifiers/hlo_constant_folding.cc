#include "passes/simplifiers/hlo_constant_folding.h"

#include "core/eval/hlo_evaluator.h"
#include "core/ir/status_macros.h"

namespace passlab {
namespace {

bool Foldable(const HloInstruction* inst, int64_t max_elements) {
  if (inst->operand_count() == 0 || inst->HasSideEffect() || !inst->shape().IsArray()) return false;
  switch (inst->opcode()) {
    case HloOpcode::kConstant: case HloOpcode::kParameter: case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator: case HloOpcode::kCustomCall: case HloOpcode::kAfterAll:
    case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
    case HloOpcode::kReplicaId: case HloOpcode::kPartitionId: case HloOpcode::kWhile:
      return false;
    // Broadcasting a constant only copies it; keeping the broadcast is smaller.
    case HloOpcode::kBroadcast: case HloOpcode::kIota:
      return false;
    default:
      break;
  }
  if (IsCollectiveOpcode(inst->opcode())) return false;
  if (inst->shape().element_count() > max_elements) return false;
  for (const HloInstruction* op : inst->operands()) {
    if (op->opcode() != HloOpcode::kConstant || op->literal().elided()) return false;
  }
  return inst->control_predecessors().empty() && inst->control_successors().empty();
}

}  // namespace

absl::StatusOr<bool> HloConstantFolding::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  HloEvaluator evaluator;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (!Foldable(inst, options_.max_result_elements)) continue;
      // Evaluate the instruction alone: a computation of its constant operands.
      auto scratch = std::make_unique<HloComputation>("fold");
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* op : inst->operands()) {
        operands.push_back(scratch->AddInstruction(HloInstruction::CreateConstant(op->literal())));
      }
      HloInstruction* copy = scratch->AddInstruction(inst->CloneWithNewOperands(inst->shape(), operands));
      scratch->set_root_instruction(copy);
      absl::StatusOr<Literal> value = evaluator.EvaluateComputation(*scratch, {});
      if (!value.ok()) {
        BumpCounter("not folded: evaluator cannot run it");
        continue;
      }
      value->set_shape_layout(inst->shape());
      auto constant = HloInstruction::CreateConstant(std::move(*value));
      constant->set_metadata(inst->metadata());
      HloInstruction* added = c->AddInstruction(std::move(constant));
      BumpCounter(std::string("folded ") + std::string(HloOpcodeString(inst->opcode())));
      RETURN_IF_ERROR(c->ReplaceInstruction(inst, added));
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
