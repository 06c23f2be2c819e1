#include "core/codegen/fusion_analysis.h"

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"

namespace passlab {

namespace {

void FlattenRoots(const HloInstruction* root, std::vector<const HloInstruction*>& out) {
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) FlattenRoots(operand, out);
    return;
  }
  out.push_back(root);
}

// A transpose that moves data in memory (not a relabelling of unit dims).
bool IsRealTranspose(const HloInstruction* h) {
  if (h->opcode() != HloOpcode::kTranspose) return false;
  std::vector<int64_t> moved;
  for (int64_t d : h->dimensions()) {
    if (h->operand(0)->shape().dimensions(d) != 1) moved.push_back(d);
  }
  for (size_t i = 1; i < moved.size(); ++i) {
    if (moved[i] < moved[i - 1]) return true;
  }
  return false;
}

}  // namespace

const HloInstruction* FindHero(const HloInstruction* root) {
  const HloInstruction* h = root;
  while (true) {
    bool passes_through =
        (h->IsElementwise() && h->operand_count() == 1) || h->opcode() == HloOpcode::kBitcast;
    if (!passes_through) return h;
    const HloInstruction* operand = h->operand(0);
    if (operand->opcode() == HloOpcode::kParameter || operand->opcode() == HloOpcode::kConstant) {
      return h;
    }
    if (operand->user_count() != 1) return h;
    h = operand;
  }
}

FusionAnalysis AnalyzeFusion(const HloInstruction& instruction) {
  FusionAnalysis a;
  if (instruction.opcode() == HloOpcode::kFusion) {
    FlattenRoots(instruction.fused_expression_root(), a.roots);
  } else {
    a.roots.push_back(&instruction);
  }
  for (const HloInstruction* r : a.roots) a.heroes.push_back(FindHero(r));
  bool all_slices = !a.roots.empty();
  for (const HloInstruction* r : a.roots) all_slices &= r->opcode() == HloOpcode::kSlice;
  for (const HloInstruction* h : a.heroes) {
    if (h->opcode() == HloOpcode::kReduce) {
      a.kind = EmitterKind::kReduction;
      const HloInstruction* input = h->operand(0);
      int64_t minor = input->shape().rank() == 0 ? -1
                      : input->shape().has_layout() ? input->shape().layout().minor_to_major(0)
                                                    : input->shape().rank() - 1;
      for (int64_t d : h->dimensions()) a.row_reduction |= d == minor;
      return a;
    }
  }
  for (const HloInstruction* h : a.heroes) {
    if (IsRealTranspose(h)) {
      a.kind = EmitterKind::kTranspose;
      return a;
    }
  }
  const HloInstruction* first = a.roots.front();
  if (first->opcode() == HloOpcode::kScatter) {
    a.kind = EmitterKind::kScatter;
  } else if (first->opcode() == HloOpcode::kSelectAndScatter) {
    a.kind = EmitterKind::kSelectAndScatter;
  } else if (first->opcode() == HloOpcode::kDynamicUpdateSlice) {
    a.kind = EmitterKind::kInPlaceDynamicUpdateSlice;
  } else if (first->opcode() == HloOpcode::kConcatenate && a.roots.size() == 1) {
    a.kind = EmitterKind::kConcatenate;
  } else if (all_slices && a.roots.size() > 1) {
    a.kind = EmitterKind::kInputSlices;
  }
  return a;
}

}  // namespace passlab
