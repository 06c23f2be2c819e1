#include "passes/expanders/scatter_expander.h"

#include <algorithm>
#include <initializer_list>
#include <numeric>

#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/verify/hlo_verifier.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int64_t OperandCount(const HloInstruction& scatter) { return (scatter.operand_count() - 1) / 2; }

// updates -> [N, window dims...]: scatter dims first (flattened), window
// dims after, each group in its original order.
HloInstruction* CanonicalizeUpdates(ExpansionBuilder& b, HloInstruction* updates,
                                    const std::vector<int64_t>& update_window_dims, int64_t count) {
  const Shape& s = updates->shape();
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < s.rank(); ++d) {
    if (!Contains(update_window_dims, d)) perm.push_back(d);
  }
  std::vector<int64_t> dims = {count};
  for (int64_t d : update_window_dims) {
    perm.push_back(d);
    dims.push_back(s.dimensions(d));
  }
  return b.Reshape(b.Transpose(updates, perm), dims);
}

// A computation returning element k of `to_apply`'s tuple result, for maps
// (a map applies a computation with one array result).
HloComputation* ProjectOutput(HloModule* module, HloComputation* to_apply, int64_t k) {
  HloComputation* proj =
      module->AddEmbeddedComputation(std::make_unique<HloComputation>(StrCat(to_apply->name(), "_output_", k)));
  std::vector<HloInstruction*> params;
  for (int64_t p = 0; p < to_apply->num_parameters(); ++p) {
    params.push_back(proj->AddParameter(
        HloInstruction::CreateParameter(p, to_apply->parameter_instruction(p)->shape(), StrCat("p", p))));
  }
  const Shape& result = to_apply->root_instruction()->shape();
  HloInstruction* call = proj->AddInstruction(HloInstruction::CreateCall(result, params, to_apply));
  proj->set_root_instruction(proj->AddInstruction(HloInstruction::CreateGetTupleElement(call, k)));
  return proj;
}

bool OneOf(HloOpcode opcode, std::initializer_list<HloOpcode> opcodes) {
  return std::find(opcodes.begin(), opcodes.end(), opcode) != opcodes.end();
}

bool IsAssociativeCommutative(HloOpcode opcode, PrimitiveType type) {
  // Float add/multiply round differently in another order.
  if (OneOf(opcode, {HloOpcode::kAdd, HloOpcode::kMultiply})) return IsIntegralType(type);
  if (OneOf(opcode, {HloOpcode::kMaximum, HloOpcode::kMinimum})) return !IsComplexType(type);
  if (OneOf(opcode, {HloOpcode::kAnd, HloOpcode::kOr, HloOpcode::kXor})) {
    return IsIntegralType(type) || type == PrimitiveType::kPred;
  }
  return false;
}

// The shape rules the expansion relies on (XLA's scatter shape inference):
// updates = [indices' scatter dims..., window dims...] up to permutation,
// windows inside the operand, index vectors naming operand dimensions.
absl::Status CheckScatterShapes(const HloInstruction& scatter) {
  const ScatterDimensionNumbers& dn = scatter.attrs().scatter_dnums;
  const int64_t n = OperandCount(scatter);
  const Shape& operand = scatter.operand(0)->shape();
  const Shape& indices = scatter.operand(n)->shape();
  const Shape& updates = scatter.operand(n + 1)->shape();
  auto error = [&](const std::string& what) {
    return absl::InvalidArgumentError(StrCat("scatter '", scatter.name(), "': ", what));
  };
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices.rank()) return error("index_vector_dim out of range");
  int64_t vector_size = dn.index_vector_dim < indices.rank() ? indices.dimensions(dn.index_vector_dim) : 1;
  if (vector_size != static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size())) {
    return error(StrCat("the index vector has ", vector_size, " elements but scatter_dims_to_operand_dims has ",
                        dn.scatter_dims_to_operand_dims.size()));
  }
  for (int64_t d : dn.scatter_dims_to_operand_dims) {
    if (d < 0 || d >= operand.rank()) return error(StrCat("scatter_dims_to_operand_dims names dimension ", d));
  }
  if (dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size()) {
    return error("input_batching_dims and scatter_indices_batching_dims differ in length");
  }
  std::vector<int64_t> update_scatter_sizes, index_scatter_sizes;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (!Contains(dn.update_window_dims, d)) update_scatter_sizes.push_back(updates.dimensions(d));
  }
  for (int64_t d : IndexBatchDims(indices, dn.index_vector_dim)) index_scatter_sizes.push_back(indices.dimensions(d));
  if (update_scatter_sizes != index_scatter_sizes) {
    return error(StrCat("the updates' scatter dimensions [", Join(update_scatter_sizes, ","),
                        "] do not match the indices' [", Join(index_scatter_sizes, ","), "]"));
  }
  size_t w = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(dn.inserted_window_dims, d) || Contains(dn.input_batching_dims, d)) continue;
    if (w >= dn.update_window_dims.size()) return error("fewer update_window_dims than window dimensions");
    int64_t uw = dn.update_window_dims[w++];
    if (uw < 0 || uw >= updates.rank() || updates.dimensions(uw) > operand.dimensions(d)) {
      return error(StrCat("update window dimension ", uw, " does not fit operand dimension ", d));
    }
  }
  if (w != dn.update_window_dims.size()) return error("more update_window_dims than window dimensions");
  for (int64_t k = 1; k < n; ++k) {
    if (!scatter.operand(n + 1 + k)->shape().SameDimensions(updates) ||
        !scatter.operand(k)->shape().SameDimensions(operand)) {
      return error("variadic scatter operands (or updates) differ in dimensions");
    }
  }
  return absl::OkStatus();
}

}  // namespace

int64_t ScatterIndicesCount(const HloInstruction& scatter) {
  const Shape& indices = scatter.operand(OperandCount(scatter))->shape();
  int64_t count = 1;
  for (int64_t d : IndexBatchDims(indices, scatter.attrs().scatter_dnums.index_vector_dim)) {
    count *= indices.dimensions(d);
  }
  return count;
}

bool IsScatterDeterministic(const HloInstruction& scatter) {
  if (scatter.attrs().unique_indices) return true;
  if (OperandCount(scatter) != 1) return false;
  const HloComputation* c = scatter.to_apply();
  if (c == nullptr || c->root_instruction() == nullptr) return false;
  const HloInstruction* root = c->root_instruction();
  if (root->operand_count() != 2) return false;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  bool params = a->opcode() == HloOpcode::kParameter && b->opcode() == HloOpcode::kParameter &&
                a->parameter_number() != b->parameter_number();
  return params && IsAssociativeCommutative(root->opcode(), root->shape().element_type());
}

bool ScatterExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kScatter) return false;
  switch (mode_) {
    case Mode::kEliminateAllScatters: return true;
    case Mode::kEliminateSimpleScatters: return ScatterIndicesCount(*inst) == 1;
    case Mode::kEliminateIndeterministicScatters: return !IsScatterDeterministic(*inst);
  }
  return false;
}

absl::StatusOr<HloInstruction*> ScatterExpander::ExpandInstruction(HloInstruction* scatter) {
  RETURN_IF_ERROR(VerifyInstruction(*scatter));
  const ScatterDimensionNumbers& dn = scatter->attrs().scatter_dnums;
  const int64_t n = OperandCount(*scatter);
  ExpansionBuilder b(scatter->parent(), scatter->metadata());
  std::vector<HloInstruction*> operands, updates;
  for (int64_t k = 0; k < n; ++k) {
    operands.push_back(scatter->mutable_operand(k));
    updates.push_back(scatter->mutable_operand(n + 1 + k));
  }
  HloInstruction* indices = scatter->mutable_operand(n);
  const Shape& operand_shape = operands[0]->shape();
  const Shape& indices_shape = indices->shape();

  // Nothing to scatter: the operands pass through.
  if (updates[0]->shape().element_count() == 0) return n == 1 ? operands[0] : b.Tuple(operands);

  const int64_t count = ScatterIndicesCount(*scatter);
  const int64_t vector_size = static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size());
  const std::vector<int64_t> index_scatter_dims = IndexBatchDims(indices_shape, dn.index_vector_dim);

  RETURN_IF_ERROR(CheckScatterShapes(*scatter));
  // The window each update covers, in operand dimensions (1 on inserted and
  // batching dimensions).
  std::vector<int64_t> window(operand_shape.rank(), 1);
  {
    size_t w = 0;
    for (int64_t d = 0; d < operand_shape.rank(); ++d) {
      if (Contains(dn.inserted_window_dims, d) || Contains(dn.input_batching_dims, d)) continue;
      window[d] = updates[0]->shape().dimensions(dn.update_window_dims[w++]);
    }
  }

  std::vector<HloInstruction*> state = operands;
  state.push_back(CanonicalizeGatherScatterIndices(b, indices, dn.index_vector_dim));
  for (HloInstruction* u : updates) state.push_back(CanonicalizeUpdates(b, u, dn.update_window_dims, count));

  // The map's computation per output.
  HloModule* module = scatter->GetModule();
  std::vector<HloComputation*> combiners;
  for (int64_t k = 0; k < n; ++k) {
    combiners.push_back(n == 1 ? scatter->to_apply() : ProjectOutput(module, scatter->to_apply(), k));
  }

  auto body = [&](ExpansionBuilder& lb, HloInstruction* i,
                  const std::vector<HloInstruction*>& st) -> absl::StatusOr<std::vector<HloInstruction*>> {
    const PrimitiveType s64 = PrimitiveType::kS64, s32 = PrimitiveType::kS32;
    HloInstruction* zero32 = lb.ConstantScalar(s32, 0);
    // Start of the window in the operand, as s64 so that every index type
    // (and out-of-range unsigned values) compares correctly.
    std::vector<HloInstruction*> start(operand_shape.rank(), nullptr);
    if (vector_size > 0) {
      HloInstruction* row = lb.DynamicSlice(st[n], {i, zero32}, {1, vector_size});
      row = lb.Convert(lb.Reshape(row, {vector_size}), s64);
      for (int64_t k = 0; k < vector_size; ++k) start[dn.scatter_dims_to_operand_dims[k]] = lb.ElementAsScalar(row, k);
    }
    // Batching dimensions: the operand position is the coordinate of this
    // index vector along the matching indices dimension.
    for (size_t k = 0; k < dn.input_batching_dims.size(); ++k) {
      int64_t stride = 1, size = 1;
      bool after = false;
      for (int64_t d : index_scatter_dims) {
        if (after) stride *= indices_shape.dimensions(d);
        if (d == dn.scatter_indices_batching_dims[k]) {
          after = true;
          size = indices_shape.dimensions(d);
        }
      }
      HloInstruction* coord = lb.Binary(HloOpcode::kRemainder,
                                        lb.Binary(HloOpcode::kDivide, i, lb.ConstantScalar(s32, stride)),
                                        lb.ConstantScalar(s32, size));
      start[dn.input_batching_dims[k]] = lb.Convert(coord, s64);
    }
    // The window fits (XLA skips updates whose window does not).
    HloInstruction* valid = nullptr;
    for (int64_t d = 0; d < operand_shape.rank(); ++d) {
      if (start[d] == nullptr) {
        start[d] = lb.ConstantScalar(s64, 0);
        continue;
      }
      HloInstruction* ge = lb.Compare(start[d], lb.ConstantScalar(s64, 0), ComparisonDirection::kGe);
      HloInstruction* le = lb.Compare(start[d], lb.ConstantScalar(s64, operand_shape.dimensions(d) - window[d]),
                                      ComparisonDirection::kLe);
      HloInstruction* both = lb.Binary(HloOpcode::kAnd, ge, le);
      valid = valid == nullptr ? both : lb.Binary(HloOpcode::kAnd, valid, both);
    }
    std::vector<HloInstruction*> update_start = {i};
    for (size_t d = 0; d < dn.update_window_dims.size(); ++d) update_start.push_back(zero32);
    std::vector<HloInstruction*> map_operands(2 * n);
    for (int64_t k = 0; k < n; ++k) {
      map_operands[k] = lb.DynamicSlice(st[k], start, window);
      std::vector<int64_t> slice_sizes = st[n + 1 + k]->shape().dimensions();
      slice_sizes[0] = 1;
      map_operands[n + k] = lb.Reshape(lb.DynamicSlice(st[n + 1 + k], update_start, slice_sizes), window);
    }
    std::vector<HloInstruction*> next = st;
    std::vector<int64_t> all_dims(window.size());
    std::iota(all_dims.begin(), all_dims.end(), 0);
    for (int64_t k = 0; k < n; ++k) {
      Shape result(st[k]->shape().element_type(), window);
      HloInstruction* combined = lb.Add(HloInstruction::CreateMap(result, map_operands, combiners[k]));
      combined->set_dimensions(all_dims);
      if (valid != nullptr) {
        combined = lb.Select(lb.Broadcast(valid, window), combined, map_operands[k]);
      }
      next[k] = lb.DynamicUpdateSlice(st[k], combined, start);
    }
    return next;
  };
  ASSIGN_OR_RETURN(std::vector<HloInstruction*> result,
      MakeCountedLoop(scatter->parent(), count, state, body, scatter->metadata(), StrCat(scatter->name(), "_loop")));
  std::vector<HloInstruction*> outputs(result.begin(), result.begin() + n);
  return n == 1 ? outputs[0] : b.Tuple(outputs);
}

}  // namespace passlab
