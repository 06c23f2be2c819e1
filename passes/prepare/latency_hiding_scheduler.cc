#include "passes/prepare/latency_hiding_scheduler.h"
#include "passes/prepare/schedule_util.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool IsAsyncStart(HloOpcode op) {
  return op == HloOpcode::kAllReduceStart || op == HloOpcode::kAllGatherStart ||
         op == HloOpcode::kCollectivePermuteStart || op == HloOpcode::kCopyStart || op == HloOpcode::kAsyncStart;
}

bool IsAsyncDone(HloOpcode op) {
  return op == HloOpcode::kAllReduceDone || op == HloOpcode::kAllGatherDone ||
         op == HloOpcode::kCollectivePermuteDone || op == HloOpcode::kCopyDone || op == HloOpcode::kAsyncDone;
}

// Instructions whose result is (part of) an operand's buffer: they define
// no bytes of their own. Dones and updates hand on their start's buffer.
bool IsView(HloOpcode op) {
  return op == HloOpcode::kGetTupleElement || op == HloOpcode::kTuple || op == HloOpcode::kBitcast ||
         op == HloOpcode::kOptimizationBarrier || op == HloOpcode::kDomain || op == HloOpcode::kAddDependency ||
         op == HloOpcode::kAsyncUpdate || IsAsyncDone(op);
}

// Instructions that cost nothing at run time (no kernel).
bool IsFree(HloOpcode op) {
  return IsView(op) || op == HloOpcode::kParameter || op == HloOpcode::kConstant || op == HloOpcode::kAfterAll ||
         op == HloOpcode::kPartitionId || op == HloOpcode::kReplicaId;
}

// The streams asynchronous work runs on besides the compute stream: one
// per collective kind (as XLA's scheduler keeps one resource per kind),
// host copies, and other asynchronous computations.
enum class Stream { kAllReduce = 0, kAllGather, kCollectivePermute, kOtherCollective, kCopy, kAsync };
constexpr int kStreamCount = 6;

// The done ending `start`'s chain (start -> async-update* -> done).
const HloInstruction* DoneOf(const HloInstruction* start) {
  const HloInstruction* current = start;
  while (true) {
    const HloInstruction* next = nullptr;
    for (const HloInstruction* user : current->users()) {
      if (IsAsyncDone(user->opcode()) || user->opcode() == HloOpcode::kAsyncUpdate) {
        next = user;
        break;
      }
    }
    if (next == nullptr) return nullptr;
    if (IsAsyncDone(next->opcode())) return next;
    current = next;
  }
}

Stream StreamOf(const HloInstruction& start) {
  HloOpcode op = start.opcode();
  if (op == HloOpcode::kAsyncStart) {
    const HloInstruction* wrapped = start.async_wrapped_instruction();
    if (wrapped == nullptr || !IsCollectiveOpcode(wrapped->opcode())) return Stream::kAsync;
    op = wrapped->opcode();
  }
  if (op == HloOpcode::kCopyStart) return Stream::kCopy;
  if (op == HloOpcode::kAllReduceStart || op == HloOpcode::kAllReduce) return Stream::kAllReduce;
  if (op == HloOpcode::kAllGatherStart || op == HloOpcode::kAllGather) return Stream::kAllGather;
  if (op == HloOpcode::kCollectivePermuteStart || op == HloOpcode::kCollectivePermute) {
    return Stream::kCollectivePermute;
  }
  return Stream::kOtherCollective;
}

bool IsCollectiveStream(Stream s) { return s != Stream::kCopy && s != Stream::kAsync; }

// Kernel costs in ns: launch + max(bytes / bandwidth, flops / throughput);
// control flow costs its callees once (trip counts are unknown).
class CostModel {
 public:
  explicit CostModel(const LatencyHidingSchedulerOptions& options) : options_(options) {}

  double InstructionCost(const HloInstruction& inst) {
    HloOpcode op = inst.opcode();
    if (IsFree(op)) return 0;
    if (IsAsyncStart(op)) return options_.kernel_launch_ns;  // the issue
    if (op == HloOpcode::kWhile) return ComputationCost(*inst.while_condition()) + ComputationCost(*inst.while_body());
    if (op == HloOpcode::kConditional) {
      double most = 0;
      for (const HloComputation* branch : inst.called_computations()) most = std::max(most, ComputationCost(*branch));
      return most;
    }
    if (op == HloOpcode::kCall) return ComputationCost(*inst.to_apply());
    return KernelCost(inst);
  }

  // Start to done, on the start's stream.
  double AsyncLatency(const HloInstruction& start, const HloInstruction& done) {
    double bytes = static_cast<double>(done.shape().total_leaf_bytes());
    Stream stream = StreamOf(start);
    if (IsCollectiveStream(stream)) return options_.collective_latency_ns + bytes / options_.collective_bytes_per_ns;
    if (stream == Stream::kCopy) return options_.copy_latency_ns + bytes / options_.copy_bytes_per_ns;
    const HloInstruction* wrapped = start.async_wrapped_instruction();
    return wrapped == nullptr ? options_.kernel_launch_ns : InstructionCost(*wrapped);
  }

 private:
  double KernelCost(const HloInstruction& inst) const {
    double bytes = static_cast<double>(inst.shape().total_leaf_bytes());
    for (const HloInstruction* operand : inst.operands()) {
      bytes += static_cast<double>(operand->shape().total_leaf_bytes());
    }
    double memory_ns = bytes / options_.memory_bytes_per_ns;
    double compute_ns = Flops(inst) / options_.flops_per_ns;
    return options_.kernel_launch_ns + std::max(memory_ns, compute_ns);
  }

  static double Flops(const HloInstruction& inst) {
    HloOpcode op = inst.opcode();
    if (op == HloOpcode::kFusion) {
      double flops = 0;
      for (const HloInstruction* fused : inst.fused_instructions_computation()->instructions()) flops += Flops(*fused);
      return flops;
    }
    if (!inst.shape().IsArray() || IsFree(op)) return 0;
    double out = static_cast<double>(inst.shape().element_count());
    if (op == HloOpcode::kDot) {
      // 2 * M * N * K: one multiply-add per output element and contracted index.
      double k = 1;
      for (int64_t d : inst.attrs().dot_dnums.lhs_contracting_dimensions) {
        k *= static_cast<double>(inst.operand(0)->shape().dimensions(d));
      }
      return 2 * out * k;
    }
    if (op == HloOpcode::kConvolution && inst.attrs().conv_dnums.has_value()) {
      // 2 * output elements * (kernel elements per output feature).
      const Shape& kernel = inst.operand(1)->shape();
      int64_t feature_dimension = inst.attrs().conv_dnums->kernel_output_feature_dimension;
      double features = static_cast<double>(kernel.dimensions(feature_dimension));
      return features == 0 ? 0 : 2 * out * static_cast<double>(kernel.element_count()) / features;
    }
    if (op == HloOpcode::kReduce || op == HloOpcode::kReduceWindow) {
      return static_cast<double>(inst.operand(0)->shape().IsArray() ? inst.operand(0)->shape().element_count() : 0);
    }
    return out;
  }

  double ComputationCost(const HloComputation& c) {
    auto it = computation_costs_.find(&c);
    if (it != computation_costs_.end()) return it->second;
    double total = 0;
    for (const HloInstruction* inst : c.instructions()) total += InstructionCost(*inst);
    computation_costs_[&c] = total;
    return total;
  }

  const LatencyHidingSchedulerOptions& options_;
  absl::flat_hash_map<const HloComputation*, double> computation_costs_;
};

// One computation as the scheduler sees it: nodes in post order with
// dependencies, costs, async pairing and buffer use.
struct Node {
  HloInstruction* inst = nullptr;
  std::vector<int> preds;
  std::vector<int> succs;
  double cost = 0;
  int done = -1;   // a start: its done
  int start = -1;  // a done: its start
  Stream stream = Stream::kAsync;
  double latency = 0;
  int64_t defined_bytes = 0;    // bytes of the buffer this node defines
  std::vector<int> sources;     // buffers (defining nodes) its value lives in
  std::vector<int> uses;        // buffers it reads (views read nothing)
  bool feeds_start = false;     // a transitive operand of some start
};

struct Graph {
  std::vector<Node> nodes;
  absl::flat_hash_map<const HloInstruction*, int> index;
  std::vector<int> use_count;  // per buffer: nodes reading it
  std::vector<bool> live_out;  // per buffer: part of the root's value
};

void AddUnique(std::vector<int>& v, int x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// The instructions, operands and control predecessors first, in the order
// of a walk from each instruction in insertion order: the order the list
// scheduler breaks ties by (the incoming sequence where it already is one).
std::vector<HloInstruction*> InsertionPostOrder(const HloComputation& computation) {
  std::vector<HloInstruction*> order;
  absl::flat_hash_set<const HloInstruction*> seen;
  std::vector<std::pair<HloInstruction*, size_t>> stack;
  for (HloInstruction* start : computation.instructions()) {
    if (!seen.insert(start).second) continue;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      auto& [inst, k] = stack.back();
      const size_t operands = inst->operands().size();
      HloInstruction* dep = nullptr;
      if (k < operands) {
        dep = inst->operands()[k];
      } else if (k - operands < inst->control_predecessors().size()) {
        dep = inst->control_predecessors()[k - operands];
      }
      if (dep == nullptr) {
        order.push_back(inst);
        stack.pop_back();
        continue;
      }
      ++k;
      if (dep->parent() == &computation && seen.insert(dep).second) stack.push_back({dep, 0});
    }
  }
  return order;
}

Graph BuildGraph(const HloComputation& computation, CostModel& costs) {
  Graph g;
  std::vector<HloInstruction*> order = InsertionPostOrder(computation);
  g.nodes.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    g.nodes[i].inst = order[i];
    g.index[order[i]] = static_cast<int>(i);
  }
  int previous_side_effect = -1;
  for (size_t i = 0; i < order.size(); ++i) {
    Node& n = g.nodes[i];
    const HloInstruction& inst = *n.inst;
    for (const HloInstruction* operand : inst.operands()) AddUnique(n.preds, g.index.at(operand));
    for (const HloInstruction* pred : inst.control_predecessors()) {
      auto it = g.index.find(pred);
      if (it != g.index.end()) AddUnique(n.preds, it->second);
    }
    // Ordered side effects (send/recv, infeed/outfeed, rng, side-effecting
    // custom calls) keep their relative order; async collectives are paired
    // by their data edges.
    HloOpcode op = inst.opcode();
    if (inst.HasSideEffect() && !IsAsyncStart(op) && !IsAsyncDone(op) && op != HloOpcode::kAsyncUpdate) {
      if (previous_side_effect >= 0) AddUnique(n.preds, previous_side_effect);
      previous_side_effect = static_cast<int>(i);
    }
    for (int p : n.preds) g.nodes[p].succs.push_back(static_cast<int>(i));
    n.cost = costs.InstructionCost(inst);
    if (IsAsyncStart(op)) {
      const HloInstruction* done = DoneOf(&inst);
      if (done != nullptr && g.index.contains(done)) {
        n.done = g.index.at(done);
        g.nodes[n.done].start = static_cast<int>(i);
        n.stream = StreamOf(inst);
        n.latency = costs.AsyncLatency(inst, *done);
      }
    }
  }
  // Buffers: every non-view node but parameters and constants defines one
  // (a start the size of its done's result); views live in their
  // operands' buffers.
  g.use_count.assign(order.size(), 0);
  g.live_out.assign(order.size(), false);
  for (size_t i = 0; i < order.size(); ++i) {
    Node& n = g.nodes[i];
    HloOpcode op = n.inst->opcode();
    if (IsView(op)) {
      for (const HloInstruction* operand : n.inst->operands()) {
        for (int s : g.nodes[g.index.at(operand)].sources) AddUnique(n.sources, s);
      }
      continue;
    }
    if (op != HloOpcode::kParameter && op != HloOpcode::kConstant) {
      const Shape& shape = n.done >= 0 ? g.nodes[n.done].inst->shape() : n.inst->shape();
      n.defined_bytes = shape.total_leaf_bytes();
      n.sources = {static_cast<int>(i)};
    }
    for (const HloInstruction* operand : n.inst->operands()) {
      for (int s : g.nodes[g.index.at(operand)].sources) AddUnique(n.uses, s);
    }
    for (int s : n.uses) ++g.use_count[s];
  }
  for (int s : g.nodes[g.index.at(computation.root_instruction())].sources) g.live_out[s] = true;
  // Transitive operands of starts: issuing those starts early needs them.
  std::vector<int> stack;
  for (const Node& n : g.nodes) {
    if (n.done >= 0) stack.insert(stack.end(), n.preds.begin(), n.preds.end());
  }
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    if (g.nodes[i].feeds_start) continue;
    g.nodes[i].feeds_start = true;
    stack.insert(stack.end(), g.nodes[i].preds.begin(), g.nodes[i].preds.end());
  }
  return g;
}

// Runs a sequence on the model: one compute stream, async work on the
// starts' streams (serialized per stream), live bytes per step.
class Simulation {
 public:
  explicit Simulation(const Graph& g)
      : g_(g), remaining_uses_(g.use_count), issued_(g.nodes.size(), 0), completion_(g.nodes.size(), 0) {}

  void Step(int i) {
    const Node& n = g_.nodes[i];
    if (n.done >= 0) {
      now_ += n.cost;
      int s = static_cast<int>(n.stream);
      issued_[i] = now_;
      completion_[i] = std::max(now_, stream_free_[s]) + n.latency;
      stream_free_[s] = completion_[i];
      ++in_flight_[s];
      ++open_pairs_;
    } else if (n.start >= 0) {
      const Node& start = g_.nodes[n.start];
      double wait = std::max(0.0, completion_[n.start] - now_);
      estimate_.exposed_ns += wait;
      estimate_.hidden_ns += std::max(0.0, std::min(start.latency, now_ - issued_[n.start]));
      now_ += wait;
      --in_flight_[static_cast<int>(start.stream)];
      --open_pairs_;
    } else {
      now_ += n.cost;
      if (open_pairs_ > 0 && n.cost > 0) ++estimate_.overlapped_instructions;
    }
    live_ += n.defined_bytes;
    estimate_.peak_live_bytes = std::max(estimate_.peak_live_bytes, live_);
    estimate_.live_bytes.push_back(live_);
    for (int s : n.uses) {
      if (--remaining_uses_[s] == 0 && !g_.live_out[s]) live_ -= g_.nodes[s].defined_bytes;
    }
    if (g_.use_count[i] == 0 && !g_.live_out[i]) live_ -= n.defined_bytes;  // dead on arrival
  }

  // Live bytes scheduling `i` now would add (negative: it frees more).
  int64_t MemoryDelta(int i) const {
    const Node& n = g_.nodes[i];
    int64_t delta = g_.use_count[i] == 0 && !g_.live_out[i] ? 0 : n.defined_bytes;
    for (int s : n.uses) {
      if (remaining_uses_[s] == 1 && !g_.live_out[s]) delta -= g_.nodes[s].defined_bytes;
    }
    return delta;
  }

  double now() const { return now_; }
  int64_t live_bytes() const { return live_; }
  double completion(int start) const { return completion_[start]; }
  int64_t in_flight(Stream s) const { return in_flight_[static_cast<int>(s)]; }
  ScheduleEstimate Finish() {
    estimate_.total_ns = now_;
    return estimate_;
  }

 private:
  const Graph& g_;
  std::vector<int> remaining_uses_;
  std::vector<double> issued_;
  std::vector<double> completion_;
  std::array<double, kStreamCount> stream_free_{};
  std::array<int64_t, kStreamCount> in_flight_{};
  int64_t open_pairs_ = 0;
  double now_ = 0;
  int64_t live_ = 0;
  ScheduleEstimate estimate_;
};

ScheduleEstimate Estimate(const Graph& g, absl::Span<HloInstruction* const> sequence) {
  Simulation sim(g);
  for (HloInstruction* inst : sequence) sim.Step(g.index.at(inst));
  return sim.Finish();
}

// The list schedule. Candidates rank by class, then two keys, then their
// post-order position (so ties keep the incoming order):
//   0: a done whose latency has elapsed (frees its buffers, unblocks users)
//   1: a start whose stream has room (issued as early as possible)
//   2: other work: what feeds a pending start first, then what frees the
//      most bytes (memory first once live bytes exceed the limit)
//   3: a done still in flight (the clock waits for it), earliest first
//   4: a start whose stream is full
std::vector<HloInstruction*> ListSchedule(const Graph& g, const LatencyHidingSchedulerOptions& options,
                                          int64_t memory_limit) {
  using Rank = std::tuple<int, double, double, int>;
  Simulation sim(g);
  std::vector<int> pending(g.nodes.size());
  std::vector<int> ready;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    pending[i] = static_cast<int>(g.nodes[i].preds.size());
    if (pending[i] == 0) ready.push_back(static_cast<int>(i));
  }
  auto rank = [&](int i) -> Rank {
    const Node& n = g.nodes[i];
    bool over_limit = sim.live_bytes() > memory_limit;
    if (n.start >= 0) {
      double completion = sim.completion(n.start);
      return {completion <= sim.now() ? 0 : 3, completion, 0, i};
    }
    if (n.done >= 0 && sim.in_flight(n.stream) >= options.max_in_flight_per_stream) return {4, 0, 0, i};
    if (n.done >= 0 && !over_limit) return {1, 0, 0, i};
    double delta = static_cast<double>(sim.MemoryDelta(i));
    double not_feeding = n.feeds_start ? 0 : 1;
    return over_limit ? Rank{2, delta, not_feeding, i} : Rank{2, not_feeding, delta, i};
  };
  std::vector<HloInstruction*> sequence;
  sequence.reserve(g.nodes.size());
  while (!ready.empty()) {
    size_t best = 0;
    Rank best_rank = rank(ready[0]);
    for (size_t k = 1; k < ready.size(); ++k) {
      Rank r = rank(ready[k]);
      if (r < best_rank) {
        best = k;
        best_rank = r;
      }
    }
    int i = ready[best];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    sim.Step(i);
    sequence.push_back(g.nodes[i].inst);
    for (int s : g.nodes[i].succs) {
      if (--pending[s] == 0) ready.push_back(s);
    }
  }
  return sequence;
}

// Whether `a` beats `b`: fewer bytes over the limit, then less time (sums
// in another order may differ in the last bits: those are ties), then a
// lower peak.
bool Better(const ScheduleEstimate& a, const ScheduleEstimate& b, int64_t memory_limit) {
  int64_t a_over = std::max<int64_t>(0, a.peak_live_bytes - memory_limit);
  int64_t b_over = std::max<int64_t>(0, b.peak_live_bytes - memory_limit);
  if (a_over != b_over) return a_over < b_over;
  double tolerance = 1e-9 * std::max(a.total_ns, b.total_ns);
  if (std::abs(a.total_ns - b.total_ns) > tolerance) return a.total_ns < b.total_ns;
  return a.peak_live_bytes < b.peak_live_bytes;
}

int64_t MemoryLimit(const ScheduleEstimate& incoming, const LatencyHidingSchedulerOptions& options) {
  if (options.memory_limit_bytes > 0) return options.memory_limit_bytes;
  return static_cast<int64_t>(static_cast<double>(incoming.peak_live_bytes) * options.peak_growth_limit);
}

}  // namespace

ScheduleEstimate EstimateSchedule(const HloComputation& computation, absl::Span<HloInstruction* const> sequence,
                                  const LatencyHidingSchedulerOptions& options) {
  CostModel costs(options);
  return Estimate(BuildGraph(computation, costs), sequence);
}

std::vector<HloInstruction*> ScheduleComputation(const HloComputation& computation,
                                                 const LatencyHidingSchedulerOptions& options) {
  CostModel costs(options);
  Graph g = BuildGraph(computation, costs);
  std::vector<HloInstruction*> incoming = InsertionPostOrder(computation);
  ScheduleEstimate before = Estimate(g, incoming);
  int64_t limit = MemoryLimit(before, options);
  std::vector<HloInstruction*> scheduled = ListSchedule(g, options, limit);
  // Every edge points forward in the post order: all instructions get placed.
  assert(scheduled.size() == incoming.size());
  ScheduleEstimate after = Estimate(g, scheduled);
  return Better(after, before, limit) ? scheduled : incoming;
}

absl::StatusOr<bool> LatencyHidingScheduler::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    std::vector<HloInstruction*> sequence = ScheduleComputation(*c, options_);
    ScheduleEstimate estimate = EstimateSchedule(*c, sequence, options_);
    if (estimate.overlapped_instructions > 0) {
      BumpCounter("instructions overlapped with async ops", estimate.overlapped_instructions);
    }
    if (estimate.hidden_ns >= 1) {
      BumpCounter("estimated ns of async latency hidden", static_cast<int64_t>(estimate.hidden_ns));
    }
    ASSIGN_OR_RETURN(bool reordered, ApplySequence(*c, sequence, *this));
    changed |= reordered;
  }
  changed |= MarkModuleScheduled(module);
  return changed;
}

}  // namespace passlab
