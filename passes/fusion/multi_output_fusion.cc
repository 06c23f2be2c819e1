#include "passes/fusion/multi_output_fusion.h"

#include "absl/container/flat_hash_map.h"
#include "passes/fusion/gpu_fusible.h"

namespace passlab {
namespace {

// A kernel that may become (or already is) a multi-output fusion root.
bool IsMultiOutputCandidate(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kFusion) return IsFusibleFusion(h);
  if (h.operand_count() == 0) return false;
  return IsFusibleReduce(h) || (IsLoopFusibleOp(h) && h.IsElementwise());
}

absl::StatusOr<HloInstruction*> AsFusion(HloInstruction* h) {
  if (h->opcode() == HloOpcode::kFusion) return h;
  return WrapInFusion(h, KindForRoot(*h));
}

class MultiOutputFuser {
 public:
  explicit MultiOutputFuser(HloPassInterface& pass) : pass_(pass) {}

  absl::StatusOr<bool> RunOnComputation(HloComputation& computation) {
    bool changed = false;
    for (bool siblings : {true, false}) {
      absl::flat_hash_map<int64_t, HloInstruction*> live;
      std::vector<int64_t> order;
      for (HloInstruction* h : computation.MakeInstructionPostOrder()) {
        live[h->unique_id()] = h;
        order.push_back(h->unique_id());
      }
      computation.set_removal_listener([&](const HloInstruction* h) { live.erase(h->unique_id()); });
      ReachabilityQuery reachability(computation);
      reachability_ = &reachability;
      absl::StatusOr<bool> c = false;
      for (int64_t id : order) {
        auto found = live.find(id);
        if (found == live.end()) continue;
        c = siblings ? FuseSiblings(found->second) : FuseProducerIntoConsumer(found->second);
        if (!c.ok()) break;
        if (*c) reachability.Invalidate();
        changed |= *c;
      }
      reachability_ = nullptr;
      computation.set_removal_listener(nullptr);
      if (!c.ok()) return c.status();
    }
    return changed;
  }

 private:
  // Fuses the users of `parent` that iterate alike, pairwise.
  absl::StatusOr<bool> FuseSiblings(HloInstruction* parent) {
    bool changed = false;
    std::vector<HloInstruction*> users;
    for (HloInstruction* u : parent->users()) {
      if (IsMultiOutputCandidate(*u)) users.push_back(u);
    }
    for (size_t i = 0; i < users.size(); ++i) {
      if (users[i] == nullptr) continue;
      for (size_t j = i + 1; j < users.size(); ++j) {
        if (users[j] == nullptr) continue;
        HloInstruction* a = users[i];
        HloInstruction* b = users[j];
        if (!SameIterationSpace(*a, *b) || !WithinMultiOutputLimits(*a, *b)) continue;
        if (reachability_->Reaches(a, b) || reachability_->Reaches(b, a)) continue;
        absl::StatusOr<HloInstruction*> fusion = AsFusion(a);
        if (!fusion.ok()) return fusion.status();
        if (absl::Status s = MergeSibling(*fusion, b); !s.ok()) return s;
        users[i] = *fusion;
        users[j] = nullptr;
        reachability_->Invalidate();
        pass_.BumpCounter("sibling fused");
        changed = true;
      }
    }
    return changed;
  }

  // Fuses one producer of `consumer` whose value is also used elsewhere.
  absl::StatusOr<bool> FuseProducerIntoConsumer(HloInstruction* consumer) {
    if (!IsMultiOutputCandidate(*consumer)) return false;
    for (HloInstruction* producer : consumer->operands()) {
      if (!IsFusibleProducer(*producer) || (producer->user_count() < 2 && !producer->IsRoot())) continue;
      if (producer->shape().dimensions() != IterationShape(*consumer).dimensions()) continue;
      bool reduction = ReductionHero(*consumer) != nullptr;
      if (reduction && IsExpensive(*producer)) continue;
      if (!reduction && !OutputsHaveDimensions(*consumer, producer->shape().dimensions())) continue;
      if (!WithinMultiOutputLimits(*consumer, *producer)) continue;
      bool cycle = false;
      for (const HloInstruction* other : producer->users()) {
        if (other != consumer && reachability_->Reaches(other, consumer)) cycle = true;
      }
      if (cycle) continue;
      absl::StatusOr<HloInstruction*> fusion = AsFusion(consumer);
      if (!fusion.ok()) return fusion.status();
      if (absl::Status s = FuseProducer(*fusion, producer, /*multi_output=*/true); !s.ok()) return s;
      pass_.BumpCounter("producer fused as an extra output");
      return true;
    }
    return false;
  }

  HloPassInterface& pass_;
  ReachabilityQuery* reachability_ = nullptr;
};

}  // namespace

absl::StatusOr<bool> GpuMultiOutputFusion::RunImpl(HloModule& module, PassRunContext*) {
  MultiOutputFuser fuser(*this);
  bool changed = false;
  for (HloComputation* computation : ProgramComputations(module)) {
    absl::StatusOr<bool> c = fuser.RunOnComputation(*computation);
    if (!c.ok()) return c.status();
    changed |= *c;
  }
  return changed;
}

}  // namespace passlab
