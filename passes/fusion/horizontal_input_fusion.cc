#include "passes/fusion/horizontal_input_fusion.h"

#include "passes/fusion/gpu_fusible.h"

namespace passlab {
namespace {

bool IsInputFusion(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kFusion && h.fusion_kind() == FusionKind::kInput && IsFusibleFusion(h) &&
         ReductionHero(h) != nullptr;
}

// The distinct input fusions among the operands of `consumer` (through
// get-tuple-elements of multi-output ones), in operand order.
std::vector<HloInstruction*> InputFusionOperands(const HloInstruction& consumer) {
  std::vector<HloInstruction*> out;
  for (HloInstruction* o : consumer.operands()) {
    HloInstruction* f = o->opcode() == HloOpcode::kGetTupleElement ? o->mutable_operand(0) : o;
    if (IsInputFusion(*f) && std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

}  // namespace

absl::StatusOr<bool> GpuHorizontalInputFusion::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* computation : ProgramComputations(module)) {
    ReachabilityQuery reachability(*computation);
    // Consumers from the root up; fused candidates leave the computation, so
    // each consumer's candidates are collected when it is reached.
    std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
    absl::flat_hash_set<const HloInstruction*> removed;
    computation->set_removal_listener([&](const HloInstruction* h) { removed.insert(h); });
    absl::Status status;
    for (auto it = order.rbegin(); it != order.rend() && status.ok(); ++it) {
      if (removed.contains(*it)) continue;
      std::vector<HloInstruction*> candidates = InputFusionOperands(**it);
      for (size_t i = 0; i < candidates.size() && status.ok(); ++i) {
        if (candidates[i] == nullptr) continue;
        for (size_t j = i + 1; j < candidates.size(); ++j) {
          HloInstruction* a = candidates[i];
          HloInstruction* b = candidates[j];
          if (b == nullptr || !SameIterationSpace(*a, *b) || !WithinMultiOutputLimits(*a, *b)) continue;
          if (reachability.Reaches(a, b) || reachability.Reaches(b, a)) continue;
          status = MergeSibling(a, b);
          if (!status.ok()) break;
          candidates[j] = nullptr;
          reachability.Invalidate();
          BumpCounter("input fusions fused horizontally");
          changed = true;
        }
      }
    }
    computation->set_removal_listener(nullptr);
    if (!status.ok()) return status;
  }
  return changed;
}

}  // namespace passlab
