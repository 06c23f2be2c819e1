#include "passes/simplifiers/gather_simplifier.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/verify/shape_inference.h"
#include "passes/simplifiers/gather_scatter_utils.h"

namespace passlab {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// x without the size-1 dimensions in `elided`.
HloInstruction* ElideDegenerateDims(HloInstruction* x, const std::vector<int64_t>& elided) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (!Contains(elided, d)) dims.push_back(x->shape().dimensions(d));
  }
  return AddReshape(x, std::move(dims));
}

}  // namespace

bool GatherSimplifier::IsSimplifiedGather(const HloInstruction& gather) {
  const GatherDimensionNumbers& g = gather.attrs().gather_dnums;
  // A gather from a scalar is never simplified: it becomes a broadcast.
  if (g.collapsed_slice_dims.size() + g.offset_dims.size() == 0) return false;
  return gather.operand(1)->shape().rank() == 2 && g.index_vector_dim == 1 && g.collapsed_slice_dims.empty() &&
         g.offset_dims.front() == 1 && g.offset_dims.back() == static_cast<int64_t>(g.offset_dims.size());
}

bool GatherSimplifier::InstructionMatchesPattern(HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kGather && inst->attrs().gather_dnums.operand_batching_dims.empty() &&
         !IsSimplifiedGather(*inst);
}

absl::StatusOr<HloInstruction*> GatherSimplifier::ExpandInstruction(HloInstruction* gather) {
  const GatherDimensionNumbers& g = gather->attrs().gather_dnums;
  const std::vector<int64_t>& slice_sizes = gather->attrs().slice_sizes;
  HloInstruction* operand = gather->mutable_operand(0);
  ASSIGN_OR_RETURN(Shape inferred, InferGatherShape(operand->shape(), gather->operand(1)->shape(), g, slice_sizes));
  if (!inferred.SameDimensions(gather->shape())) {
    return absl::InvalidArgumentError(StrCat("gather '", gather->name(), "' has shape ", gather->shape().ToString(),
                                             " but its operands give ", inferred.ToString()));
  }
  HloComputation* c = gather->parent();
  const PrimitiveType type = gather->shape().element_type();

  // gather(slice size 0) => broadcast(0): there is nothing to read.
  if (Contains(slice_sizes, 0)) {
    HloInstruction* zero = c->AddInstruction(HloInstruction::CreateConstant(Literal(Shape::Scalar(type))));
    return c->AddInstruction(HloInstruction::CreateBroadcast(gather->shape(), zero, {}));
  }
  // gather(scalar) => broadcast(scalar): every index reads the same value.
  const int64_t operand_rank = static_cast<int64_t>(g.collapsed_slice_dims.size() + g.offset_dims.size());
  if (operand_rank == 0) return c->AddInstruction(HloInstruction::CreateBroadcast(gather->shape(), operand, {}));

  // The canonical gather: [N, slice sizes...] over [N, K] indices.
  HloInstruction* indices = TransformStartIndices(gather->mutable_operand(1), g.index_vector_dim);
  std::vector<int64_t> out_dims = {indices->shape().dimensions(0)};
  out_dims.insert(out_dims.end(), slice_sizes.begin(), slice_sizes.end());
  auto canonical = HloInstruction::Create(HloOpcode::kGather, Shape(type, out_dims), {operand, indices});
  HloAttributes& attrs = canonical->mutable_attrs();
  attrs.gather_dnums.offset_dims.resize(operand_rank);
  std::iota(attrs.gather_dnums.offset_dims.begin(), attrs.gather_dnums.offset_dims.end(), 1);
  attrs.gather_dnums.start_index_map = g.start_index_map;
  attrs.gather_dnums.index_vector_dim = 1;
  attrs.slice_sizes = slice_sizes;
  attrs.indices_are_sorted = gather->attrs().indices_are_sorted;
  HloInstruction* result = c->AddInstruction(std::move(canonical));

  // Drop the collapsed (size-1) slice dimensions.
  if (!g.collapsed_slice_dims.empty()) {
    std::vector<int64_t> collapsed;
    for (int64_t d : g.collapsed_slice_dims) collapsed.push_back(d + 1);
    result = ElideDegenerateDims(result, collapsed);
  }
  // Split N into the indices' batch dimensions (or drop it).
  const Shape& original_indices = gather->operand(1)->shape();
  std::vector<int64_t> batch_dims;
  for (int64_t d = 0; d < original_indices.rank(); ++d) {
    if (d != g.index_vector_dim) batch_dims.push_back(original_indices.dimensions(d));
  }
  if (batch_dims.size() > 1) {
    std::vector<int64_t> dims = batch_dims;
    dims.insert(dims.end(), result->shape().dimensions().begin() + 1, result->shape().dimensions().end());
    result = AddReshape(result, dims);
  } else if (batch_dims.empty()) {
    result = ElideDegenerateDims(result, {0});
  }
  // Move the offset dimensions to their places in the output.
  const int64_t output_rank = static_cast<int64_t>(batch_dims.size() + g.offset_dims.size());
  std::vector<int64_t> permutation;
  int64_t next_offset = static_cast<int64_t>(batch_dims.size());
  int64_t next_batch = 0;
  for (int64_t i = 0; i < output_rank; ++i) {
    permutation.push_back(Contains(g.offset_dims, i) ? next_offset++ : next_batch++);
  }
  return MaybeTranspose(result, permutation);
}

}  // namespace passlab
