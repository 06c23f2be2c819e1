#include "passes/simplifiers/conditional_canonicalizer.h"

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "passes/simplifiers/flatten_call_graph.h"

namespace passlab {
namespace {

// How many instructions call each computation (a conditional naming one
// computation twice counts twice).
absl::flat_hash_map<const HloComputation*, int64_t> CallSites(const HloModule& module) {
  absl::flat_hash_map<const HloComputation*, int64_t> sites;
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* inst : c->instructions()) {
      for (const HloComputation* callee : inst->called_computations()) ++sites[callee];
    }
  }
  return sites;
}

// conditional -> T  =>  gte(conditional -> (T), 0), branch roots tupled.
absl::Status TupleConditionalResult(HloComputation* c, HloInstruction* conditional,
                                    absl::flat_hash_map<const HloComputation*, int64_t>& sites) {
  for (int64_t b = 0; b < conditional->branch_count(); ++b) {
    HloComputation* branch = conditional->branch_computation(b);
    if (sites[branch] > 1) {
      --sites[branch];
      branch = CloneComputation(*branch);
      sites[branch] = 1;
      conditional->set_called_computation(b, branch);
    }
    HloInstruction* root = branch->root_instruction();
    branch->set_root_instruction(branch->AddInstruction(HloInstruction::CreateTuple({root})));
  }
  Shape array = conditional->shape();
  *conditional->mutable_shape() = Shape::Tuple({array});
  std::vector<HloInstruction*> users = conditional->users();
  bool was_root = conditional->IsRoot();
  HloInstruction* gte = c->AddInstruction(HloInstruction::CreateGetTupleElement(array, conditional, 0));
  for (HloInstruction* user : users) user->ReplaceUsesOfOperand(conditional, gte);
  if (was_root) c->set_root_instruction(gte);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> ConditionalCanonicalizer::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  absl::flat_hash_map<const HloComputation*, int64_t> sites = CallSites(module);
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* conditional : c->MakeInstructionPostOrder()) {
      if (conditional->opcode() != HloOpcode::kConditional || conditional->shape().IsTuple()) continue;
      if (absl::Status s = TupleConditionalResult(c, conditional, sites); !s.ok()) {
        return absl::Status(s.code(), StrCat("conditional-canonicalizer: ", conditional->name(), ": ", s.message()));
      }
      BumpCounter("tupled conditional results");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
