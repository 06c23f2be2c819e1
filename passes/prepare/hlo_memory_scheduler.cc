#include "passes/prepare/hlo_memory_scheduler.h"
#include "passes/prepare/schedule_util.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <deque>
#include <limits>
#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "nlohmann/json.hpp"
#include "passes/prepare/rematerialization_memory_tracker.h"

namespace passlab {
namespace {

using remat::PointsTo;

// XLA's Layout::kHostMemorySpace.
constexpr int64_t kHostMemorySpace = 5;

// XLA:GPU's size function: ShapeUtil::ByteSizeOf with 8-byte pointers (a
// tuple is its pointer table), nothing for buffers in host memory.
int64_t BufferSize(const Shape& shape) {
  if (shape.has_layout() && shape.layout().memory_space() == kHostMemorySpace) return 0;
  if (shape.IsTuple()) return 8 * shape.tuple_shapes_size();
  if (shape.IsOpaque()) return 8;
  if (!shape.IsArray()) return 0;  // token
  return shape.byte_size();
}

// ListScheduler::IgnoreInstruction: parameters and constants are not the
// scheduler's to place well (their memory is there anyway).
bool IgnoredInstruction(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kParameter || inst.opcode() == HloOpcode::kConstant;
}

// ShapeUtil::IsEffectiveScalar: an array whose dimensions are all 1.
bool IsEffectiveScalar(const Shape& shape) {
  if (!shape.IsArray()) return false;
  for (int64_t d : shape.dimensions()) {
    if (d != 1) return false;
  }
  return true;
}

std::vector<HloInstruction*> UniqueOperands(const HloInstruction& inst) {
  std::vector<HloInstruction*> unique;
  for (HloInstruction* operand : inst.operands()) {
    if (std::find(unique.begin(), unique.end(), operand) == unique.end()) unique.push_back(operand);
  }
  return unique;
}

int64_t BufferCount(const HloComputation& computation, const PointsTo& points_to) {
  int64_t count = 0;
  for (const HloInstruction* inst : computation.instructions()) {
    count += static_cast<int64_t>(points_to.DefinedBy(inst).size());
  }
  return count;
}

// ---------------------------------------------------------------------------
// List scheduling (XLA's ListScheduler).

class ListScheduler {
 public:
  explicit ListScheduler(const HloComputation& computation)
      : computation_(computation), points_to_(computation), buffer_count_(BufferCount(computation, points_to_)) {
    size_.assign(buffer_count_, 0);
    ignored_.assign(buffer_count_, false);
    unscheduled_uses_.assign(buffer_count_, 0);
    for (const HloInstruction* inst : computation.instructions()) {
      int64_t defined = 0;
      for (int64_t b : points_to_.DefinedBy(inst)) {
        size_[b] = BufferSize(points_to_.buffer(b).shape);
        ignored_[b] = IgnoredInstruction(*inst);
        if (!ignored_[b]) defined += size_[b];
      }
      bytes_defined_[inst] = defined;
    }
    // An instruction uses every buffer its operands may hold (a
    // get-tuple-element uses all of its tuple's buffers, as in XLA).
    for (const HloInstruction* inst : computation.instructions()) {
      std::vector<int64_t>& uses = buffer_uses_[inst];
      for (const HloInstruction* operand : UniqueOperands(*inst)) {
        for (int64_t b : points_to_.Flattened(operand)) {
          if (std::find(uses.begin(), uses.end(), b) == uses.end()) uses.push_back(b);
        }
      }
      for (int64_t b : uses) ++unscheduled_uses_[b];
    }
    // Live-out buffers have one more use at the end of the computation.
    for (int64_t b : points_to_.Flattened(computation.root_instruction())) ++unscheduled_uses_[b];
  }

  std::vector<HloInstruction*> Run() {
    using Queue = std::multimap<Priority, HloInstruction*>;
    Queue ready;
    absl::flat_hash_map<const HloInstruction*, Queue::iterator> in_ready;
    absl::flat_hash_map<const HloInstruction*, int64_t> pending;
    for (const HloInstruction* inst : computation_.instructions()) {
      for (const HloInstruction* user : inst->users()) ++pending[user];
      for (const HloInstruction* succ : inst->control_successors()) ++pending[succ];
    }
    auto add_ready = [&](HloInstruction* inst) { in_ready[inst] = ready.emplace(GetPriority(*inst), inst); };
    for (HloInstruction* inst : computation_.instructions()) {
      if (inst->operands().empty() && inst->control_predecessors().empty()) add_ready(inst);
    }
    std::vector<HloInstruction*> sequence;
    sequence.reserve(computation_.instruction_count());
    while (!ready.empty()) {
      // The highest priority; among equals the one queued last.
      auto best_it = std::prev(ready.end());
      HloInstruction* best = best_it->second;
      ready.erase(best_it);
      in_ready.erase(best);
      sequence.push_back(best);
      bool adjust = false;
      for (int64_t b : buffer_uses_.at(best)) {
        int64_t& count = unscheduled_uses_[b];
        assert(count > 0);
        if (--count == 1) adjust = true;
      }
      auto release = [&](HloInstruction* inst) {
        if (--pending.at(inst) == 0) add_ready(inst);
      };
      for (HloInstruction* user : best->users()) release(user);
      for (HloInstruction* succ : best->control_successors()) release(succ);
      // A buffer down to its last use: that use may now free it. Only the
      // ready users of `best`'s operands are looked at again (as XLA does).
      if (!adjust) continue;
      for (const HloInstruction* operand : best->operands()) {
        for (const HloInstruction* user : operand->users()) {
          auto it = in_ready.find(user);
          if (it == in_ready.end()) continue;
          Priority updated = GetPriority(*user);
          if (updated == it->second->first) continue;
          HloInstruction* inst = it->second->second;
          ready.erase(it->second);
          it->second = ready.emplace(updated, inst);
        }
      }
    }
    assert(static_cast<int64_t>(sequence.size()) == computation_.instruction_count());
    return sequence;
  }

 private:
  // Bytes freed by scheduling the instruction, then its user count.
  using Priority = std::pair<int64_t, int64_t>;

  int64_t BytesFreedIfScheduled(const HloInstruction& inst) const {
    // An outfeed early and an infeed late give the host more time.
    if (inst.opcode() == HloOpcode::kOutfeed && inst.has_attrs() && !inst.attrs().outfeed_config.empty()) {
      return INT_MAX;
    }
    if (inst.opcode() == HloOpcode::kInfeed && inst.has_attrs() && !inst.attrs().infeed_config.empty()) {
      return INT_MIN;
    }
    int64_t freed = 0;
    for (int64_t b : buffer_uses_.at(&inst)) {
      if (!ignored_[b] && unscheduled_uses_[b] == 1) freed += size_[b];
    }
    return freed - bytes_defined_.at(&inst);
  }

  Priority GetPriority(const HloInstruction& inst) const {
    // Scalars cluster together (registers, not memory).
    if (IsEffectiveScalar(inst.shape())) {
      return {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max()};
    }
    return {BytesFreedIfScheduled(inst), inst.user_count()};
  }

  const HloComputation& computation_;
  PointsTo points_to_;
  int64_t buffer_count_;
  std::vector<int64_t> size_;
  std::vector<bool> ignored_;
  std::vector<int64_t> unscheduled_uses_;
  absl::flat_hash_map<const HloInstruction*, int64_t> bytes_defined_;
  absl::flat_hash_map<const HloInstruction*, std::vector<int64_t>> buffer_uses_;
};

// ---------------------------------------------------------------------------
// Post orders.

// XLA's post-order walk from `root`: a node is expanded when first popped
// (operands pushed last to first, so the first is walked first; control
// predecessors pushed after them, so they are walked before the operands)
// and emitted when popped again. `children` orders the pushes instead when
// given (most preferred last, i.e. walked first).
template <typename Children>
void PostOrderWalk(HloInstruction* root, absl::flat_hash_map<const HloInstruction*, int>& state, Children children,
                   std::vector<HloInstruction*>& out) {
  constexpr int kVisiting = 1;
  constexpr int kVisited = 2;
  std::vector<HloInstruction*> stack;
  if (state[root] != kVisited) stack.push_back(root);
  while (!stack.empty()) {
    HloInstruction* current = stack.back();
    int& s = state[current];
    if (s != 0) {
      stack.pop_back();
      if (s == kVisiting) {
        s = kVisited;
        out.push_back(current);
      }
      continue;
    }
    s = kVisiting;
    for (HloInstruction* child : children(current)) {
      if (child->parent() != root->parent()) continue;
      auto it = state.find(child);
      if (it == state.end() || it->second == 0) stack.push_back(child);
    }
  }
}

std::vector<HloInstruction*> XlaPostOrder(const HloComputation& computation) {
  absl::flat_hash_map<const HloInstruction*, int> state;
  std::vector<HloInstruction*> order;
  order.reserve(computation.instruction_count());
  auto children = [](HloInstruction* inst) {
    std::vector<HloInstruction*> c(inst->operands().rbegin(), inst->operands().rend());
    c.insert(c.end(), inst->control_predecessors().begin(), inst->control_predecessors().end());
    return c;
  };
  for (HloInstruction* inst : computation.instructions()) {
    if (inst->users().empty()) PostOrderWalk(inst, state, children, order);
  }
  // Instructions only reachable through a cycle (a malformed graph).
  for (HloInstruction* inst : computation.instructions()) PostOrderWalk(inst, state, children, order);
  return order;
}

}  // namespace

std::vector<HloInstruction*> ListMemorySchedule(const HloComputation& computation) {
  return ListScheduler(computation).Run();
}

std::vector<HloInstruction*> PostOrderMemorySchedule(const HloComputation& computation) {
  return XlaPostOrder(computation);
}

// XLA's DFSMemoryScheduler: per instruction, its transitive fan-out
// (users - 1 summed over everything it depends on) and transitive size
// (bytes it and everything it depends on define), both capped; a DFS from
// the dead instructions and then the root visits operands by larger
// fan-out, then larger size, then name.
std::vector<HloInstruction*> DfsMemorySchedule(const HloComputation& computation) {
  struct Stats {
    int64_t extra_users = 0;
    int64_t total_sizes = 0;
  };
  PointsTo points_to(computation);
  int64_t cumulative_total_size = 0;
  const int64_t total_hlos = computation.instruction_count();
  absl::flat_hash_map<const HloInstruction*, Stats> stats;
  for (const HloInstruction* hlo : XlaPostOrder(computation)) {
    Stats& s = stats[hlo];
    if (IgnoredInstruction(*hlo)) continue;
    s.extra_users = hlo->users().empty() ? 0 : hlo->user_count() - 1;
    int64_t own = 0;
    for (int64_t b : points_to.DefinedBy(hlo)) own += BufferSize(points_to.buffer(b).shape);
    s.total_sizes = own;
    cumulative_total_size += own;
    for (const HloInstruction* operand : UniqueOperands(*hlo)) {
      const Stats& o = stats.at(operand);
      s.extra_users += o.extra_users;
      s.total_sizes += o.total_sizes;
    }
    // The sums count shared ancestors once per path: capped against overflow.
    s.total_sizes = std::min(s.total_sizes, cumulative_total_size);
    s.extra_users = std::min(s.extra_users, total_hlos);
  }
  auto before = [&](const HloInstruction* a, const HloInstruction* b) {
    const Stats& sa = stats.at(a);
    const Stats& sb = stats.at(b);
    if (sa.extra_users != sb.extra_users) return sa.extra_users > sb.extra_users;
    if (sa.total_sizes != sb.total_sizes) return sa.total_sizes > sb.total_sizes;
    return a->name() < b->name();
  };
  auto children = [&](HloInstruction* inst) {
    std::vector<HloInstruction*> c(inst->operands().begin(), inst->operands().end());
    c.insert(c.end(), inst->control_predecessors().begin(), inst->control_predecessors().end());
    std::sort(c.begin(), c.end(), before);
    std::reverse(c.begin(), c.end());  // the first to visit on top
    return c;
  };
  absl::flat_hash_map<const HloInstruction*, int> state;
  std::vector<HloInstruction*> sequence;
  sequence.reserve(computation.instruction_count());
  for (HloInstruction* inst : computation.instructions()) {
    bool dead = inst->users().empty() && inst != computation.root_instruction();
    if (dead && inst->control_successors().empty()) PostOrderWalk(inst, state, children, sequence);
  }
  PostOrderWalk(computation.root_instruction(), state, children, sequence);
  // Instructions the walks cannot reach (dead, with control successors
  // that are themselves reached only through them), in post order.
  if (static_cast<int64_t>(sequence.size()) != computation.instruction_count()) {
    for (HloInstruction* inst : XlaPostOrder(computation)) {
      auto it = state.find(inst);
      if (it == state.end() || it->second != 2) PostOrderWalk(inst, state, children, sequence);
    }
  }
  return sequence;
}

// ---------------------------------------------------------------------------
// XLA:GPU's PostProcessSchedule.

namespace {

// backend_config={"collective_backend_config":{"is_sync":true}}.
bool IsSyncCollective(const HloInstruction& inst) {
  const std::string& config = inst.raw_backend_config();
  if (config.find("is_sync") == std::string::npos) return false;
  nlohmann::json j = nlohmann::json::parse(config, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  auto cbc = j.find("collective_backend_config");
  if (cbc == j.end() || !cbc->is_object()) return false;
  auto sync = cbc->find("is_sync");
  return sync != cbc->end() && sync->is_boolean() && sync->get<bool>();
}

bool WrapsCollective(const HloInstruction& inst) {
  const HloInstruction* wrapped = inst.async_wrapped_instruction();
  return wrapped != nullptr && IsCollectiveOpcode(wrapped->opcode());
}

// hlo_query::IsAsyncCollectiveStartOp / DoneOp with send/recv.
bool IsAsyncCollectiveStart(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kSend:
    case HloOpcode::kRecv:
      return true;
    case HloOpcode::kAsyncStart:
      return WrapsCollective(inst);
    default:
      return false;
  }
}

bool IsAsyncCollectiveDone(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecvDone:
      return true;
    case HloOpcode::kAsyncDone:
      return inst.operand_count() > 0 && WrapsCollective(*inst.operand(0));
    default:
      return false;
  }
}

bool ScheduleAsEarlyAsPossible(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kAsyncStart:
      return !IsSyncCollective(inst);
    case HloOpcode::kCustomCall:
      return inst.has_attrs() && inst.attrs().schedule == CustomCallSchedule::kEarliest;
    default:
      return false;
  }
}

bool ScheduleAsLateAsPossible(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kAsyncDone:
      return inst.operand_count() > 0 && ScheduleAsEarlyAsPossible(*inst.operand(0));
    case HloOpcode::kCustomCall:
      return inst.has_attrs() && inst.attrs().schedule == CustomCallSchedule::kLatest;
    default:
      return false;
  }
}

// A synchronous collective's start goes right before its done.
std::vector<HloInstruction*> ScheduleSyncCollectives(absl::Span<HloInstruction* const> input) {
  auto is_sync_start = [](const HloInstruction* inst) {
    return IsAsyncCollectiveStart(*inst) && IsSyncCollective(*inst);
  };
  std::vector<HloInstruction*> result;
  result.reserve(input.size());
  for (HloInstruction* inst : input) {
    if (is_sync_start(inst)) continue;
    if (IsAsyncCollectiveDone(*inst) && is_sync_start(inst->operand(0))) result.push_back(inst->mutable_operand(0));
    result.push_back(inst);
  }
  assert(result.size() == input.size());
  return result;
}

// Forward: each instruction pulls in the users that want to be early and
// are now ready. Backward: each pulls in the operands that want to be late
// and whose users are all placed.
std::vector<HloInstruction*> ScheduleAsEarlyOrLateAsPossible(absl::Span<HloInstruction* const> input) {
  std::vector<HloInstruction*> earliest;
  {
    absl::flat_hash_set<const HloInstruction*> placed;
    auto is_placed = [&](const HloInstruction* i) { return placed.contains(i); };
    auto ready_early = [&](const HloInstruction& s) {
      return ScheduleAsEarlyAsPossible(s) && std::all_of(s.operands().begin(), s.operands().end(), is_placed) &&
             std::all_of(s.control_predecessors().begin(), s.control_predecessors().end(), is_placed);
    };
    for (HloInstruction* inst : input) {
      if (!placed.insert(inst).second) continue;
      earliest.push_back(inst);
      for (HloInstruction* user : inst->users()) {
        if (!is_placed(user) && ready_early(*user)) {
          placed.insert(user);
          earliest.push_back(user);
        }
      }
      for (HloInstruction* succ : inst->control_successors()) {
        if (!is_placed(succ) && ready_early(*succ)) {
          placed.insert(succ);
          earliest.push_back(succ);
        }
      }
    }
  }
  std::deque<HloInstruction*> latest;
  {
    absl::flat_hash_set<const HloInstruction*> placed;
    auto is_placed = [&](const HloInstruction* i) { return placed.contains(i); };
    auto ready_late = [&](const HloInstruction& p) {
      return ScheduleAsLateAsPossible(p) && std::all_of(p.users().begin(), p.users().end(), is_placed) &&
             std::all_of(p.control_successors().begin(), p.control_successors().end(), is_placed);
    };
    for (auto it = earliest.rbegin(); it != earliest.rend(); ++it) {
      if (!placed.insert(*it).second) continue;
      latest.push_front(*it);
      for (HloInstruction* operand : (*it)->operands()) {
        if (!is_placed(operand) && ready_late(*operand)) {
          placed.insert(operand);
          latest.push_front(operand);
        }
      }
      for (HloInstruction* pred : (*it)->control_predecessors()) {
        if (!is_placed(pred) && ready_late(*pred)) {
          placed.insert(pred);
          latest.push_front(pred);
        }
      }
    }
  }
  assert(latest.size() == input.size());
  return std::vector<HloInstruction*>(latest.begin(), latest.end());
}

}  // namespace

std::vector<HloInstruction*> GpuPostProcessSchedule(absl::Span<HloInstruction* const> sequence) {
  std::vector<HloInstruction*> synced = ScheduleSyncCollectives(sequence);
  return ScheduleAsEarlyOrLateAsPossible(synced);
}

// ---------------------------------------------------------------------------
// Peak memory.

namespace {

class PeakSimulator {
 public:
  PeakSimulator(const HloModule& module, const ComputationSequences& sequences)
      : module_(module), sequences_(sequences) {}

  // The entry computation with its parameters and outputs.
  int64_t ModulePeak() { return Simulate(*module_.entry_computation(), /*entry=*/true); }

 private:
  // The peak of a called computation's own temporaries.
  int64_t Temporaries(const HloComputation& computation) {
    auto it = temporaries_.find(&computation);
    if (it != temporaries_.end()) return it->second;
    int64_t peak = Simulate(computation, /*entry=*/false);
    temporaries_[&computation] = peak;
    return peak;
  }

  // What control flow adds while it runs.
  int64_t CalleePeak(const HloInstruction& inst) {
    switch (inst.opcode()) {
      case HloOpcode::kWhile:
      case HloOpcode::kConditional:
      case HloOpcode::kCall: {
        int64_t most = 0;
        for (const HloComputation* callee : inst.called_computations()) {
          if (callee != nullptr) most = std::max(most, Temporaries(*callee));
        }
        return most;
      }
      default:
        return 0;
    }
  }

  int64_t Simulate(const HloComputation& computation, bool entry) {
    auto seq_it = sequences_.find(&computation);
    std::vector<HloInstruction*> sequence =
        seq_it != sequences_.end() ? seq_it->second : computation.instructions();
    absl::flat_hash_map<const HloInstruction*, int64_t> position;
    for (size_t i = 0; i < sequence.size(); ++i) position[sequence[i]] = static_cast<int64_t>(i);
    PointsTo points_to(computation);
    const int64_t buffers = BufferCount(computation, points_to);
    std::vector<int64_t> size(buffers, 0);
    absl::flat_hash_set<int64_t> live_out;
    for (int64_t b : points_to.Flattened(computation.root_instruction())) live_out.insert(b);
    std::vector<std::vector<int64_t>> frees(sequence.size());
    int64_t live = 0;
    for (const HloInstruction* inst : sequence) {
      for (int64_t b : points_to.DefinedBy(inst)) {
        HloOpcode op = inst->opcode();
        bool parameter = op == HloOpcode::kParameter;
        // Constants are not in the heap; a called computation's parameters
        // and outputs are its caller's buffers.
        if (op == HloOpcode::kConstant || (!entry && (parameter || live_out.contains(b)))) continue;
        size[b] = BufferSize(points_to.buffer(b).shape);
        // The entry's parameters live from the start, its outputs to the end.
        if (parameter || live_out.contains(b)) {
          if (parameter) live += size[b];
          continue;
        }
        int64_t last = position.at(inst);
        for (const auto& [alias, index] : points_to.Aliases(b)) {
          for (const HloInstruction* user : alias->users()) {
            if (PointsTo::DoesNotUseOperandBuffer(alias, index, user)) continue;
            auto p = position.find(user);
            if (p != position.end()) last = std::max(last, p->second);
          }
        }
        frees[last].push_back(b);
      }
    }
    int64_t peak = live;
    for (size_t i = 0; i < sequence.size(); ++i) {
      const HloInstruction* inst = sequence[i];
      for (int64_t b : points_to.DefinedBy(inst)) {
        if (inst->opcode() != HloOpcode::kParameter) live += size[b];
      }
      peak = std::max(peak, live + CalleePeak(*inst));
      for (int64_t b : frees[i]) live -= size[b];
    }
    return peak;
  }

  const HloModule& module_;
  const ComputationSequences& sequences_;
  absl::flat_hash_map<const HloComputation*, int64_t> temporaries_;
};

std::string_view AlgorithmName(MemorySchedulerAlgorithm a) {
  switch (a) {
    case MemorySchedulerAlgorithm::kDefault:
      return "default";
    case MemorySchedulerAlgorithm::kList:
      return "list";
    case MemorySchedulerAlgorithm::kDfs:
      return "dfs";
    case MemorySchedulerAlgorithm::kPostOrder:
      return "postorder";
  }
  return "default";
}

ComputationSequences ScheduleModule(const HloModule& module, MemorySchedulerAlgorithm algorithm, bool postprocess) {
  ComputationSequences sequences;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    std::vector<HloInstruction*> sequence;
    switch (algorithm) {
      case MemorySchedulerAlgorithm::kDefault:
      case MemorySchedulerAlgorithm::kList:
        sequence = ListMemorySchedule(*c);
        break;
      case MemorySchedulerAlgorithm::kDfs:
        sequence = DfsMemorySchedule(*c);
        break;
      case MemorySchedulerAlgorithm::kPostOrder:
        sequence = PostOrderMemorySchedule(*c);
        break;
    }
    if (postprocess) sequence = GpuPostProcessSchedule(sequence);
    sequences[c] = std::move(sequence);
  }
  return sequences;
}

}  // namespace

std::optional<MemorySchedulerAlgorithm> ParseMemorySchedulerAlgorithm(std::string_view name) {
  for (MemorySchedulerAlgorithm a : {MemorySchedulerAlgorithm::kDefault, MemorySchedulerAlgorithm::kList,
                                     MemorySchedulerAlgorithm::kDfs, MemorySchedulerAlgorithm::kPostOrder}) {
    if (AlgorithmName(a) == name) return a;
  }
  return std::nullopt;
}

int64_t SimulatePeakMemory(const HloModule& module, const ComputationSequences& sequences) {
  if (module.entry_computation() == nullptr) return 0;
  return PeakSimulator(module, sequences).ModulePeak();
}

absl::StatusOr<bool> HloMemoryScheduler::RunImpl(HloModule& module, PassRunContext*) {
  std::optional<MemorySchedulerAlgorithm> parsed = ParseMemorySchedulerAlgorithm(options_.algorithm);
  if (!parsed.has_value()) {
    return absl::InvalidArgumentError(
        StrCat(name(), ": unknown algorithm ", options_.algorithm, " (default, list, dfs or postorder)"));
  }
  MemorySchedulerAlgorithm chosen = *parsed;
  ComputationSequences sequences;
  int64_t peak = 0;
  if (chosen == MemorySchedulerAlgorithm::kDefault) {
    // DefaultMemoryScheduler: the smallest simulated peak wins; ties go to
    // list, then dfs, then post order.
    bool first = true;
    for (MemorySchedulerAlgorithm a :
         {MemorySchedulerAlgorithm::kList, MemorySchedulerAlgorithm::kDfs, MemorySchedulerAlgorithm::kPostOrder}) {
      ComputationSequences candidate = ScheduleModule(module, a, options_.gpu_postprocess);
      int64_t candidate_peak = SimulatePeakMemory(module, candidate);
      if (first || candidate_peak < peak) {
        sequences = std::move(candidate);
        peak = candidate_peak;
        chosen = a;
        first = false;
      }
    }
  } else {
    sequences = ScheduleModule(module, chosen, options_.gpu_postprocess);
    peak = SimulatePeakMemory(module, sequences);
  }
  BumpCounter(StrCat("computations scheduled by ", AlgorithmName(chosen)),
              static_cast<int64_t>(sequences.size()));
  BumpCounter("simulated peak bytes", peak);
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    auto it = sequences.find(c);
    if (it == sequences.end()) continue;
    ASSIGN_OR_RETURN(bool reordered, ApplySequence(*c, it->second, *this));
    changed |= reordered;
  }
  changed |= MarkModuleScheduled(module);
  return changed;
}

}  // namespace passlab
