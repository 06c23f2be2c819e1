#include "passes/layout/broadcast_canonicalizer.h"

#include <algorithm>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"

namespace passlab {

absl::StatusOr<bool> BroadcastCanonicalizer::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* hlo : computation->MakeInstructionPostOrder()) {
      if (hlo->opcode() != HloOpcode::kBroadcast) continue;
      const std::vector<int64_t>& dims = hlo->dimensions();
      if (std::is_sorted(dims.begin(), dims.end())) continue;
      // broadcast(x), dimensions=D => broadcast(transpose(x)), dimensions=sort(D):
      // operand dimension i of the transpose is the one that went to sort(D)[i].
      std::vector<int64_t> sorted = dims;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int64_t> perm;
      for (int64_t d : sorted) perm.push_back(std::find(dims.begin(), dims.end(), d) - dims.begin());
      HloInstruction* operand = hlo->mutable_operand(0);
      std::vector<int64_t> transposed_dims;
      for (int64_t p : perm) transposed_dims.push_back(operand->shape().dimensions(p));
      Shape transposed = operand->shape();
      Shape fresh(transposed.element_type(), transposed_dims);
      for (size_t i = 0; i < perm.size(); ++i) fresh.set_dynamic_dimension(i, transposed.is_dynamic_dimension(perm[i]));
      if (transposed.has_layout()) fresh.set_layout(transposed.layout());  // a physical transposition
      HloInstruction* transpose =
          computation->AddInstruction(HloInstruction::CreateTranspose(fresh, operand, perm));
      HloInstruction* broadcast =
          computation->AddInstruction(HloInstruction::CreateBroadcast(hlo->shape(), transpose, sorted));
      RETURN_IF_ERROR(computation->ReplaceInstruction(hlo, broadcast));
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
