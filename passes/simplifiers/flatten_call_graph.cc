#include "passes/simplifiers/flatten_call_graph.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_module.h"

namespace passlab {

HloComputation* CloneComputation(const HloComputation& computation) {
  auto clone = std::make_unique<HloComputation>(computation.name() + ".clone");
  clone->set_execution_thread(computation.execution_thread());
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (HloInstruction* p : computation.parameter_instructions()) {
    map[p] = clone->AddParameter(p->CloneWithNewOperands(p->shape(), {}));
  }
  for (HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : inst->operands()) ops.push_back(map.at(op));
    map[inst] = clone->AddInstruction(inst->CloneWithNewOperands(inst->shape(), ops));
  }
  for (HloInstruction* inst : computation.instructions()) {
    for (HloInstruction* s : inst->control_successors()) map.at(inst)->AddControlDependencyTo(map.at(s));
  }
  clone->set_root_instruction(map.at(computation.root_instruction()));
  return computation.parent()->AddEmbeddedComputation(std::move(clone));
}

namespace {

// Who calls each computation, kept current as the pass clones and redirects
// (one scan of the module instead of one per query: the scan per query made
// the pass quadratic, 10-12 s on the 19K-instruction Gemma modules of XLA's
// benchmark set).
class CallerIndex {
 public:
  explicit CallerIndex(const HloModule& module) {
    for (HloComputation* c : module.computations()) AddCallsFrom(*c);
  }
  // The instructions that call `callee`, in unique-id order.
  std::vector<HloInstruction*> CallersOf(const HloComputation* callee) const {
    auto it = callers_.find(callee);
    if (it == callers_.end()) return {};
    std::vector<HloInstruction*> out(it->second.begin(), it->second.end());
    std::sort(out.begin(), out.end(),
              [](const HloInstruction* a, const HloInstruction* b) { return a->unique_id() < b->unique_id(); });
    return out;
  }
  void AddCallsFrom(const HloComputation& computation) {
    for (HloInstruction* inst : computation.instructions()) {
      for (HloComputation* callee : inst->called_computations()) callers_[callee].insert(inst);
    }
  }
  // `inst`'s k-th call now reaches `to`.
  void Redirect(HloInstruction* inst, int64_t k, HloComputation* to) {
    HloComputation* from = inst->called_computations()[k];
    inst->set_called_computation(k, to);
    const std::vector<HloComputation*>& called = inst->called_computations();
    if (std::find(called.begin(), called.end(), from) == called.end()) callers_[from].erase(inst);
    callers_[to].insert(inst);
  }

 private:
  absl::flat_hash_map<const HloComputation*, absl::flat_hash_set<HloInstruction*>> callers_;
};

}  // namespace

absl::StatusOr<bool> FlattenCallGraph::RunImpl(HloModule& module, PassRunContext*) {
  CallerIndex index(module);
  auto callers_of = [&](const HloComputation* callee) { return index.CallersOf(callee); };
  auto skip = [&](const HloComputation* c) {
    if (!options_.skip_cloning_for_calls) return false;
    for (const HloInstruction* caller : callers_of(c)) {
      if (caller->opcode() != HloOpcode::kCall) return false;
    }
    return true;
  };
  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (skip(computation)) continue;
    std::vector<HloInstruction*> callers = callers_of(computation);
    for (size_t i = 0; i < callers.size(); ++i) {
      HloInstruction* caller = callers[i];
      const std::vector<HloComputation*>& called = caller->called_computations();
      // The first caller keeps the original, unless it calls it twice.
      if (i == 0 && std::count(called.begin(), called.end(), computation) <= 1) continue;
      changed = true;
      std::vector<HloComputation*> worklist;
      for (int64_t k = 0; k < static_cast<int64_t>(caller->called_computations().size()); ++k) {
        HloComputation* callee = caller->called_computations()[k];
        if (callee != computation || skip(callee)) continue;
        HloComputation* clone = CloneComputation(*callee);
        index.AddCallsFrom(*clone);
        BumpCounter("cloned computation");
        index.Redirect(caller, k, clone);
        worklist.push_back(clone);
      }
      // The copies call copies of everything below them.
      while (!worklist.empty()) {
        HloComputation* current = worklist.back();
        worklist.pop_back();
        for (HloInstruction* inst : current->instructions()) {
          for (int64_t k = 0; k < static_cast<int64_t>(inst->called_computations().size()); ++k) {
            HloComputation* callee = inst->called_computations()[k];
            if (skip(callee)) continue;
            HloComputation* clone = CloneComputation(*callee);
            index.AddCallsFrom(*clone);
            BumpCounter("cloned computation");
            index.Redirect(inst, k, clone);
            worklist.push_back(clone);
          }
        }
      }
    }
  }
  return changed;
}

}  // namespace passlab
