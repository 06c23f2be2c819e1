#include "passes/simplifiers/transpose_folding.h"

#include <utility>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"

namespace passlab {
namespace {

std::vector<int64_t> Map(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(perm[d]);
  return out;
}

bool IsNonIdentityTranspose(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kTranspose) return false;
  for (int64_t d = 0; d < static_cast<int64_t>(inst.dimensions().size()); ++d) {
    if (inst.dimensions()[d] != d) return true;
  }
  return false;
}

// XLA's IsRowColumnTransposeDotOperand: the transpose keeps every batch
// dimension in place and the operand has exactly one contracting and one
// free dimension, so it only swaps rows and columns.
bool IsRowColumnTransposeDotOperand(const HloInstruction& dot, int64_t i) {
  const HloInstruction& transpose = *dot.operand(i);
  const DotDimensionNumbers& d = dot.attrs().dot_dnums;
  const std::vector<int64_t>& batch = i == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  const std::vector<int64_t>& contracting = i == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
  if (static_cast<int64_t>(batch.size()) != transpose.shape().rank() - 2 || contracting.size() != 1) return false;
  for (int64_t b : batch) {
    if (transpose.dimensions()[b] != b) return false;
  }
  return true;
}

struct Fold {
  HloInstruction* inst;
  std::vector<int64_t> operands;
};

}  // namespace

absl::StatusOr<bool> TransposeFolding::RunImpl(HloModule& module, PassRunContext*) {
  // Folding edits the graph, so every opportunity is found first.
  std::vector<Fold> dots, convolutions;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() == HloOpcode::kDot) {
        if (options_.dot_rule == TransposeFoldingOptions::DotRule::kNever) continue;
        if (inst->operand(0)->shape().rank() < 2 || inst->operand(1)->shape().rank() < 2) continue;
        Fold fold{inst, {}};
        for (int64_t i = 0; i < 2; ++i) {
          if (!IsNonIdentityTranspose(*inst->operand(i))) continue;
          bool allowed = options_.dot_rule == TransposeFoldingOptions::DotRule::kAlways ||
                         IsRowColumnTransposeDotOperand(*inst, i);
          if (allowed) fold.operands.push_back(i);
        }
        if (!fold.operands.empty()) dots.push_back(std::move(fold));
      } else if (inst->opcode() == HloOpcode::kConvolution && inst->attrs().conv_dnums.has_value()) {
        if (options_.conv_rule == TransposeFoldingOptions::ConvRule::kNever) continue;
        Fold fold{inst, {}};
        for (int64_t i = 0; i < inst->operand_count(); ++i) {
          if (inst->operand(i)->opcode() == HloOpcode::kTranspose) fold.operands.push_back(i);
        }
        if (!fold.operands.empty()) convolutions.push_back(std::move(fold));
      }
    }
  }

  // dot(transpose(a), b) => dot(a, b) with a's dimension numbers mapped
  // through the permutation.
  for (const Fold& fold : dots) {
    HloInstruction* dot = fold.inst;
    std::vector<HloInstruction*> operands = dot->operands();
    DotDimensionNumbers d = dot->attrs().dot_dnums;
    for (int64_t i : fold.operands) {
      const std::vector<int64_t>& perm = operands[i]->dimensions();
      std::vector<int64_t>& batch = i == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
      std::vector<int64_t>& contracting = i == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
      batch = Map(batch, perm);
      contracting = Map(contracting, perm);
      operands[i] = operands[i]->mutable_operand(0);
      BumpCounter(i == 0 ? "dot(transpose(A), B) => dot(A, B)" : "dot(A, transpose(B)) => dot(A, B)");
    }
    // Metadata, backend config and frontend attributes carry over.
    std::unique_ptr<HloInstruction> folded = dot->CloneWithNewOperands(dot->shape(), operands);
    folded->mutable_attrs().dot_dnums = std::move(d);
    RETURN_IF_ERROR(dot->parent()->ReplaceWithNewInstruction(dot, std::move(folded)));
  }

  // convolution(transpose(x), transpose(k)) => convolution(x, k) with the
  // input and kernel dimension numbers mapped through the permutations.
  for (const Fold& fold : convolutions) {
    HloInstruction* conv = fold.inst;
    std::vector<HloInstruction*> operands = conv->operands();
    ConvolutionDimensionNumbers d = *conv->attrs().conv_dnums;
    for (int64_t i : fold.operands) {
      const std::vector<int64_t>& p = operands[i]->dimensions();
      if (i == 0) {
        d.input_batch_dimension = p[d.input_batch_dimension];
        d.input_feature_dimension = p[d.input_feature_dimension];
        d.input_spatial_dimensions = Map(d.input_spatial_dimensions, p);
        BumpCounter("convolution(transpose(X), K) => convolution(X, K)");
      } else {
        d.kernel_input_feature_dimension = p[d.kernel_input_feature_dimension];
        d.kernel_output_feature_dimension = p[d.kernel_output_feature_dimension];
        d.kernel_spatial_dimensions = Map(d.kernel_spatial_dimensions, p);
        BumpCounter("convolution(X, transpose(K)) => convolution(X, K)");
      }
      operands[i] = operands[i]->mutable_operand(0);
    }
    std::unique_ptr<HloInstruction> folded = conv->CloneWithNewOperands(conv->shape(), operands);
    folded->mutable_attrs().conv_dnums = std::move(d);
    RETURN_IF_ERROR(conv->parent()->ReplaceWithNewInstruction(conv, std::move(folded)));
  }
  return !dots.empty() || !convolutions.empty();
}

}  // namespace passlab
