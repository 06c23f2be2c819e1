#include "passes/simplifiers/sort_simplifier.h"

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// A comparator taking only the parameters of the kept operands.
HloComputation* NarrowComparator(const HloComputation& cmp, const std::vector<int64_t>& kept) {
  auto c = std::make_unique<HloComputation>(cmp.name() + ".narrowed");
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  int64_t number = 0;
  for (int64_t k : kept) {
    for (int64_t side = 0; side < 2; ++side) {
      const HloInstruction* p = cmp.parameter_instruction(2 * k + side);
      map[p] = c->AddParameter(HloInstruction::CreateParameter(number++, p->shape(), p->name()));
    }
  }
  for (HloInstruction* inst : cmp.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : inst->operands()) ops.push_back(map.at(op));
    map[inst] = c->AddInstruction(inst->CloneWithNewOperands(inst->shape(), ops));
  }
  c->set_root_instruction(map.at(cmp.root_instruction()));
  return cmp.parent()->AddEmbeddedComputation(std::move(c));
}

}  // namespace

absl::StatusOr<bool> SortSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* sort : c->MakeInstructionPostOrder()) {
      if (sort->opcode() != HloOpcode::kSort || !sort->shape().IsTuple() || sort->IsRoot()) continue;
      int64_t n = sort->operand_count();
      std::vector<bool> used(n, false);
      bool only_gtes = true;
      for (const HloInstruction* user : sort->users()) {
        if (user->opcode() != HloOpcode::kGetTupleElement) {
          only_gtes = false;
          break;
        }
        used[user->tuple_index()] = true;
      }
      if (!only_gtes) continue;
      const HloComputation* cmp = sort->to_apply();
      for (int64_t k = 0; k < n; ++k) {
        if (cmp->parameter_instruction(2 * k)->user_count() > 0 || cmp->parameter_instruction(2 * k + 1)->user_count() > 0) {
          used[k] = true;
        }
      }
      std::vector<int64_t> kept;
      for (int64_t k = 0; k < n; ++k) {
        if (used[k]) kept.push_back(k);
      }
      if (static_cast<int64_t>(kept.size()) == n || kept.empty()) continue;
      std::vector<HloInstruction*> operands;
      std::vector<Shape> shapes;
      for (int64_t k : kept) {
        operands.push_back(sort->mutable_operand(k));
        shapes.push_back(sort->shape().tuple_shapes(k));
      }
      Shape shape = kept.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
      auto narrowed = HloInstruction::Create(HloOpcode::kSort, shape, operands);
      narrowed->set_dimensions(sort->dimensions());
      narrowed->mutable_attrs().is_stable = sort->attrs().is_stable;
      narrowed->AppendCalledComputation(NarrowComparator(*cmp, kept));
      narrowed->set_metadata(sort->metadata());
      HloInstruction* added = c->AddInstruction(std::move(narrowed));
      for (HloInstruction* gte : std::vector<HloInstruction*>(sort->users())) {
        int64_t pos = std::find(kept.begin(), kept.end(), gte->tuple_index()) - kept.begin();
        HloInstruction* replacement =
            kept.size() == 1 ? added : c->AddInstruction(HloInstruction::CreateGetTupleElement(added, pos));
        RETURN_IF_ERROR(c->ReplaceInstruction(gte, replacement));
      }
      // Replacing the last GTE removed the old sort as dead.
      BumpCounter("removed unused sort operands", n - static_cast<int64_t>(kept.size()));
      changed = true;
    }
  }
  if (changed) module.RemoveUnusedComputations();
  return changed;
}

}  // namespace passlab
