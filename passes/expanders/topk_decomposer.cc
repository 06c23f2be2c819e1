#include "passes/expanders/topk_decomposer.h"

#include <utility>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

// (a, b[, index_a, index_b]) -> a > b (largest) or a < b; floats in total
// order so that NaNs and signed zeros sort as topk orders them.
HloComputation* BuildComparator(HloModule& module, PrimitiveType type, bool largest, bool with_indices) {
  auto c = std::make_unique<HloComputation>(StrCat("topk_", largest ? "gt_" : "lt_", PrimitiveTypeName(type)));
  const Shape scalar = Shape::Scalar(type);
  HloInstruction* a = c->AddParameter(HloInstruction::CreateParameter(0, scalar, "a"));
  HloInstruction* b = c->AddParameter(HloInstruction::CreateParameter(1, scalar, "b"));
  if (with_indices) {
    const Shape index = Shape::Scalar(PrimitiveType::kS32);
    c->AddParameter(HloInstruction::CreateParameter(2, index, "index_a"));
    c->AddParameter(HloInstruction::CreateParameter(3, index, "index_b"));
  }
  ComparisonType order = IsFloatingPointType(type) ? ComparisonType::kTotalOrder : ComparisonType::kDefault;
  c->set_root_instruction(c->AddInstruction(HloInstruction::CreateCompare(
      Shape::Scalar(PrimitiveType::kPred), a, b, largest ? ComparisonDirection::kGt : ComparisonDirection::kLt,
      order)));
  return module.AddEmbeddedComputation(std::move(c));
}

bool IndicesUnused(const HloInstruction& topk) {
  if (topk.parent()->root_instruction() == &topk) return false;
  for (const HloInstruction* user : topk.users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement || user->tuple_index() != 0) return false;
  }
  return true;
}

// The first k along the last dimension, in `shape` (the topk result's,
// layout included).
HloInstruction* FirstK(ExpansionBuilder& b, HloInstruction* sorted, const Shape& shape) {
  std::vector<SliceDimension> slice;
  for (int64_t d = 0; d < shape.rank(); ++d) slice.push_back({0, shape.dimensions(d), 1});
  return b.Add(HloInstruction::CreateSlice(shape, sorted, std::move(slice)));
}

}  // namespace

bool TopkDecomposer::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kTopK) return false;
  const Shape& x = inst->operand(0)->shape();
  return x.IsArray() && x.is_static() && x.rank() >= 1 && x.element_type() != PrimitiveType::kPred &&
         !IsComplexType(x.element_type()) && inst->shape().IsTuple() && inst->shape().tuple_shapes_size() == 2;
}

absl::StatusOr<HloInstruction*> TopkDecomposer::ExpandInstruction(HloInstruction* topk) {
  HloInstruction* x = topk->mutable_operand(0);
  const Shape& values_shape = topk->shape().tuple_shapes(0);
  const Shape& indices_shape = topk->shape().tuple_shapes(1);
  const int64_t last = x->shape().rank() - 1;
  const int64_t k = topk->attrs().k;
  if (k < 0 || k > x->shape().dimensions(last) || values_shape.rank() != x->shape().rank() ||
      values_shape.dimensions(last) != k) {
    return absl::InvalidArgumentError(StrCat("topk-decomposer: ", topk->name(), ": k=", k, " does not fit ",
                                             x->shape().ToString(), " -> ", topk->shape().ToString()));
  }
  HloModule* module = topk->GetModule();
  if (module == nullptr) return absl::InternalError(StrCat("topk-decomposer: ", topk->name(), " is not in a module"));
  ExpansionBuilder b(topk->parent(), topk->metadata());
  const bool with_indices = !IndicesUnused(*topk);
  std::vector<HloInstruction*> operands = {x};
  if (with_indices) {
    // The operand's shape (layout included), as s32 positions.
    Shape iota_shape = x->shape();
    iota_shape.set_element_type(PrimitiveType::kS32);
    operands.push_back(b.Add(HloInstruction::CreateIota(iota_shape, last)));
  }
  std::vector<Shape> sorted_shapes;
  for (HloInstruction* op : operands) sorted_shapes.push_back(op->shape());
  Shape sort_shape = with_indices ? Shape::Tuple(sorted_shapes) : sorted_shapes[0];
  HloInstruction* sort = b.Add(HloInstruction::Create(HloOpcode::kSort, sort_shape, operands));
  sort->set_dimensions({last});
  sort->mutable_attrs().is_stable = true;
  sort->AppendCalledComputation(
      BuildComparator(*module, x->shape().element_type(), topk->attrs().largest, with_indices));
  if (!with_indices) {
    // Only values are read: the indices slot gets zeros nobody reads.
    HloInstruction* unused = b.Add(HloInstruction::CreateBroadcast(indices_shape, b.Zero(PrimitiveType::kS32), {}));
    return b.Tuple({FirstK(b, sort, values_shape), unused});
  }
  return b.Tuple({FirstK(b, b.GetTupleElement(sort, 0), values_shape),
                  FirstK(b, b.GetTupleElement(sort, 1), indices_shape)});
}

}  // namespace passlab
