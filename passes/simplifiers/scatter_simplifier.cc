#include "passes/simplifiers/scatter_simplifier.h"

#include <algorithm>
#include <numeric>

#include "core/ir/str_util.h"
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

int64_t ScatterOperandCount(const HloInstruction& scatter) { return (scatter.operand_count() - 1) / 2; }

// Updates [scatter dims..., window dims...] as [N, window] in the permuted
// operand's dimension order (`perm`), with size 1 for inserted dimensions.
HloInstruction* CanonicalUpdates(ExpansionBuilder& b, HloInstruction* updates, const ScatterDimensionNumbers& sd,
                                 int64_t n, int64_t rank, const std::vector<int64_t>& perm) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < updates->shape().rank(); ++d) {
    if (!Contains(sd.update_window_dims, d)) order.push_back(d);
  }
  order.insert(order.end(), sd.update_window_dims.begin(), sd.update_window_dims.end());
  HloInstruction* t = b.Transpose(updates, order);
  std::vector<int64_t> window = {n};
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    window.push_back(Contains(sd.inserted_window_dims, d) ? 1 : updates->shape().dimensions(sd.update_window_dims[next++]));
  }
  HloInstruction* r = b.Reshape(t, window);
  std::vector<int64_t> to_perm = {0};
  for (int64_t d : perm) to_perm.push_back(1 + d);
  return b.Transpose(r, to_perm);
}

}  // namespace

bool ScatterSimplifier::IsSimplifiedScatter(const HloInstruction& scatter) {
  const ScatterDimensionNumbers& sd = scatter.attrs().scatter_dnums;
  int64_t rank = scatter.operand(0)->shape().rank();
  return scatter.operand(ScatterOperandCount(scatter))->shape().rank() == 2 && sd.index_vector_dim == 1 &&
         IsIota(sd.scatter_dims_to_operand_dims, 0) && sd.inserted_window_dims.empty() &&
         sd.input_batching_dims.empty() && static_cast<int64_t>(sd.update_window_dims.size()) == rank &&
         IsIota(sd.update_window_dims, 1);
}

bool ScatterSimplifier::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kScatter || !inst->attrs().scatter_dnums.input_batching_dims.empty() ||
      !inst->attrs().scatter_dnums.scatter_indices_batching_dims.empty() || IsSimplifiedScatter(*inst)) {
    return false;
  }
  // Dynamic shapes are DynamicPadder's to make static first (XLA runs it
  // before); the transposes and reshapes here keep static bounds only.
  for (const HloInstruction* op : inst->operands()) {
    if (!op->shape().is_static()) return false;
  }
  return inst->shape().is_static();
}

absl::StatusOr<HloInstruction*> ScatterSimplifier::ExpandInstruction(HloInstruction* scatter) {
  const ScatterDimensionNumbers& sd = scatter->attrs().scatter_dnums;
  const int64_t count = ScatterOperandCount(*scatter);
  const int64_t rank = scatter->operand(0)->shape().rank();
  ExpansionBuilder b(scatter->parent(), scatter->metadata());

  // Scattered operand dimensions first, in scatter_dims_to_operand_dims order.
  std::vector<int64_t> perm = sd.scatter_dims_to_operand_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(sd.scatter_dims_to_operand_dims, d)) perm.push_back(d);
  }
  std::vector<int64_t> inverse(perm.size());
  for (size_t j = 0; j < perm.size(); ++j) inverse[perm[j]] = static_cast<int64_t>(j);

  HloInstruction* indices =
      CanonicalizeGatherScatterIndices(b, scatter->mutable_operand(count), sd.index_vector_dim);
  const int64_t n = indices->shape().dimensions(0);
  std::vector<HloInstruction*> operands;
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < count; ++i) {
    operands.push_back(b.Transpose(scatter->mutable_operand(i), perm));
    shapes.push_back(operands.back()->shape());
  }
  operands.push_back(indices);
  for (int64_t i = 0; i < count; ++i) {
    operands.push_back(CanonicalUpdates(b, scatter->mutable_operand(count + 1 + i), sd, n, rank, perm));
  }
  auto canonical = HloInstruction::Create(HloOpcode::kScatter, count == 1 ? shapes[0] : Shape::Tuple(shapes), operands);
  HloAttributes& attrs = canonical->mutable_attrs();
  attrs.scatter_dnums.update_window_dims.resize(rank);
  std::iota(attrs.scatter_dnums.update_window_dims.begin(), attrs.scatter_dnums.update_window_dims.end(), 1);
  attrs.scatter_dnums.scatter_dims_to_operand_dims.resize(sd.scatter_dims_to_operand_dims.size());
  std::iota(attrs.scatter_dnums.scatter_dims_to_operand_dims.begin(),
            attrs.scatter_dnums.scatter_dims_to_operand_dims.end(), 0);
  attrs.scatter_dnums.index_vector_dim = 1;
  attrs.indices_are_sorted = scatter->attrs().indices_are_sorted;
  attrs.unique_indices = scatter->attrs().unique_indices;
  canonical->set_to_apply(scatter->to_apply());
  HloInstruction* result = b.Add(std::move(canonical));

  // Undo the operand transpose.
  if (count == 1) return b.Transpose(result, inverse);
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < count; ++i) elements.push_back(b.Transpose(b.GetTupleElement(result, i), inverse));
  return b.Tuple(elements);
}

}  // namespace passlab
