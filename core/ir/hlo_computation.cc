#include "core/ir/hlo_computation.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "core/ir/str_util.h"
#include "core/ir/hlo_module.h"

namespace passlab {

void HloComputation::SetName(std::string name) {
  BumpIrGeneration();
  text_cache_.reset();
  name_ = std::move(name);
  if (parent_ == nullptr) return;
  for (HloComputation* c : parent_->computations()) {
    c->ForEachInstruction([&](HloInstruction* inst) {
      for (const HloComputation* callee : inst->called_computations()) {
        if (callee == this) inst->InvalidateCaches();
      }
    });
  }
}

// Operands and users never cross computations, so the instructions can go
// together without unlinking them one by one (which is quadratic for an
// operand with many users).
HloComputation::~HloComputation() = default;

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction,
                                               std::string_view name) {
  HloInstruction* inst = instruction.get();
  inst->set_parent(this);
  if (!name.empty()) inst->SetName(std::string(name));
  if (parent_ != nullptr) {
    std::string prefix = inst->name().empty() ? std::string(HloOpcodeString(inst->opcode()))
                                              : inst->name();
    inst->SetName(parent_->UniqueInstructionName(prefix));
    inst->set_unique_id(parent_->NextUniqueId());
  } else if (inst->name().empty()) {
    inst->SetName(std::string(HloOpcodeString(inst->opcode())));
  }
  instructions_.push_back(std::move(instruction));
  InvalidatePostOrder();
  positions_[inst] = std::prev(instructions_.end());
  return inst;
}

HloInstruction* HloComputation::AddParameter(std::unique_ptr<HloInstruction> parameter) {
  BumpIrGeneration();
  HloInstruction* p = AddInstruction(std::move(parameter));
  parameters_.push_back(p);
  return p;
}

absl::Status HloComputation::RemoveInstruction(HloInstruction* instruction) {
  if (instruction->user_count() != 0) {
    return absl::FailedPreconditionError(StrCat(
        "cannot remove instruction '", instruction->name(), "' from computation '", name_,
        "': it still has ", instruction->user_count(), " user(s)"));
  }
  if (instruction == root_) {
    return absl::FailedPreconditionError(
        StrCat("cannot remove root instruction '", instruction->name(), "'"));
  }
  auto it = positions_.find(instruction);
  if (it == positions_.end()) {
    return absl::NotFoundError(StrCat("instruction '", instruction->name(),
                                            "' is not in computation '", name_, "'"));
  }
  if (instruction->opcode() == HloOpcode::kParameter) {
    parameters_.erase(std::find(parameters_.begin(), parameters_.end(), instruction));
  }
  if (removal_listener_) removal_listener_(instruction);
  instruction->DetachFromOperands();
  instruction->DropAllControlDeps();
  auto list_it = it->second;
  positions_.erase(it);
  instructions_.erase(list_it);
  InvalidatePostOrder();
  return absl::OkStatus();
}

absl::Status HloComputation::RemoveInstructionAndUnusedOperands(HloInstruction* instruction) {
  std::vector<HloInstruction*> worklist = {instruction};
  absl::flat_hash_set<HloInstruction*> removed;
  while (!worklist.empty()) {
    HloInstruction* inst = worklist.back();
    worklist.pop_back();
    if (removed.contains(inst) || inst->user_count() != 0 || inst == root_ ||
        (inst != instruction &&
         (inst->opcode() == HloOpcode::kParameter || inst->HasSideEffect() ||
          !inst->control_successors().empty()))) {
      continue;
    }
    std::vector<HloInstruction*> operands = inst->operands();
    if (absl::Status s = RemoveInstruction(inst); !s.ok()) return s;
    removed.insert(inst);
    for (HloInstruction* op : operands) worklist.push_back(op);
  }
  return absl::OkStatus();
}

absl::Status HloComputation::ReplaceInstruction(HloInstruction* old_instruction,
                                                HloInstruction* new_instruction) {
  if (absl::Status s = old_instruction->ReplaceAllUsesWith(new_instruction); !s.ok()) return s;
  if (old_instruction->user_count() == 0 && old_instruction != root_ &&
      old_instruction->opcode() != HloOpcode::kParameter) {
    old_instruction->CopyControlDependenciesTo(new_instruction);
    return RemoveInstructionAndUnusedOperands(old_instruction);
  }
  return absl::OkStatus();
}

absl::Status HloComputation::ReplaceWithNewInstruction(
    HloInstruction* old_instruction, std::unique_ptr<HloInstruction> new_instruction) {
  if (new_instruction->metadata().empty()) {
    new_instruction->set_metadata(old_instruction->metadata());
  }
  HloInstruction* added = AddInstruction(std::move(new_instruction));
  return ReplaceInstruction(old_instruction, added);
}

absl::Status HloComputation::RemoveParameter(int64_t i) {
  BumpIrGeneration();
  HloInstruction* p = parameters_[i];
  if (p->user_count() != 0) {
    return absl::FailedPreconditionError(
        StrCat("parameter ", i, " of '", name_, "' still has users"));
  }
  if (absl::Status s = RemoveInstruction(p); !s.ok()) return s;
  for (int64_t j = i; j < num_parameters(); ++j) parameters_[j]->set_index(j);
  return absl::OkStatus();
}

void HloComputation::RebuildParameterList() {
  BumpIrGeneration();
  parameters_.clear();
  for (const auto& i : instructions_) {
    if (i->opcode() == HloOpcode::kParameter) parameters_.push_back(i.get());
  }
  std::stable_sort(parameters_.begin(), parameters_.end(),
                   [](const HloInstruction* a, const HloInstruction* b) {
                     return a->parameter_number() < b->parameter_number();
                   });
}

std::vector<HloInstruction*> HloComputation::instructions() const {
  std::vector<HloInstruction*> out;
  out.reserve(instructions_.size());
  for (const auto& i : instructions_) out.push_back(i.get());
  return out;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const { return InstructionPostOrder(); }

const std::vector<HloInstruction*>& HloComputation::InstructionPostOrder() const {
  if (!post_order_valid_) {
    post_order_ = ComputeInstructionPostOrder();
    post_order_valid_ = true;
  }
  return post_order_;
}

// Computed with the post order (ComputeInstructionPostOrder), while its
// instructions are in cache.
const std::vector<HloComputation*>& HloComputation::CalledComputationsInPostOrder() const {
  InstructionPostOrder();
  return callees_;
}

const std::vector<const HloInstruction*>& HloComputation::AsyncStarts() const {
  InstructionPostOrder();
  return async_starts_;
}

absl::Status HloComputation::SetInstructionSequence(absl::Span<HloInstruction* const> sequence) {
  if (sequence.size() != instructions_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("computation ", name_, ": sequence has ", sequence.size(),
                                                   " instructions, the computation ", instructions_.size()));
  }
  absl::flat_hash_map<const HloInstruction*, size_t> index;
  index.reserve(sequence.size());
  for (size_t i = 0; i < sequence.size(); ++i) {
    HloInstruction* inst = sequence[i];
    if (inst == nullptr || inst->parent() != this || !positions_.contains(inst)) {
      return absl::InvalidArgumentError(absl::StrCat("computation ", name_, ": sequence position ", i,
                                                     " is not an instruction of this computation"));
    }
    if (!index.emplace(inst, i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation ", name_, ": ", inst->name(), " appears twice in the sequence"));
    }
  }
  for (size_t i = 0; i < sequence.size(); ++i) {
    const HloInstruction* inst = sequence[i];
    auto check = [&](const HloInstruction* dep) -> absl::Status {
      if (dep->parent() != this) return absl::OkStatus();
      if (index.at(dep) > i) {
        return absl::InvalidArgumentError(absl::StrCat("computation ", name_, ": ", inst->name(),
                                                       " is sequenced before its dependency ", dep->name()));
      }
      return absl::OkStatus();
    };
    for (const HloInstruction* op : inst->operands()) {
      if (absl::Status s = check(op); !s.ok()) return s;
    }
    for (const HloInstruction* pred : inst->control_predecessors()) {
      if (absl::Status s = check(pred); !s.ok()) return s;
    }
  }
  // Splice each node to the back in sequence order: pointers and the
  // position map's iterators stay valid.
  for (HloInstruction* inst : sequence) instructions_.splice(instructions_.end(), instructions_, positions_.at(inst));
  InvalidatePostOrder();
  return absl::OkStatus();
}

std::vector<HloInstruction*> HloComputation::ComputeInstructionPostOrder() const {
  std::vector<HloInstruction*> order;
  order.reserve(instructions_.size());
  // The call summary on the way: callees in the order the post order
  // reaches them, each once, and the async-starts.
  callees_.clear();
  async_starts_.clear();
  absl::flat_hash_set<const HloComputation*> seen_callees;
  auto emit = [&](HloInstruction* inst) {
    order.push_back(inst);
    if (inst->opcode() == HloOpcode::kAsyncStart) async_starts_.push_back(inst);
    for (HloComputation* callee : inst->called_computations()) {
      if (callee != nullptr && seen_callees.insert(callee).second) callees_.push_back(callee);
    }
  };
  // Marks: `on_stack`, then `done`; anything else is unvisited.
  const uint64_t on_stack = HloInstruction::NewVisitStamp();
  const uint64_t done = on_stack + 1;
  std::vector<std::pair<HloInstruction*, size_t>> stack;
  auto deps = [](HloInstruction* inst, size_t k) -> HloInstruction* {
    size_t n = inst->operands().size();
    if (k < n) return inst->operands()[k];
    k -= n;
    if (k < inst->control_predecessors().size()) return inst->control_predecessors()[k];
    return nullptr;
  };
  auto walk = [&](HloInstruction* start) {
    stack.push_back({start, 0});
    start->set_visit_mark(on_stack);
    while (!stack.empty()) {
      auto& [inst, k] = stack.back();
      HloInstruction* dep = deps(inst, k);
      if (dep == nullptr) {
        inst->set_visit_mark(done);
        emit(inst);
        stack.pop_back();
        continue;
      }
      ++k;
      // Only instructions of this computation take part (a malformed module
      // may reference others; the verifier reports that).
      if (dep->parent() != this) continue;
      const uint64_t m = dep->visit_mark();
      if (m != on_stack && m != done) {
        dep->set_visit_mark(on_stack);
        stack.push_back({dep, 0});
      }
    }
  };
  auto unvisited = [&](const HloInstruction* inst) {
    const uint64_t mark = inst->visit_mark();
    return mark != on_stack && mark != done;
  };
  // As XLA's MakeInstructionPostOrder: the walks start at the instructions
  // that no instruction of this computation uses, in insertion order, so
  // that operands come in the order their users reach them (XLA's printed
  // order). Then anything a malformed (cyclic) graph left unreached. In a
  // scheduled module the insertion order is the schedule (as XLA prints a
  // scheduled module in its sequence): every instruction starts a walk.
  const bool scheduled = parent_ != nullptr && parent_->is_scheduled();
  auto used_here = [this](const HloInstruction* inst) {
    return std::any_of(inst->users().begin(), inst->users().end(),
                       [this](const HloInstruction* user) { return user->parent() == this; });
  };
  for (const auto& inst : instructions_) {
    if (unvisited(inst.get()) && (scheduled || !used_here(inst.get()))) walk(inst.get());
  }
  for (const auto& inst : instructions_) {
    if (unvisited(inst.get())) walk(inst.get());
  }
  return order;
}

HloInstruction* HloComputation::GetInstructionWithName(std::string_view name) const {
  for (const auto& i : instructions_) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

std::vector<HloComputation*> HloComputation::MakeEmbeddedComputationsList() const {
  std::vector<HloComputation*> order;
  absl::flat_hash_set<const HloComputation*> visited;
  // Iterative DFS over called computations.
  std::function<void(const HloComputation*)> visit = [&](const HloComputation* c) {
    for (HloComputation* callee : c->CalledComputationsInPostOrder()) {
      if (!visited.insert(callee).second) continue;
      visit(callee);
      order.push_back(callee);
    }
  };
  visited.insert(this);
  visit(this);
  return order;
}

bool HloComputation::IsEntryComputation() const {
  return parent_ != nullptr && parent_->entry_computation() == this;
}

std::vector<Shape> HloComputation::ParameterShapes() const {
  std::vector<Shape> shapes;
  for (HloInstruction* p : parameters_) shapes.push_back(p->shape());
  return shapes;
}

}  // namespace passlab
