#include "passes/simplifiers/gemv_rewriter.h"

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "passes/simplifiers/dot_operand_dims.h"

namespace passlab {
namespace {

// XLA's LayoutUtil::IsMonotonicWithDim0Major: minor_to_major is descending.
bool IsDescending(const Shape& shape) {
  const std::vector<int64_t> m2m = LayoutOrDefault(shape).minor_to_major();
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  }
  return true;
}

// `shape` with `dims` and the descending layout, which must extend a
// descending one.
absl::StatusOr<Shape> WithMinorDimension(const Shape& shape, std::vector<int64_t> dims) {
  if (!IsDescending(shape)) return absl::InvalidArgumentError("Layout is not normalized.");
  return Shape(shape.element_type(), std::move(dims));
}

// The dot's side has exactly one non-contracting dimension.
bool HasNonContractingDim(const HloInstruction& dot, int side) {
  const DotDimensionNumbers& d = dot.attrs().dot_dnums;
  const size_t listed = side == 0 ? d.lhs_batch_dimensions.size() + d.lhs_contracting_dimensions.size()
                                  : d.rhs_batch_dimensions.size() + d.rhs_contracting_dimensions.size();
  return static_cast<size_t>(dot.operand(side)->shape().rank()) == listed + 1;
}

}  // namespace

absl::StatusOr<bool> GemvRewriter::RunImpl(HloModule& module, PassRunContext*) {
  const bool sensitive = options_.is_layout_sensitive;
  auto reshape_or_bitcast = [&](const Shape& shape, HloInstruction* operand) {
    return sensitive ? HloInstruction::CreateBitcast(shape, operand) : HloInstruction::CreateReshape(shape, operand);
  };
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* dot : c->MakeInstructionPostOrder()) {
      if (dot->opcode() != HloOpcode::kDot) continue;
      const bool lhs_matrix = HasNonContractingDim(*dot, 0);
      const bool rhs_matrix = HasNonContractingDim(*dot, 1);
      // Matrix-matrix and vector-vector products stay as they are.
      if (lhs_matrix == rhs_matrix || !dot->shape().is_static()) continue;
      HloInstruction* lhs = dot->mutable_operand(0);
      HloInstruction* rhs = dot->mutable_operand(1);
      if (!sensitive && !(IsDescending(lhs->shape()) && IsDescending(rhs->shape()) && IsDescending(dot->shape()))) {
        continue;
      }
      // vector v[.., n] => v[.., n, 1]
      auto add_unit_dim = [&](HloInstruction* v) -> absl::StatusOr<HloInstruction*> {
        std::vector<int64_t> dims = v->shape().dimensions();
        dims.push_back(1);
        ASSIGN_OR_RETURN(Shape shape, WithMinorDimension(v->shape(), dims));
        return c->AddInstruction(reshape_or_bitcast(shape, v));
      };
      if (!lhs_matrix) {
        ASSIGN_OR_RETURN(HloInstruction* v, add_unit_dim(lhs));
        lhs = v;
      }
      if (!rhs_matrix) {
        ASSIGN_OR_RETURN(HloInstruction* v, add_unit_dim(rhs));
        rhs = v;
      }
      // The product gets the unit dimension where the vector's side puts its
      // non-contracting dimension: before rhs's, or after lhs's.
      std::vector<int64_t> out = dot->shape().dimensions();
      if (!lhs_matrix) {
        out.insert(out.end() - 1, 1);
      } else {
        out.push_back(1);
      }
      ASSIGN_OR_RETURN(Shape out_shape, WithMinorDimension(dot->shape(), out));
      HloInstruction* product = c->AddInstruction(
          HloInstruction::CreateDot(out_shape, lhs, rhs, dot->attrs().dot_dnums, dot->attrs().precision_config));
      HloInstruction* back = c->AddInstruction(reshape_or_bitcast(dot->shape(), product));
      RETURN_IF_ERROR(c->ReplaceInstruction(dot, back));
      BumpCounter("rewrote gemv as gemm");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
