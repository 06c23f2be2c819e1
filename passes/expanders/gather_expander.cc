#include "passes/expanders/gather_expander.h"

#include <algorithm>

#include "core/ir/str_util.h"
#include "core/verify/shape_inference.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The operand dimensions that survive into the output (neither collapsed
// nor batching), in order, and their slice sizes.
std::vector<int64_t> WindowSizes(const HloInstruction& gather) {
  const GatherDimensionNumbers& g = gather.attrs().gather_dnums;
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < gather.operand(0)->shape().rank(); ++d) {
    if (!Contains(g.collapsed_slice_dims, d) && !Contains(g.operand_batching_dims, d)) {
      sizes.push_back(gather.attrs().slice_sizes[d]);
    }
  }
  return sizes;
}

// The operand window for index vector `i` (s32 scalar) of the canonical
// [N, K] `indices`, reshaped to [1, window sizes...].
HloInstruction* GatherOne(ExpansionBuilder& b, const HloInstruction& gather, HloInstruction* operand,
                          HloInstruction* indices, HloInstruction* i) {
  const GatherDimensionNumbers& g = gather.attrs().gather_dnums;
  const Shape& operand_shape = operand->shape();
  const Shape& original_indices = gather.operand(1)->shape();
  const PrimitiveType s64 = PrimitiveType::kS64, s32 = PrimitiveType::kS32;
  const int64_t k_size = indices->shape().dimensions(1);
  std::vector<HloInstruction*> start(operand_shape.rank(), nullptr);
  if (!g.start_index_map.empty()) {
    HloInstruction* row = b.DynamicSlice(indices, {i, b.ConstantScalar(s32, 0)}, {1, k_size});
    row = b.Convert(b.Reshape(row, {k_size}), s64);
    for (size_t k = 0; k < g.start_index_map.size(); ++k) {
      start[g.start_index_map[k]] = b.ElementAsScalar(row, static_cast<int64_t>(k));
    }
  }
  // Batching dimensions: the coordinate of index vector i along the
  // matching indices dimension.
  std::vector<int64_t> batch_dims = IndexBatchDims(original_indices, g.index_vector_dim);
  for (size_t k = 0; k < g.operand_batching_dims.size(); ++k) {
    int64_t stride = 1, size = 1;
    bool after = false;
    for (int64_t d : batch_dims) {
      if (after) stride *= original_indices.dimensions(d);
      if (d == g.start_indices_batching_dims[k]) {
        after = true;
        size = original_indices.dimensions(d);
      }
    }
    HloInstruction* coord = b.Binary(HloOpcode::kRemainder, b.Binary(HloOpcode::kDivide, i, b.ConstantScalar(s32, stride)),
                                     b.ConstantScalar(s32, size));
    start[g.operand_batching_dims[k]] = b.Convert(coord, s64);
  }
  for (HloInstruction*& s : start) {
    if (s == nullptr) s = b.ConstantScalar(s64, 0);
  }
  HloInstruction* slice = b.DynamicSlice(operand, start, gather.attrs().slice_sizes);
  std::vector<int64_t> dims = {1};
  for (int64_t size : WindowSizes(gather)) dims.push_back(size);
  return b.Reshape(slice, dims);
}

}  // namespace

int64_t GatherLoopTripCount(const HloInstruction& gather) {
  const Shape& indices = gather.operand(1)->shape();
  int64_t count = 1;
  for (int64_t d : IndexBatchDims(indices, gather.attrs().gather_dnums.index_vector_dim)) {
    count *= indices.dimensions(d);
  }
  return count;
}

bool GatherExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kGather || inst->shape().element_count() == 0) return false;
  switch (mode_) {
    case Mode::kEliminateAllGathers: return true;
    case Mode::kEliminateSimpleGathers:
      return GatherLoopTripCount(*inst) == 1 || inst->attrs().slice_sizes == inst->operand(0)->shape().dimensions();
  }
  return false;
}

absl::StatusOr<HloInstruction*> GatherExpander::ExpandInstruction(HloInstruction* gather) {
  const GatherDimensionNumbers& g = gather->attrs().gather_dnums;
  HloInstruction* operand = gather->mutable_operand(0);
  absl::StatusOr<Shape> inferred =
      InferGatherShape(operand->shape(), gather->operand(1)->shape(), g, gather->attrs().slice_sizes);
  if (!inferred.ok()) return inferred.status();
  if (!inferred->SameDimensions(gather->shape())) {
    return absl::InvalidArgumentError(StrCat("gather '", gather->name(), "' has shape ", gather->shape().ToString(),
                                             " but its operands give ", inferred->ToString()));
  }
  ExpansionBuilder b(gather->parent(), gather->metadata());
  const int64_t count = GatherLoopTripCount(*gather);
  std::vector<int64_t> window = WindowSizes(*gather);

  // A window as large as the operand: every start clamps to 0, so every
  // index vector reads the whole operand (batching dims excepted, which are
  // size 1 in the window and so need the loop).
  if (gather->attrs().slice_sizes == operand->shape().dimensions() && g.operand_batching_dims.empty()) {
    std::vector<int64_t> dims = {count};
    dims.insert(dims.end(), window.begin(), window.end());
    std::vector<int64_t> bdims;
    for (size_t k = 0; k < window.size(); ++k) bdims.push_back(static_cast<int64_t>(k) + 1);
    HloInstruction* whole = b.Reshape(operand, window);
    return GatherOutputFromCanonical(b, b.Broadcast(whole, dims, bdims), *gather);
  }

  HloInstruction* indices = CanonicalizeGatherScatterIndices(b, gather->mutable_operand(1), g.index_vector_dim);
  // One index vector: a single dynamic-slice, no loop.
  if (count == 1) {
    HloInstruction* one = GatherOne(b, *gather, operand, indices, b.ConstantScalar(PrimitiveType::kS32, 0));
    return GatherOutputFromCanonical(b, one, *gather);
  }

  std::vector<int64_t> acc_dims = {count};
  acc_dims.insert(acc_dims.end(), window.begin(), window.end());
  HloInstruction* acc = b.Broadcast(b.Zero(gather->shape().element_type()), acc_dims);
  auto body = [&](ExpansionBuilder& lb, HloInstruction* i,
                  const std::vector<HloInstruction*>& st) -> absl::StatusOr<std::vector<HloInstruction*>> {
    HloInstruction* row = GatherOne(lb, *gather, st[0], st[1], i);
    std::vector<HloInstruction*> at = {i};
    HloInstruction* zero = lb.ConstantScalar(PrimitiveType::kS32, 0);
    for (size_t k = 0; k < window.size(); ++k) at.push_back(zero);
    return std::vector<HloInstruction*>{st[0], st[1], lb.DynamicUpdateSlice(st[2], row, at)};
  };
  absl::StatusOr<std::vector<HloInstruction*>> result = MakeCountedLoop(
      gather->parent(), count, {operand, indices, acc}, body, gather->metadata(), StrCat(gather->name(), "_loop"));
  if (!result.ok()) return result.status();
  return GatherOutputFromCanonical(b, (*result)[2], *gather);
}

}  // namespace passlab
