#include "passes/simplifiers/transpose_folding.h"

#include <algorithm>

#include "core/ir/hlo_computation.h"

namespace passlab {
namespace {

std::vector<int64_t> Map(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(perm[d]);
  return out;
}

// The dot operand's free dims, mapped through the transpose, stay increasing.
bool FreeOrderKept(int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting,
                   const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) != batch.end() ||
        std::find(contracting.begin(), contracting.end(), d) != contracting.end()) {
      continue;
    }
    if (perm[d] < last) return false;
    last = perm[d];
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> TransposeFolding::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() == HloOpcode::kDot) {
        DotDimensionNumbers d = inst->attrs().dot_dnums;
        std::vector<HloInstruction*> ops = inst->operands();
        bool folded = false;
        for (int side = 0; side < 2; ++side) {
          HloInstruction* t = ops[side];
          if (t->opcode() != HloOpcode::kTranspose) continue;
          auto& batch = side == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
          auto& contracting = side == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
          if (!FreeOrderKept(t->shape().rank(), batch, contracting, t->dimensions())) continue;
          batch = Map(batch, t->dimensions());
          contracting = Map(contracting, t->dimensions());
          ops[side] = t->mutable_operand(0);
          folded = true;
          BumpCounter(side == 0 ? "folded lhs transpose into dot" : "folded rhs transpose into dot");
        }
        if (!folded) continue;
        auto dot = HloInstruction::CreateDot(inst->shape(), ops[0], ops[1], d, inst->attrs().precision_config);
        dot->set_metadata(inst->metadata());
        if (absl::Status s = c->ReplaceWithNewInstruction(inst, std::move(dot)); !s.ok()) return s;
        changed = true;
      } else if (inst->opcode() == HloOpcode::kConvolution && inst->attrs().conv_dnums.has_value()) {
        ConvolutionDimensionNumbers d = *inst->attrs().conv_dnums;
        std::vector<HloInstruction*> ops = inst->operands();
        bool folded = false;
        if (ops[0]->opcode() == HloOpcode::kTranspose) {
          const auto& p = ops[0]->dimensions();
          d.input_batch_dimension = p[d.input_batch_dimension];
          d.input_feature_dimension = p[d.input_feature_dimension];
          d.input_spatial_dimensions = Map(d.input_spatial_dimensions, p);
          ops[0] = ops[0]->mutable_operand(0);
          folded = true;
          BumpCounter("folded input transpose into convolution");
        }
        if (ops[1]->opcode() == HloOpcode::kTranspose) {
          const auto& p = ops[1]->dimensions();
          d.kernel_input_feature_dimension = p[d.kernel_input_feature_dimension];
          d.kernel_output_feature_dimension = p[d.kernel_output_feature_dimension];
          d.kernel_spatial_dimensions = Map(d.kernel_spatial_dimensions, p);
          ops[1] = ops[1]->mutable_operand(0);
          folded = true;
          BumpCounter("folded kernel transpose into convolution");
        }
        if (!folded) continue;
        const HloAttributes& a = inst->attrs();
        auto conv = HloInstruction::CreateConvolve(inst->shape(), ops[0], ops[1], a.feature_group_count,
                                                   a.batch_group_count, inst->window(), d, a.precision_config);
        conv->set_metadata(inst->metadata());
        if (absl::Status s = c->ReplaceWithNewInstruction(inst, std::move(conv)); !s.ok()) return s;
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace passlab
