#include "core/ir/hlo_module.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// Splits "add.12" into ("add", 12); names without a numeric suffix give -1.
std::pair<std::string, int64_t> SplitSuffix(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot != std::string_view::npos && dot + 1 < name.size()) {
    int64_t n;
    std::string_view digits = name.substr(dot + 1);
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        (digits.size() == 1 || digits[0] != '0') && absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), &n)) {
      return {std::string(name.substr(0, dot)), n};
    }
  }
  return {std::string(name), -1};
}

std::string Uniquify(std::string_view prefix, absl::flat_hash_set<std::string>& used,
                     absl::flat_hash_map<std::string, int64_t>& next) {
  if (used.insert(std::string(prefix)).second) {
    auto [base, n] = SplitSuffix(prefix);
    int64_t& nx = next[base];
    nx = std::max(nx, n + 1);
    return std::string(prefix);
  }
  auto [base, n] = SplitSuffix(prefix);
  int64_t& nx = next[base];
  nx = std::max<int64_t>(nx, 1);
  while (true) {
    std::string candidate = StrCat(base, ".", nx++);
    if (used.insert(candidate).second) return candidate;
  }
}

}  // namespace

std::string ProgramShape::ToString() const {
  std::vector<std::string> params;
  for (const Shape& p : parameters) params.push_back(p.ToString());
  return StrCat("(", Join(params, ", "), ")->", result.ToString());
}

HloModule::HloModule(std::string name) : name_(std::move(name)) {}
HloModule::~HloModule() = default;

HloComputation* HloModule::AddComputationInternal(std::unique_ptr<HloComputation> computation,
                                                  bool is_entry, bool uniquify) {
  BumpIrGeneration();
  HloComputation* c = computation.get();
  if (uniquify) {
    c->SetName(Uniquify(c->name(), computation_names_, computation_name_next_));
  } else {
    computation_names_.insert(c->name());
    auto [base, n] = SplitSuffix(c->name());
    int64_t& nx = computation_name_next_[base];
    nx = std::max(nx, n + 1);
  }
  c->set_parent(this);
  c->set_unique_id(NextUniqueId());
  // Instructions created before attachment get names and ids now.
  for (HloInstruction* inst : c->instructions()) {
    if (inst->unique_id() < 0) inst->set_unique_id(NextUniqueId());
    if (uniquify) {
      inst->SetName(UniqueInstructionName(inst->name().empty()
                                              ? std::string(HloOpcodeString(inst->opcode()))
                                              : inst->name()));
    } else {
      RegisterInstructionName(inst->name());
    }
  }
  computations_.push_back(std::move(computation));
  if (is_entry) entry_ = c;
  return c;
}

HloComputation* HloModule::AddEntryComputation(std::unique_ptr<HloComputation> computation) {
  return AddComputationInternal(std::move(computation), true, true);
}

HloComputation* HloModule::AddEmbeddedComputation(std::unique_ptr<HloComputation> computation) {
  return AddComputationInternal(std::move(computation), false, true);
}

HloComputation* HloModule::AddComputationKeepName(std::unique_ptr<HloComputation> computation,
                                                  bool is_entry) {
  return AddComputationInternal(std::move(computation), is_entry, false);
}

absl::Status HloModule::RemoveEmbeddedComputation(HloComputation* computation) {
  BumpIrGeneration();
  if (computation == entry_) {
    return absl::FailedPreconditionError("cannot remove the entry computation");
  }
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& c) { return c.get() == computation; });
  if (it == computations_.end()) {
    return absl::NotFoundError(
        StrCat("computation '", computation->name(), "' is not in module '", name_, "'"));
  }
  computations_.erase(it);
  return absl::OkStatus();
}

int64_t HloModule::RemoveUnusedComputations() {
  BumpIrGeneration();
  absl::flat_hash_set<const HloComputation*> live;
  if (entry_ != nullptr) {
    live.insert(entry_);
    for (HloComputation* c : entry_->MakeEmbeddedComputationsList()) live.insert(c);
  }
  int64_t removed = 0;
  for (auto it = computations_.begin(); it != computations_.end();) {
    if (!live.contains(it->get())) {
      it = computations_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

std::vector<HloComputation*> HloModule::computations() const {
  std::vector<HloComputation*> out;
  for (const auto& c : computations_) out.push_back(c.get());
  return out;
}

std::vector<HloComputation*> HloModule::MakeComputationPostOrder() const {
  std::vector<HloComputation*> order;
  // Computations in insertion order, each after its callees (a DFS over the
  // calls in each computation's instruction post order). One visited set for
  // the whole module: a callee's subtree is walked once, however many
  // computations call it.
  absl::flat_hash_set<const HloComputation*> visited;
  std::function<void(const HloComputation*)> visit_callees = [&](const HloComputation* c) {
    for (HloComputation* callee : c->CalledComputationsInPostOrder()) {
      if (!visited.insert(callee).second) continue;
      visit_callees(callee);
      order.push_back(callee);
    }
  };
  for (const auto& c : computations_) {
    const bool first_visit = visited.insert(c.get()).second;
    if (first_visit) visit_callees(c.get());
    if (first_visit && c.get() != entry_) order.push_back(c.get());
  }
  if (entry_ != nullptr) {
    // The entry goes last; its callees are already in.
    auto it = std::find(order.begin(), order.end(), entry_);
    if (it != order.end()) order.erase(it);
    order.push_back(entry_);
  }
  return order;
}

HloComputation* HloModule::GetComputationWithName(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

int64_t HloModule::instruction_count() const {
  int64_t n = 0;
  for (const auto& c : computations_) n += c->instruction_count();
  return n;
}

ProgramShape HloModule::entry_computation_layout() const {
  if (config_.entry_computation_layout.has_value()) return *config_.entry_computation_layout;
  ProgramShape ps;
  if (entry_ != nullptr) {
    ps.parameters = entry_->ParameterShapes();
    if (entry_->root_instruction() != nullptr) ps.result = entry_->root_instruction()->shape();
  }
  return ps;
}

std::string HloModule::UniqueInstructionName(std::string_view prefix) {
  return Uniquify(prefix, instruction_names_, instruction_name_next_);
}

std::string HloModule::UniqueComputationName(std::string_view prefix) {
  return Uniquify(prefix, computation_names_, computation_name_next_);
}

void HloModule::RegisterInstructionName(const std::string& name) {
  instruction_names_.insert(name);
  auto [base, n] = SplitSuffix(name);
  int64_t& nx = instruction_name_next_[base];
  nx = std::max(nx, n + 1);
}

std::unique_ptr<HloModule> HloModule::Clone(std::string_view suffix) const {
  auto clone = std::make_unique<HloModule>(suffix.empty() ? name_ : StrCat(name_, "-", suffix));
  clone->config_ = config_;
  clone->is_scheduled_ = is_scheduled_;
  absl::flat_hash_map<const HloComputation*, HloComputation*> cmap;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> imap;
  // Computations in post order so callees exist before callers reference them
  // (references are remapped at the end anyway).
  std::vector<HloComputation*> order = MakeComputationPostOrder();
  // Keep computations nobody reaches too, in their original order.
  for (const auto& c : computations_) {
    if (std::find(order.begin(), order.end(), c.get()) == order.end()) order.insert(order.begin(), c.get());
  }
  for (HloComputation* c : order) {
    auto nc = std::make_unique<HloComputation>(c->name());
    nc->set_execution_thread(c->execution_thread());
    for (HloInstruction* p : c->parameter_instructions()) {
      imap[p] = nc->AddParameter(p->CloneWithNewOperands(p->shape(), {}));
    }
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() == HloOpcode::kParameter) continue;
      std::vector<HloInstruction*> ops;
      for (HloInstruction* op : inst->operands()) ops.push_back(imap.at(op));
      imap[inst] = nc->AddInstruction(inst->CloneWithNewOperands(inst->shape(), ops));
    }
    if (c->root_instruction() != nullptr) nc->set_root_instruction(imap.at(c->root_instruction()));
    cmap[c] = nc.get();
    clone->AddComputationKeepName(std::move(nc), c == entry_);
  }
  for (HloComputation* c : order) {
    HloComputation* nc = cmap.at(c);
    for (HloInstruction* inst : c->instructions()) {
      HloInstruction* ni = imap.at(inst);
      for (int64_t i = 0; i < static_cast<int64_t>(inst->called_computations().size()); ++i) {
        HloComputation* callee = inst->called_computations()[i];
        ni->set_called_computation(i, cmap.at(callee));
      }
      for (HloInstruction* s : inst->control_successors()) ni->AddControlDependencyTo(imap.at(s));
    }
    if (c->IsFusionComputation()) nc->SetFusionInstruction(imap.at(c->FusionInstruction()));
  }
  return clone;
}

std::map<std::string, int64_t> CountInstructionsByOpcode(const HloModule& module) {
  // Count by opcode number first: no string per instruction.
  std::vector<int64_t> by_opcode(kHloOpcodeCount, 0);
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](const HloInstruction* i) { ++by_opcode[static_cast<int>(i->opcode())]; });
  }
  std::map<std::string, int64_t> counts;
  for (int op = 0; op < kHloOpcodeCount; ++op) {
    if (by_opcode[op] > 0) counts[std::string(HloOpcodeString(static_cast<HloOpcode>(op)))] = by_opcode[op];
  }
  return counts;
}

std::map<std::string, int64_t> OpcodeCountDelta(const std::map<std::string, int64_t>& before,
                                                const std::map<std::string, int64_t>& after) {
  std::map<std::string, int64_t> delta;
  for (const auto& [op, n] : after) {
    auto it = before.find(op);
    int64_t d = n - (it == before.end() ? 0 : it->second);
    if (d != 0) delta[op] = d;
  }
  for (const auto& [op, n] : before) {
    if (!after.contains(op)) delta[op] = -n;
  }
  return delta;
}

}  // namespace passlab
