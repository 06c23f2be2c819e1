#include "passes/expanders/stable_sort_expander.h"

#include <limits>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// The operand that is an s32 iota along the sort dimension, or -1.
int64_t IotaOperandIndex(const HloInstruction& sort) {
  for (int64_t k = 0; k < sort.operand_count(); ++k) {
    const HloInstruction* op = sort.operand(k);
    if (op->opcode() == HloOpcode::kIota && op->iota_dimension() == sort.dimensions(0) &&
        op->shape().element_type() == PrimitiveType::kS32) {
      return k;
    }
  }
  return -1;
}

int64_t CallerCount(const HloModule& module, const HloComputation* computation) {
  int64_t callers = 0;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* inst : c->instructions()) {
      for (const HloComputation* called : inst->called_computations()) {
        if (called == computation) ++callers;
      }
    }
  }
  return callers;
}

// A copy of `computation` in the module, with `extra` scalar parameters
// (name, shape) appended.
HloComputation* CloneComputation(HloModule& module, const HloComputation& computation,
                                 const std::vector<std::pair<std::string, Shape>>& extra) {
  auto clone = std::make_unique<HloComputation>(computation.name() + ".clone");
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (HloInstruction* p : computation.parameter_instructions()) {
    map[p] = clone->AddParameter(p->CloneWithNewOperands(p->shape(), {}));
  }
  for (const auto& [name, shape] : extra) {
    clone->AddParameter(HloInstruction::CreateParameter(clone->num_parameters(), shape, name));
  }
  for (HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) operands.push_back(map.at(op));
    map[inst] = clone->AddInstruction(inst->CloneWithNewOperands(inst->shape(), operands));
  }
  clone->set_root_instruction(map.at(computation.root_instruction()));
  return module.AddEmbeddedComputation(std::move(clone));
}

// Rebuilds `sort` with an s32 iota as a new last operand and a comparator
// taking its two parameters (XLA's AddIotaAndExpand). Returns the new
// comparator; `sort` is replaced by its results without the iota's.
absl::StatusOr<HloComputation*> AddIotaOperand(HloModule& module, HloInstruction* sort) {
  HloComputation* c = sort->parent();
  const int64_t dim = sort->dimensions(0);
  Shape iota_shape = sort->operand(0)->shape();
  if (iota_shape.dimensions(dim) > std::numeric_limits<int32_t>::max()) {
    return absl::UnimplementedError("Stable sorting of more than 2^31-1 elements is not implemented");
  }
  iota_shape.set_element_type(PrimitiveType::kS32);
  HloInstruction* iota = c->AddInstruction(HloInstruction::CreateIota(iota_shape, dim));
  const int64_t n = sort->operand_count();
  Shape scalar = Shape::Scalar(PrimitiveType::kS32);
  HloComputation* comparator = CloneComputation(module, *sort->to_apply(),
                                                {{StrCat("p.", n, ".lhs"), scalar}, {StrCat("p.", n, ".rhs"), scalar}});
  std::vector<HloInstruction*> operands = sort->operands();
  operands.push_back(iota);
  std::vector<Shape> shapes = n == 1 ? std::vector<Shape>{sort->shape()} : sort->shape().tuple_shapes();
  shapes.push_back(iota_shape);
  auto unstable = sort->CloneWithNewOperands(Shape::Tuple(shapes), operands);
  unstable->mutable_attrs().is_stable = false;
  unstable->set_to_apply(comparator);
  HloInstruction* new_sort = c->AddInstruction(std::move(unstable));
  std::vector<HloInstruction*> elements;
  for (int64_t k = 0; k < n; ++k) {
    elements.push_back(
        c->AddInstruction(HloInstruction::CreateGetTupleElement(sort->operand(k)->shape(), new_sort, k)));
  }
  HloInstruction* root = n == 1 ? elements[0] : c->AddInstruction(HloInstruction::CreateTuple(elements));
  RETURN_IF_ERROR(c->ReplaceInstruction(sort, root));
  return comparator;
}

// comparator := select(c(a, b) == c(b, a), iota_a < iota_b, c(a, b)), with
// c(b, a) the body cloned over swapped parameter pairs.
void AddTieBreaker(HloComputation* comparator, int64_t iota_index) {
  std::vector<HloInstruction*> post_order = comparator->MakeInstructionPostOrder();
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> swapped;
  for (int64_t i = 0; i < comparator->num_parameters(); ++i) {
    swapped[comparator->parameter_instruction(i)] = comparator->parameter_instruction(i ^ 1);
  }
  HloInstruction* old_root = comparator->root_instruction();
  HloInstruction* cloned_root = nullptr;
  for (HloInstruction* inst : post_order) {
    if (inst->operand_count() == 0) continue;
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) {
      auto it = swapped.find(op);
      operands.push_back(it == swapped.end() ? op : it->second);
    }
    HloInstruction* clone = comparator->AddInstruction(inst->CloneWithNewOperands(inst->shape(), operands));
    swapped[inst] = clone;
    if (inst == old_root) cloned_root = clone;
  }
  Shape pred = Shape::Scalar(PrimitiveType::kPred);
  HloInstruction* same =
      comparator->AddInstruction(HloInstruction::CreateCompare(pred, old_root, cloned_root, ComparisonDirection::kEq));
  HloInstruction* tie_breaker = comparator->AddInstruction(
      HloInstruction::CreateCompare(pred, comparator->parameter_instruction(2 * iota_index),
                                    comparator->parameter_instruction(2 * iota_index + 1), ComparisonDirection::kLt));
  comparator->set_root_instruction(
      comparator->AddInstruction(HloInstruction::CreateTernary(pred, HloOpcode::kSelect, same, tie_breaker, old_root)));
}

}  // namespace

absl::StatusOr<bool> StableSortExpander::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* sort : c->MakeInstructionPostOrder()) {
      if (sort->opcode() != HloOpcode::kSort || !sort->attrs().is_stable) continue;
      int64_t iota_index = IotaOperandIndex(*sort);
      HloComputation* comparator = nullptr;
      if (iota_index < 0) {
        iota_index = sort->operand_count();
        absl::StatusOr<HloComputation*> added = AddIotaOperand(module, sort);
        if (!added.ok()) {
          return absl::Status(added.status().code(),
                              StrCat("stable-sort-expander: ", sort->name(), ": ", added.status().message()));
        }
        comparator = *added;
      } else {
        // The comparator is edited in place: other callers get the original.
        comparator = sort->to_apply();
        if (CallerCount(module, comparator) > 1) {
          comparator = CloneComputation(module, *comparator, {});
          sort->set_to_apply(comparator);
        }
        sort->mutable_attrs().is_stable = false;
      }
      AddTieBreaker(comparator, iota_index);
      BumpCounter("expanded stable sorts");
      changed = true;
    }
  }
  if (changed) module.RemoveUnusedComputations();
  return changed;
}

}  // namespace passlab
