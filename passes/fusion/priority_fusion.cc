#include "passes/fusion/priority_fusion.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/fusion/gpu_fusible.h"

namespace passlab {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// XLA: a reduction with fewer elements per output than this is emitted by
// the loop emitter, so it does not count as a reduce kernel.
constexpr int64_t kMinSignificantReductionSize = 16;

bool IsPlain(const HloInstruction& h) {
  return !h.HasSideEffect() && h.control_predecessors().empty() && h.control_successors().empty();
}

// Bitcasts are free when they keep the element width (XLA: IsFusibleBitcast).
bool IsFusibleBitcast(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kBitcast && h.shape().IsArray() && h.operand(0)->shape().IsArray() &&
         PrimitiveBitWidth(h.shape().element_type()) == PrimitiveBitWidth(h.operand(0)->shape().element_type());
}

bool IsFusibleReduceWindow(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kReduceWindow && IsFusibleConsumer(h);
}

// An op the CPU emitters compile inside a fusion.
bool IsFusibleOp(const HloInstruction& h) {
  return IsLoopFusibleOp(h) || IsFusibleReduce(h) || IsFusibleReduceWindow(h);
}

// A loop or input fusion of such ops (reduces anywhere in it: the emitters
// compute them elementally), editable on its own.
bool IsFusibleFusionInstruction(const HloInstruction& h) {
  if (h.fusion_kind() != FusionKind::kLoop && h.fusion_kind() != FusionKind::kInput) return false;
  if (!h.attrs().output_to_operand_aliasing.empty()) return false;
  const HloComputation* body = h.fused_instructions_computation();
  if (body->FusionInstruction() != &h) return false;
  for (const HloInstruction* operand : h.operands()) {
    if (!IsEmittableArrayShape(operand->shape())) return false;
  }
  for (const HloInstruction* i : body->instructions()) {
    if (i->opcode() == HloOpcode::kParameter) {
      if (!IsEmittableArrayShape(i->shape())) return false;
    } else if (i->opcode() == HloOpcode::kTuple) {
      if (!i->IsRoot()) return false;
    } else if (!IsFusibleOp(*i)) {
      return false;
    }
  }
  return true;
}

// XLA's IsFusible (priority_fusion.cc), within what the backend compiles.
bool IsFusible(const HloInstruction& h) {
  if (!IsPlain(h)) return false;
  if (h.opcode() == HloOpcode::kFusion) return IsFusibleFusionInstruction(h);
  return IsFusibleOp(h);
}

// Whether a kernel holds a reduce of at least kMinSignificantReductionSize
// elements per output.
bool ContainsSignificantReduce(const HloInstruction& h) {
  auto significant = [](const HloInstruction& r) {
    if (r.opcode() != HloOpcode::kReduce || !r.shape().IsArray()) return false;
    const int64_t out = std::max<int64_t>(r.shape().element_count(), 1);
    return r.operand(0)->shape().element_count() / out >= kMinSignificantReductionSize;
  };
  if (h.opcode() != HloOpcode::kFusion) return significant(h);
  for (const HloInstruction* i : h.fused_instructions_computation()->instructions()) {
    if (significant(*i)) return true;
  }
  return false;
}

FusionKind KindFor(KernelEmitterKind kind) {
  return kind == KernelEmitterKind::kLoop ? FusionKind::kLoop : FusionKind::kInput;
}

class PriorityFusionQueue {
 public:
  PriorityFusionQueue(HloComputation& computation, GpuPerformanceModel& model, HloPassInterface& pass)
      : computation_(computation), model_(model), pass_(pass) {}

  absl::StatusOr<bool> Run() {
    computation_.set_removal_listener([this](const HloInstruction* h) { Forget(h); });
    absl::StatusOr<bool> changed = RunQueue();
    computation_.set_removal_listener(nullptr);
    return changed;
  }

 private:
  absl::StatusOr<bool> RunQueue() {
    std::vector<HloInstruction*> candidates;
    for (HloInstruction* h : computation_.MakeInstructionPostOrder()) {
      if (h->opcode() == HloOpcode::kParameter || h->user_count() == 0 || !IsPlain(*h) ||
          h->opcode() == HloOpcode::kTuple || h->opcode() == HloOpcode::kGetTupleElement) {
        continue;
      }
      candidates.push_back(h);
    }
    SetPriorities(candidates);

    bool changed = false;
    while (!queue_.empty()) {
      auto top = std::prev(queue_.end());
      HloInstruction* producer = top->second;
      queue_.erase(top);
      reverse_.erase(producer);

      std::vector<HloInstruction*> consumers = producer->users();
      if (IsFusibleBitcast(*producer)) {
        // A bitcast's priority does not check its users: do it here.
        consumers.erase(std::remove_if(consumers.begin(), consumers.end(),
                                       [&](HloInstruction* c) { return !CanFuse(*producer, *c).empty(); }),
                        consumers.end());
      }
      if (consumers.empty()) continue;

      current_producer_ = producer;
      producer_removed_ = false;
      for (HloInstruction* consumer : consumers) {
        // Lone bitcast users are left alone (CanFuseWithAllNonBitcastUsers
        // ignored them).
        if (IsFusibleBitcast(*consumer)) continue;
        ASSIGN_OR_RETURN(HloInstruction* fusion, Fuse(producer, consumer));
        pass_.BumpCounter(consumers.size() > 1 ? "producer fused into several consumers" : "producer fused");
        changed = true;
        OnFused(fusion, producer);
        if (producer_removed_) break;
      }
      current_producer_ = nullptr;
      if (!producer_removed_ && producer->user_count() == 0 && !producer->IsRoot()) {
        RETURN_IF_ERROR(computation_.RemoveInstruction(producer));
      }
      UpdatePriorities();
    }

    // Small constants last: the cost model does not price them well, and
    // they are free to duplicate (XLA fuses every one it can).
    std::vector<HloInstruction*> constants;
    for (HloInstruction* h : computation_.MakeInstructionPostOrder()) {
      if (h->opcode() == HloOpcode::kConstant && h->shape().IsArray() && h->shape().element_count() <= 1) {
        constants.push_back(h);
      }
    }
    for (HloInstruction* constant : constants) {
      if (!IsFusible(*constant)) continue;
      const bool is_root = constant->IsRoot();
      std::vector<HloInstruction*> users = constant->users();
      for (size_t i = 0; i < users.size(); ++i) {
        if (!IsFusible(*users[i])) continue;
        // The last fusion removes an unused constant: do not touch it after.
        const bool last = !is_root && constant->user_count() == 1;
        ASSIGN_OR_RETURN(HloInstruction* fusion, Fuse(constant, users[i]));
        pass_.BumpCounter("constant fused");
        changed = true;
        if (last) break;
      }
    }
    return changed;
  }

  // Why `producer` cannot be fused into `consumer` ("" when it can).
  std::string CanFuse(const HloInstruction& producer, const HloInstruction& consumer) {
    if (producer.IsRoot()) return "not fusing into the output of the root instruction";
    if (!IsFusible(producer)) return "the producer is not fusible";
    if (!IsFusible(consumer)) return "the consumer is not fusible";
    if (IsFusibleBitcast(consumer)) return "not fusing into a single bitcast as consumer";
    if (ContainsSignificantReduce(producer) && ContainsSignificantReduce(consumer)) {
      return "both the producer and the consumer contain a reduce";
    }
    if (EmitterKindOf(nullptr, producer) == KernelEmitterKind::kReduction &&
        EmitterKindOf(&producer, consumer) == KernelEmitterKind::kLoop) {
      return "fusion into output of a reduce fusion would create a loop fusion";
    }
    if (MergedOperandCount(consumer, producer) + OutputCount(consumer) > kMaxOperandsAndOutputsPerFusion) {
      return "the fusion would have too many operands and outputs";
    }
    if (FusedInstructionCount(consumer) + FusedInstructionCount(producer) > kMaxInstructionsPerFusion) {
      return "the fusion would be too large";
    }
    if (model_.ProducerConsumerMergedTooLarge(producer, consumer)) {
      return "the fusion would result in an overly large code duplication";
    }
    return "";
  }

  // XLA: CanFuseWithAllNonBitcastUsers.
  std::string CanFuseWithAllNonBitcastUsers(const HloInstruction& producer) {
    if (producer.users().empty()) return "no users to fuse";
    bool has_non_bitcast_user = false;
    for (const HloInstruction* user : producer.users()) {
      if (IsFusibleBitcast(*user)) continue;
      has_non_bitcast_user = true;
      if (std::string why = CanFuse(producer, *user); !why.empty()) return why;
    }
    if (!has_non_bitcast_user) return "not fusing because there are only bitcast users";
    return "";
  }

  double Priority(HloInstruction& producer) {
    if (IsFusibleBitcast(producer)) return kInfinity;  // free: always first
    if (producer.opcode() == HloOpcode::kConstant) return -kInfinity;  // fused at the end
    if (!CanFuseWithAllNonBitcastUsers(producer).empty()) return -kInfinity;
    GpuPerformanceModel::RunTimes t = model_.EstimateRunTimes(producer, producer.users());
    // Whole picoseconds (XLA keeps priorities as absl::Duration): equal
    // estimates stay equal whatever order their sums were taken in, so ties
    // fall to the unique id.
    return std::round((t.time_unfused - t.time_fused) * 1e12) / 1e12;
  }

  void SetPriorities(const std::vector<HloInstruction*>& instructions) {
    for (HloInstruction* h : instructions) {
      auto old = reverse_.find(h);
      if (old != reverse_.end()) {
        queue_.erase(old->second);
        reverse_.erase(old);
      }
      const double priority = Priority(*h);
      if (priority < 0) continue;  // fusing would not help
      reverse_[h] = queue_.emplace(std::make_pair(priority, h->unique_id()), h).first;
    }
  }

  absl::StatusOr<HloInstruction*> Fuse(HloInstruction* producer, HloInstruction* consumer) {
    const FusionKind kind = KindFor(EmitterKindOf(producer, *consumer));
    HloInstruction* fusion = consumer;
    if (fusion->opcode() != HloOpcode::kFusion) {
      ASSIGN_OR_RETURN(HloInstruction* wrapped, WrapInFusion(consumer, kind));
      fusion = wrapped;
    } else {
      model_.Invalidate(fusion);
      if (fusion->fusion_kind() != kind) fusion->set_fusion_kind(kind);
    }
    RETURN_IF_ERROR(FuseProducer(fusion, producer, /*multi_output=*/false));
    model_.Invalidate(fusion);
    return fusion;
  }

  // The new fusion and its operands get new priorities.
  void OnFused(HloInstruction* fusion, const HloInstruction* producer) {
    for (HloInstruction* operand : fusion->operands()) {
      if (operand == producer || operand->opcode() == HloOpcode::kConstant ||
          operand->opcode() == HloOpcode::kGetTupleElement || operand->opcode() == HloOpcode::kParameter ||
          !IsPlain(*operand)) {
        continue;
      }
      AddToUpdate(operand);
    }
    AddToUpdate(fusion);
  }

  void AddToUpdate(HloInstruction* h) {
    if (to_update_set_.insert(h).second) to_update_.push_back(h);
  }

  void UpdatePriorities() {
    std::vector<HloInstruction*> update;
    for (HloInstruction* h : to_update_) {
      if (to_update_set_.contains(h)) update.push_back(h);
    }
    to_update_.clear();
    to_update_set_.clear();
    std::sort(update.begin(), update.end(),
              [](const HloInstruction* a, const HloInstruction* b) { return a->unique_id() < b->unique_id(); });
    for (HloInstruction* h : update) model_.Invalidate(h);
    SetPriorities(update);
  }

  // Called just before `h` is removed from the computation.
  void Forget(const HloInstruction* h) {
    auto it = reverse_.find(const_cast<HloInstruction*>(h));
    if (it != reverse_.end()) {
      queue_.erase(it->second);
      reverse_.erase(it);
    }
    to_update_set_.erase(const_cast<HloInstruction*>(h));
    model_.Invalidate(h);
    if (h == current_producer_) producer_removed_ = true;
  }

  HloComputation& computation_;
  GpuPerformanceModel& model_;
  HloPassInterface& pass_;
  // Ordered by (priority, unique id): the last entry is fused next.
  using Queue = std::map<std::pair<double, int64_t>, HloInstruction*>;
  Queue queue_;
  absl::flat_hash_map<HloInstruction*, Queue::iterator> reverse_;
  std::vector<HloInstruction*> to_update_;
  absl::flat_hash_set<HloInstruction*> to_update_set_;
  const HloInstruction* current_producer_ = nullptr;
  bool producer_removed_ = false;
};

}  // namespace

absl::StatusOr<bool> PriorityFusion::RunImpl(HloModule& module, PassRunContext*) {
  absl::StatusOr<DeviceDescription> device = DeviceByName(options_.device);
  if (!device.ok()) return absl::InvalidArgumentError(StrCat("priority-fusion: ", std::string(device.status().message())));
  GpuPerformanceModel model(*device);
  bool changed = false;
  for (HloComputation* computation : ProgramComputations(module)) {
    PriorityFusionQueue queue(*computation, model, *this);
    ASSIGN_OR_RETURN(bool c, queue.Run());
    changed |= c;
  }
  return changed;
}

}  // namespace passlab
