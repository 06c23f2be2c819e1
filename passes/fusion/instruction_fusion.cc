#include "passes/fusion/instruction_fusion.h"

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "passes/fusion/gpu_fusible.h"

namespace passlab {
namespace {

// Bytes of the producer's operands that the consumer does not read yet: what
// it would read in addition once the producer is fused into it.
int64_t AddedOperandBytes(const HloInstruction& consumer, const HloInstruction& producer) {
  absl::flat_hash_set<const HloInstruction*> counted;
  for (const HloInstruction* o : consumer.operands()) counted.insert(o);
  int64_t bytes = 0;
  for (const HloInstruction* o : producer.operands()) {
    if (counted.insert(o).second) bytes += o->shape().byte_size();
  }
  return bytes;
}

// Whether every use of `producer` is by `consumer` (so fusing it there
// removes it).
bool OnlyUsedBy(const HloInstruction& producer, const HloInstruction* consumer) {
  if (producer.IsRoot()) return false;
  for (const HloInstruction* u : producer.users()) {
    if (u != consumer) return false;
  }
  return true;
}

class Fuser {
 public:
  Fuser(const GpuInstructionFusionOptions& options, HloPassInterface& pass) : options_(options), pass_(pass) {}

  absl::StatusOr<bool> RunOnComputation(HloComputation& computation) {
    absl::flat_hash_map<int64_t, HloInstruction*> live;
    std::vector<int64_t> worklist;
    for (HloInstruction* h : computation.MakeInstructionPostOrder()) {
      live[h->unique_id()] = h;
      worklist.push_back(h->unique_id());
    }
    computation.set_removal_listener([&](const HloInstruction* h) { live.erase(h->unique_id()); });
    bool changed = false;
    absl::Status status;
    // Consumers before their producers: from the root up.
    for (auto it = worklist.rbegin(); it != worklist.rend() && status.ok(); ++it) {
      auto found = live.find(*it);
      if (found == live.end()) continue;
      HloInstruction* consumer = found->second;
      if (!IsFusibleConsumer(*consumer)) continue;
      while (status.ok()) {
        HloInstruction* producer = PickProducer(*consumer);
        if (producer == nullptr) break;
        absl::StatusOr<HloInstruction*> fused = Fuse(consumer, producer);
        if (!fused.ok()) {
          status = fused.status();
          break;
        }
        consumer = *fused;
        changed = true;
      }
    }
    computation.set_removal_listener(nullptr);
    if (!status.ok()) return status;
    return changed;
  }

 private:
  // The first operand (in operand order) worth fusing into `consumer`.
  HloInstruction* PickProducer(const HloInstruction& consumer) const {
    for (HloInstruction* producer : consumer.operands()) {
      if (ShouldFuse(consumer, *producer)) return producer;
    }
    return nullptr;
  }

  bool ShouldFuse(const HloInstruction& consumer, const HloInstruction& producer) const {
    if (!IsFusibleProducer(producer)) return false;
    bool expensive = IsExpensive(producer);
    if (!OnlyUsedBy(producer, &consumer)) {
      // The producer stays for its other users: fusing duplicates it.
      if (!options_.may_duplicate || expensive) return false;
      if (AddedOperandBytes(consumer, producer) > producer.shape().byte_size()) return false;
    }
    // An expensive value read several times per element would be
    // recomputed each time.
    if (expensive && ReusesOperandElements(consumer, &producer)) return false;
    if (MergedOperandCount(consumer, producer) + OutputCount(consumer) > kMaxOperandsAndOutputsPerFusion) {
      return false;
    }
    return FusedInstructionCount(consumer) + FusedInstructionCount(producer) <= kMaxInstructionsPerFusion;
  }

  absl::StatusOr<HloInstruction*> Fuse(HloInstruction* consumer, HloInstruction* producer) {
    bool duplicated = !OnlyUsedBy(*producer, consumer);
    if (consumer->opcode() != HloOpcode::kFusion) {
      ASSIGN_OR_RETURN(HloInstruction* wrapped, WrapInFusion(consumer, KindForRoot(*consumer)));
      consumer = wrapped;
    }
    RETURN_IF_ERROR(FuseProducer(consumer, producer, /*multi_output=*/false));
    pass_.BumpCounter(duplicated ? "producer duplicated into a consumer" : "producer fused");
    return consumer;
  }

  const GpuInstructionFusionOptions& options_;
  HloPassInterface& pass_;
};

}  // namespace

absl::StatusOr<bool> GpuInstructionFusion::RunImpl(HloModule& module, PassRunContext*) {
  Fuser fuser(options_, *this);
  bool changed = false;
  for (HloComputation* computation : ProgramComputations(module)) {
    ASSIGN_OR_RETURN(bool c, fuser.RunOnComputation(*computation));
    changed |= c;
  }
  return changed;
}

}  // namespace passlab
