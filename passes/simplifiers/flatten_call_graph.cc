#include "passes/simplifiers/flatten_call_graph.h"

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"

namespace passlab {
namespace {

bool IsSequentialCall(HloOpcode op) {
  return op == HloOpcode::kCall || op == HloOpcode::kWhile || op == HloOpcode::kConditional;
}

}  // namespace

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

absl::StatusOr<bool> FlattenCallGraph::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  // Repeat until every sequentially called computation has one call site
  // (cloning a computation gives its own callees a second caller).
  for (int round = 0; round < 64; ++round) {
    absl::flat_hash_map<const HloComputation*, int64_t> sites;
    bool cloned = false;
    for (HloComputation* c : module.MakeComputationPostOrder()) {
      for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
        if (!IsSequentialCall(inst->opcode())) continue;
        for (int64_t k = 0; k < static_cast<int64_t>(inst->called_computations().size()); ++k) {
          HloComputation* callee = inst->called_computations()[k];
          if (sites[callee]++ == 0) continue;
          inst->set_called_computation(k, CloneComputation(*callee));
          BumpCounter("cloned computation");
          cloned = true;
        }
      }
    }
    if (!cloned) break;
    changed = true;
  }
  return changed;
}

}  // namespace passlab
