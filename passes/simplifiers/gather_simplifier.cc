#include "passes/simplifiers/gather_simplifier.h"

#include <algorithm>
#include <numeric>

#include "core/ir/str_util.h"
#include "core/verify/shape_inference.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool IsIota(const std::vector<int64_t>& v, int64_t first) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != first + static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace

bool GatherSimplifier::IsSimplifiedGather(const HloInstruction& gather) {
  const GatherDimensionNumbers& g = gather.attrs().gather_dnums;
  return gather.operand(1)->shape().rank() == 2 && g.index_vector_dim == 1 && IsIota(g.start_index_map, 0) &&
         g.collapsed_slice_dims.empty() && g.operand_batching_dims.empty() && !g.offset_dims.empty() &&
         IsIota(g.offset_dims, 1);
}

bool GatherSimplifier::InstructionMatchesPattern(HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kGather && inst->attrs().gather_dnums.operand_batching_dims.empty() &&
         !IsSimplifiedGather(*inst);
}

absl::StatusOr<HloInstruction*> GatherSimplifier::ExpandInstruction(HloInstruction* gather) {
  const GatherDimensionNumbers& g = gather->attrs().gather_dnums;
  const std::vector<int64_t>& slice_sizes = gather->attrs().slice_sizes;
  HloInstruction* operand = gather->mutable_operand(0);
  const Shape& operand_shape = operand->shape();
  absl::StatusOr<Shape> inferred = InferGatherShape(operand_shape, gather->operand(1)->shape(), g, slice_sizes);
  if (!inferred.ok()) return inferred.status();
  if (!inferred->SameDimensions(gather->shape())) {
    return absl::InvalidArgumentError(StrCat("gather '", gather->name(), "' has shape ", gather->shape().ToString(),
                                             " but its operands give ", inferred->ToString()));
  }
  ExpansionBuilder b(gather->parent(), gather->metadata());
  const PrimitiveType type = gather->shape().element_type();

  // gather(slice size 0) => broadcast(0): there is nothing to read.
  if (std::find(slice_sizes.begin(), slice_sizes.end(), 0) != slice_sizes.end()) {
    return b.Broadcast(b.Zero(type), gather->shape().dimensions());
  }

  // Indexed operand dimensions first, in start_index_map order.
  std::vector<int64_t> perm = g.start_index_map;
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    if (!Contains(g.start_index_map, d)) perm.push_back(d);
  }
  std::vector<int64_t> inverse(perm.size());
  for (size_t j = 0; j < perm.size(); ++j) inverse[perm[j]] = static_cast<int64_t>(j);
  HloInstruction* permuted = b.Transpose(operand, perm);
  HloInstruction* indices = CanonicalizeGatherScatterIndices(b, gather->mutable_operand(1), g.index_vector_dim);

  const int64_t rank = operand_shape.rank();
  std::vector<int64_t> new_sizes, out_dims = {indices->shape().dimensions(0)};
  for (int64_t d : perm) new_sizes.push_back(slice_sizes[d]);
  out_dims.insert(out_dims.end(), new_sizes.begin(), new_sizes.end());
  auto canonical = HloInstruction::Create(HloOpcode::kGather, Shape(type, out_dims), {permuted, indices});
  HloAttributes& attrs = canonical->mutable_attrs();
  attrs.gather_dnums.offset_dims.resize(rank);
  std::iota(attrs.gather_dnums.offset_dims.begin(), attrs.gather_dnums.offset_dims.end(), 1);
  attrs.gather_dnums.start_index_map.resize(g.start_index_map.size());
  std::iota(attrs.gather_dnums.start_index_map.begin(), attrs.gather_dnums.start_index_map.end(), 0);
  attrs.gather_dnums.index_vector_dim = 1;
  attrs.slice_sizes = new_sizes;
  attrs.indices_are_sorted = gather->attrs().indices_are_sorted;
  HloInstruction* result = b.Add(std::move(canonical));

  // Undo the operand transpose, then drop the collapsed (size-1) dimensions.
  std::vector<int64_t> back = {0};
  for (int64_t d = 0; d < rank; ++d) back.push_back(1 + inverse[d]);
  result = b.Transpose(result, back);
  std::vector<int64_t> kept = {result->shape().dimensions(0)};
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(g.collapsed_slice_dims, d)) kept.push_back(slice_sizes[d]);
  }
  result = b.Reshape(result, kept);
  return GatherOutputFromCanonical(b, result, *gather);
}

}  // namespace passlab
