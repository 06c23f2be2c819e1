#include "passes/expanders/stable_sort_expander.h"

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// The operand that is an integer iota along the sort dimension (its original
// position is its tie-break key), or -1.
int64_t FindIotaOperand(const HloInstruction& sort) {
  int64_t dim = sort.dimensions(0);
  for (int64_t k = 0; k < sort.operand_count(); ++k) {
    const HloInstruction* op = sort.operand(k);
    if (op->opcode() != HloOpcode::kIota || op->iota_dimension() != dim) continue;
    PrimitiveType t = op->shape().element_type();
    if (t != PrimitiveType::kS32 && t != PrimitiveType::kS64) continue;
    return k;
  }
  return -1;
}

// Clones the body of `cmp` into `into`, reading operand k's (lhs, rhs)
// scalars from params[2k + swap], params[2k + 1 - swap].
HloInstruction* CloneComparatorBody(const HloComputation& cmp, HloComputation* into,
                                    const std::vector<HloInstruction*>& params, bool swap) {
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (int64_t i = 0; i < cmp.num_parameters(); ++i) {
    int64_t from = swap ? (i ^ 1) : i;
    map[cmp.parameter_instruction(i)] = params[from];
  }
  for (HloInstruction* inst : cmp.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : inst->operands()) ops.push_back(map.at(op));
    map[inst] = into->AddInstruction(inst->CloneWithNewOperands(inst->shape(), ops));
  }
  return map.at(cmp.root_instruction());
}

// less(a, b) || (!less(b, a) && iota_a < iota_b), over `shapes` (one scalar
// shape per sort operand, the iota's included at `iota`).
HloComputation* StableComparator(HloModule& module, const HloComputation& cmp, const std::vector<Shape>& shapes,
                                 int64_t iota) {
  auto c = std::make_unique<HloComputation>(cmp.name() + ".stable");
  std::vector<HloInstruction*> params;
  for (size_t k = 0; k < shapes.size(); ++k) {
    for (int side = 0; side < 2; ++side) {
      params.push_back(c->AddParameter(HloInstruction::CreateParameter(
          static_cast<int64_t>(params.size()), shapes[k], StrCat("p.", k, side == 0 ? ".lhs" : ".rhs"))));
    }
  }
  // The original comparator reads the first cmp.num_parameters() params: the
  // iota operand, when added, comes last.
  std::vector<HloInstruction*> original(params.begin(), params.begin() + cmp.num_parameters());
  HloInstruction* a_less = CloneComparatorBody(cmp, c.get(), original, /*swap=*/false);
  HloInstruction* b_less = CloneComparatorBody(cmp, c.get(), original, /*swap=*/true);
  Shape pred = Shape::Scalar(PrimitiveType::kPred);
  HloInstruction* not_b_less = c->AddInstruction(HloInstruction::CreateUnary(pred, HloOpcode::kNot, b_less));
  HloInstruction* iota_less = c->AddInstruction(
      HloInstruction::CreateCompare(pred, params[2 * iota], params[2 * iota + 1], ComparisonDirection::kLt));
  HloInstruction* tie = c->AddInstruction(HloInstruction::CreateBinary(pred, HloOpcode::kAnd, not_b_less, iota_less));
  c->set_root_instruction(c->AddInstruction(HloInstruction::CreateBinary(pred, HloOpcode::kOr, a_less, tie)));
  return module.AddEmbeddedComputation(std::move(c));
}

absl::Status ExpandStableSort(HloModule& module, HloComputation* c, HloInstruction* sort) {
  std::vector<HloInstruction*> operands = sort->operands();
  int64_t iota = FindIotaOperand(*sort);
  bool added_iota = iota < 0;
  if (added_iota) {
    const Shape& keys = sort->operand(0)->shape();
    int64_t n = keys.dimensions(sort->dimensions(0));
    PrimitiveType type = n >= (int64_t{1} << 31) ? PrimitiveType::kS64 : PrimitiveType::kS32;
    // The keys' shape (dynamic dimensions and layout included), as integers.
    Shape iota_shape = keys;
    iota_shape.set_element_type(type);
    auto iota_inst = HloInstruction::CreateIota(iota_shape, sort->dimensions(0));
    iota_inst->set_metadata(sort->metadata());
    operands.push_back(c->AddInstruction(std::move(iota_inst)));
    iota = static_cast<int64_t>(operands.size()) - 1;
  }
  std::vector<Shape> element_shapes, result_shapes;
  for (HloInstruction* op : operands) {
    element_shapes.push_back(Shape::Scalar(op->shape().element_type()));
    result_shapes.push_back(op->shape());
  }
  Shape shape = operands.size() == 1 ? result_shapes[0] : Shape::Tuple(result_shapes);
  auto unstable = HloInstruction::Create(HloOpcode::kSort, shape, operands);
  unstable->set_dimensions(sort->dimensions());
  unstable->AppendCalledComputation(StableComparator(module, *sort->to_apply(), element_shapes, iota));
  unstable->set_metadata(sort->metadata());
  HloInstruction* added = c->AddInstruction(std::move(unstable));
  if (!added_iota) return c->ReplaceInstruction(sort, added);
  // The iota's sorted positions are no result of the original sort.
  int64_t n = sort->operand_count();
  if (!sort->shape().IsTuple()) {
    return c->ReplaceInstruction(sort, c->AddInstruction(HloInstruction::CreateGetTupleElement(added, 0)));
  }
  std::vector<HloInstruction*> elements;
  for (int64_t k = 0; k < n; ++k) elements.push_back(c->AddInstruction(HloInstruction::CreateGetTupleElement(added, k)));
  return c->ReplaceInstruction(sort, c->AddInstruction(HloInstruction::CreateTuple(elements)));
}

}  // namespace

absl::StatusOr<bool> StableSortExpander::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* sort : c->MakeInstructionPostOrder()) {
      if (sort->opcode() != HloOpcode::kSort || !sort->attrs().is_stable) continue;
      if (absl::Status s = ExpandStableSort(module, c, sort); !s.ok()) {
        return absl::Status(s.code(), StrCat("stable-sort-expander: ", sort->name(), ": ", s.message()));
      }
      BumpCounter("expanded stable sorts");
      changed = true;
    }
  }
  if (changed) module.RemoveUnusedComputations();
  return changed;
}

}  // namespace passlab
