// TEST-ONLY: turns convolutions and dots into the library calls the runtime
// executes (`__dnn$convForward` with the same window/dim_labels/groups, and
// `__blas$gemm` with the same dimension numbers), standing in for the
// rewriter passes of the GPU pipeline until they exist. Batch-grouped
// convolutions are left alone.
#ifndef PASSLAB_TEST_CORE_RUNTIME_TEST_REWRITE_H_
#define PASSLAB_TEST_CORE_RUNTIME_TEST_REWRITE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/libcall/library_call.h"

namespace passlab::testing_only {

// Returns how many instructions were rewritten. The library call is named
// "<name>.call" and, for convolutions, its result "<name>" again.
inline absl::StatusOr<int> RewriteToLibraryCalls(HloComputation& computation) {
  int rewritten = 0;
  for (HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    std::vector<HloInstruction*> operands(inst->operands().begin(), inst->operands().end());
    std::string name = inst->name();
    HloInstruction* replacement = nullptr;
    if (inst->opcode() == HloOpcode::kConvolution && inst->attrs().batch_group_count == 1) {
      Shape shape = Shape::Tuple({inst->shape(), Shape(PrimitiveType::kU8, {0})});
      std::unique_ptr<HloInstruction> call =
          HloInstruction::CreateCustomCall(shape, operands, std::string(kConvForwardCallTarget));
      call->mutable_attrs().window = inst->window();
      call->mutable_attrs().conv_dnums = inst->attrs().conv_dnums;
      call->mutable_attrs().feature_group_count = inst->attrs().feature_group_count;
      HloInstruction* c = computation.AddInstruction(std::move(call), name + ".call");
      replacement = computation.AddInstruction(HloInstruction::CreateGetTupleElement(c, 0), name + ".result");
    } else if (inst->opcode() == HloOpcode::kDot && IsFloatingPointType(inst->shape().element_type())) {
      GemmBackendConfig config;
      config.dot_dimension_numbers = inst->attrs().dot_dnums;
      replacement = computation.AddInstruction(
          HloInstruction::CreateCustomCall(inst->shape(), operands, std::string(kGemmCallTarget), config.ToJson()),
          name + ".call");
    } else {
      continue;
    }
    if (absl::Status s = computation.ReplaceInstruction(inst, replacement); !s.ok()) return s;
    ++rewritten;
  }
  return rewritten;
}

}  // namespace passlab::testing_only

#endif  // PASSLAB_TEST_CORE_RUNTIME_TEST_REWRITE_H_
