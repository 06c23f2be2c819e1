#include "passes/expanders/ragged_dot_rewriter.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/algorithm/container.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

HloComputation* ScalarAdd(HloModule* module, PrimitiveType type) {
  auto add = std::make_unique<HloComputation>("add");
  HloInstruction* x = add->AddParameter(HloInstruction::CreateParameter(0, Shape::Scalar(type), "lhs"));
  HloInstruction* y = add->AddParameter(HloInstruction::CreateParameter(1, Shape::Scalar(type), "rhs"));
  add->set_root_instruction(add->AddInstruction(HloInstruction::CreateBinary(Shape::Scalar(type), HloOpcode::kAdd, x, y)));
  return module->AddEmbeddedComputation(std::move(add));
}

// group_sizes [prefix..., g] -> the running sums along g (a reduce-window of
// size g padded g-1 low, as XLA builds it).
HloInstruction* CumulativeSum(ExpansionBuilder& b, HloInstruction* sizes) {
  const Shape& s = sizes->shape();
  const int64_t groups = s.dimensions(s.rank() - 1);
  Window window;
  window.dimensions.resize(s.rank());
  window.dimensions.back().size = groups;
  window.dimensions.back().padding_low = groups - 1;
  auto rw = HloInstruction::Create(HloOpcode::kReduceWindow, Shape(s.element_type(), s.dimensions()),
                                   {sizes, b.Zero(s.element_type())});
  rw->mutable_attrs().window = window;
  rw->set_to_apply(ScalarAdd(b.computation()->parent(), s.element_type()));
  return b.Add(std::move(rw));
}

// The operand with a group dim inserted at `new_dim`, row r of group g kept
// where cumsum[g-1] <= r < cumsum[g] along `ragged_dim`, zero elsewhere.
HloInstruction* RaggedToDense(ExpansionBuilder& b, HloInstruction* operand, HloInstruction* sizes,
                              int64_t new_dim, int64_t ragged_dim) {
  HloInstruction* cumsum = CumulativeSum(b, sizes);
  const Shape& ss = sizes->shape();
  const int64_t group_dim = ss.rank() - 1;
  const int64_t groups = ss.dimensions(group_dim);
  const PrimitiveType gt = ss.element_type();
  // Starts: 0 then cumsum[0..g-2].
  std::vector<int64_t> limits = ss.dimensions();
  limits[group_dim] = groups - 1;
  HloInstruction* head = b.Slice(cumsum, std::vector<int64_t>(ss.rank(), 0), limits);
  std::vector<int64_t> one = ss.dimensions();
  one[group_dim] = 1;
  HloInstruction* starts = b.Concatenate({b.Broadcast(b.Zero(gt), one), head}, group_dim);

  std::vector<int64_t> dims = operand->shape().dimensions();
  dims.insert(dims.begin() + new_dim, groups);
  std::vector<int64_t> sizes_to_new(ss.rank());
  for (int64_t i = 0; i < ss.rank(); ++i) sizes_to_new[i] = i;
  HloInstruction* lo = b.Broadcast(starts, dims, sizes_to_new);
  HloInstruction* hi = b.Broadcast(cumsum, dims, sizes_to_new);
  HloInstruction* rows = b.Broadcast(b.Iota(gt, {operand->shape().dimensions(ragged_dim)}, 0), dims, {ragged_dim + 1});
  HloInstruction* mask =
      b.Binary(HloOpcode::kAnd, b.Compare(lo, rows, ComparisonDirection::kLe), b.Compare(rows, hi, ComparisonDirection::kLt));
  std::vector<int64_t> operand_to_new;
  for (int64_t i = 0; i < operand->shape().rank(); ++i) operand_to_new.push_back(i < new_dim ? i : i + 1);
  HloInstruction* wide = b.Broadcast(operand, dims, operand_to_new);
  HloInstruction* zeros = b.Broadcast(b.Zero(operand->shape().element_type()), dims);
  return b.Select(mask, wide, zeros);
}

// Moves dim `index` to the front by swapping it with dim 0 (XLA's
// TransposeIndexToFront).
HloInstruction* SwapToFront(ExpansionBuilder& b, HloInstruction* x, int64_t index) {
  if (index == 0) return x;
  std::vector<int64_t> perm(x->shape().rank());
  for (int64_t i = 0; i < x->shape().rank(); ++i) perm[i] = i;
  std::swap(perm[0], perm[index]);
  return b.Transpose(x, perm);
}

}  // namespace

bool RaggedDotRewriter::InstructionMatchesPattern(HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kRaggedDot && inst->attrs().lhs_ragged_dims.size() == 1;
}

absl::StatusOr<HloInstruction*> RaggedDotRewriter::ExpandInstruction(HloInstruction* inst) {
  const HloAttributes& a = inst->attrs();
  const DotDimensionNumbers& d = a.dot_dnums;
  const int64_t ragged = a.lhs_ragged_dims[0];
  ExpansionBuilder b(inst->parent(), inst->metadata());
  HloInstruction* lhs = inst->mutable_operand(0);
  HloInstruction* rhs = inst->mutable_operand(1);
  HloInstruction* sizes = inst->mutable_operand(2);
  // The group dim goes where group_sizes has it (after its prefix dims).
  const int64_t new_dim = sizes->shape().rank() - 1;
  DotDimensionNumbers nd;
  if (absl::c_linear_search(d.lhs_contracting_dimensions, ragged)) {
    // [b,m,k] x [b,k,n] -> [g,b,m,n]: both operands masked per group, the
    // group dim first and batched.
    const int64_t k = std::find(d.lhs_contracting_dimensions.begin(), d.lhs_contracting_dimensions.end(), ragged) -
                      d.lhs_contracting_dimensions.begin();
    lhs = SwapToFront(b, RaggedToDense(b, lhs, sizes, new_dim, ragged), new_dim);
    rhs = SwapToFront(b, RaggedToDense(b, rhs, sizes, new_dim, d.rhs_contracting_dimensions[k]), new_dim);
    nd.lhs_batch_dimensions.push_back(0);
    nd.rhs_batch_dimensions.push_back(0);
    for (int64_t x : d.lhs_batch_dimensions) nd.lhs_batch_dimensions.push_back(x + 1);
    for (int64_t x : d.rhs_batch_dimensions) nd.rhs_batch_dimensions.push_back(x + 1);
    for (int64_t x : d.lhs_contracting_dimensions) nd.lhs_contracting_dimensions.push_back(x + 1);
    for (int64_t x : d.rhs_contracting_dimensions) nd.rhs_contracting_dimensions.push_back(x + 1);
  } else if (absl::c_linear_search(d.lhs_batch_dimensions, ragged)) {
    nd = d;  // each batch element is its own group: a plain dot
  } else {
    // [b,m,k] x [g,b,k,n] -> [b,m,n]: the masked lhs contracts its new group
    // dim with the rhs group dim.
    if (a.rhs_group_dims.size() != 1) {
      return absl::InvalidArgumentError(StrCat("ragged-dot '", inst->name(), "' needs one rhs group dimension"));
    }
    lhs = RaggedToDense(b, lhs, sizes, new_dim, ragged);
    nd.lhs_contracting_dimensions.push_back(new_dim);
    for (int64_t x : d.lhs_contracting_dimensions) nd.lhs_contracting_dimensions.push_back(x >= new_dim ? x + 1 : x);
    for (int64_t x : d.lhs_batch_dimensions) nd.lhs_batch_dimensions.push_back(x >= new_dim ? x + 1 : x);
    nd.rhs_contracting_dimensions.push_back(a.rhs_group_dims[0]);
    for (int64_t x : d.rhs_contracting_dimensions) nd.rhs_contracting_dimensions.push_back(x);
    nd.rhs_batch_dimensions = d.rhs_batch_dimensions;
  }
  auto dot = HloInstruction::CreateDot(inst->shape(), lhs, rhs, nd);
  dot->mutable_attrs().precision_config = a.precision_config;
  return b.Add(std::move(dot));
}

}  // namespace passlab
