#include "passes/simplifiers/scatter_simplifier.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "passes/simplifiers/gather_scatter_utils.h"

namespace passlab {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int64_t ScatterOperandCount(const HloInstruction& scatter) { return (scatter.operand_count() - 1) / 2; }

// Updates as [N, window...] with a size-1 window dimension for every
// inserted one (XLA's FlattenAndTransposeUpdates): scatter dimensions moved
// first and collapsed into one (or a leading 1 added when there is none).
HloInstruction* FlattenAndTransposeUpdates(HloInstruction* updates, const ScatterDimensionNumbers& sd) {
  const int64_t rank = updates->shape().rank();
  std::vector<int64_t> permutation;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(sd.update_window_dims, d)) permutation.push_back(d);
  }
  const int64_t scatter_dims = static_cast<int64_t>(permutation.size());
  permutation.insert(permutation.end(), sd.update_window_dims.begin(), sd.update_window_dims.end());
  updates = MaybeTranspose(updates, permutation);
  if (scatter_dims > 1) {
    std::vector<int64_t> dims = {1};
    for (int64_t d = 0; d < scatter_dims; ++d) dims[0] *= updates->shape().dimensions(d);
    dims.insert(dims.end(), updates->shape().dimensions().begin() + scatter_dims, updates->shape().dimensions().end());
    updates = AddReshape(updates, std::move(dims));
  } else if (scatter_dims == 0) {
    updates = InsertDegenerateDims(updates, {0});
  }
  if (!sd.inserted_window_dims.empty()) {
    std::vector<int64_t> inserted;
    for (int64_t d : sd.inserted_window_dims) inserted.push_back(d + 1);
    updates = InsertDegenerateDims(updates, inserted);
  }
  return updates;
}

// The scatter computation applied to `arguments` in the scatter's
// computation (a call inlined): a scatter into a scalar is one update.
HloInstruction* InlineComputation(HloComputation* into, const HloComputation& callee,
                                  const std::vector<HloInstruction*>& arguments) {
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (int64_t i = 0; i < callee.num_parameters(); ++i) map[callee.parameter_instruction(i)] = arguments[i];
  for (HloInstruction* inst : callee.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) operands.push_back(map.at(op));
    map[inst] = into->AddInstruction(inst->CloneWithNewOperands(inst->shape(), operands));
  }
  return map.at(callee.root_instruction());
}

}  // namespace

bool ScatterSimplifier::IsSimplifiedScatter(const HloInstruction& scatter) {
  const ScatterDimensionNumbers& sd = scatter.attrs().scatter_dnums;
  const int64_t count = ScatterOperandCount(scatter);
  if (scatter.operand(0)->shape().rank() == 0) return false;
  const bool standard_index_vector_dim = sd.index_vector_dim + 1 == scatter.operand(count)->shape().rank();
  const int64_t scatter_dims =
      scatter.operand(count + 1)->shape().rank() - static_cast<int64_t>(sd.update_window_dims.size());
  return standard_index_vector_dim && scatter_dims <= 1 && !Contains(sd.update_window_dims, 0) &&
         std::is_sorted(sd.update_window_dims.begin(), sd.update_window_dims.end()) && sd.inserted_window_dims.empty();
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
  HloComputation* c = scatter->parent();
  if (scatter->to_apply() == nullptr) return absl::InvalidArgumentError("scatter without a computation");
  const int64_t operand_rank = static_cast<int64_t>(sd.update_window_dims.size() + sd.inserted_window_dims.size());

  // A scatter into a scalar: the computation applied to operands and updates.
  if (operand_rank == 0) {
    std::vector<HloInstruction*> arguments;
    for (int64_t i = 0; i < count; ++i) arguments.push_back(scatter->mutable_operand(i));
    for (int64_t i = 0; i < count; ++i) arguments.push_back(scatter->mutable_operand(count + 1 + i));
    return InlineComputation(c, *scatter->to_apply(), arguments);
  }

  HloInstruction* indices = TransformStartIndices(scatter->mutable_operand(count), sd.index_vector_dim);
  std::vector<HloInstruction*> operands;
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < count; ++i) {
    operands.push_back(scatter->mutable_operand(i));
    shapes.push_back(operands.back()->shape());
  }
  operands.push_back(indices);
  for (int64_t i = 0; i < count; ++i) {
    operands.push_back(FlattenAndTransposeUpdates(scatter->mutable_operand(count + 1 + i), sd));
  }
  auto canonical = HloInstruction::Create(HloOpcode::kScatter, count == 1 ? shapes[0] : Shape::Tuple(shapes), operands);
  HloAttributes& attrs = canonical->mutable_attrs();
  attrs.scatter_dnums.update_window_dims.resize(operand_rank);
  std::iota(attrs.scatter_dnums.update_window_dims.begin(), attrs.scatter_dnums.update_window_dims.end(), 1);
  attrs.scatter_dnums.scatter_dims_to_operand_dims = sd.scatter_dims_to_operand_dims;
  attrs.scatter_dnums.index_vector_dim = 1;
  attrs.indices_are_sorted = scatter->attrs().indices_are_sorted;
  attrs.unique_indices = scatter->attrs().unique_indices;
  canonical->set_to_apply(scatter->to_apply());
  return c->AddInstruction(std::move(canonical));
}

}  // namespace passlab
