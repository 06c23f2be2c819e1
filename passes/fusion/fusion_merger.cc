#include "passes/fusion/fusion_merger.h"

#include "absl/container/flat_hash_map.h"
#include "passes/fusion/gpu_fusible.h"

namespace passlab {
namespace {

int64_t OperandBytes(const HloInstruction& h, const HloInstruction* except = nullptr) {
  absl::flat_hash_set<const HloInstruction*> seen;
  int64_t bytes = 0;
  for (const HloInstruction* o : h.operands()) {
    if (o != except && seen.insert(o).second) bytes += o->shape().byte_size();
  }
  return bytes;
}

// Why `producer` cannot be merged into all its users, or "" if it can.
const char* CannotMerge(const HloInstruction& producer) {
  if (producer.opcode() != HloOpcode::kFusion || !IsFusibleProducer(producer)) return "not a loop fusion";
  if (producer.IsRoot() || producer.user_count() == 0) return "its value is an output";
  bool expensive = IsExpensive(producer);
  // Today: the producer reads its operands, writes its value, each user
  // reads it. Merged: each user reads the producer's operands it does not
  // read already.
  int64_t value_bytes = producer.shape().byte_size();
  int64_t current = OperandBytes(producer) + value_bytes;
  int64_t merged = 0;
  for (const HloInstruction* user : producer.users()) {
    if (user->opcode() != HloOpcode::kFusion || !IsFusibleFusion(*user)) return "a user is not a fusion";
    if (expensive && ReusesOperandElements(*user, &producer)) return "a user would recompute expensive ops";
    if (MergedOperandCount(*user, producer) + OutputCount(*user) > kMaxOperandsAndOutputsPerFusion ||
        FusedInstructionCount(*user) + FusedInstructionCount(producer) > kMaxInstructionsPerFusion) {
      return "a merged fusion would be too large";
    }
    current += value_bytes;
    absl::flat_hash_set<const HloInstruction*> read(user->operands().begin(), user->operands().end());
    for (const HloInstruction* o : producer.operands()) {
      if (read.insert(o).second) merged += o->shape().byte_size();
    }
  }
  if (merged > current) return "bytes transferred would grow";
  return "";
}

}  // namespace

absl::StatusOr<bool> FusionMerger::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* computation : ProgramComputations(module)) {
    absl::flat_hash_map<int64_t, HloInstruction*> live;
    std::vector<int64_t> order;
    for (HloInstruction* h : computation->MakeInstructionPostOrder()) {
      live[h->unique_id()] = h;
      order.push_back(h->unique_id());
    }
    computation->set_removal_listener([&](const HloInstruction* h) { live.erase(h->unique_id()); });
    absl::Status status;
    // Producers first, so that a merged chain keeps merging downwards.
    for (int64_t id : order) {
      auto found = live.find(id);
      if (found == live.end()) continue;
      HloInstruction* producer = found->second;
      if (producer->opcode() != HloOpcode::kFusion) continue;
      if (const char* why = CannotMerge(*producer); *why != '\0') {
        if (IsFusibleProducer(*producer)) BumpCounter(std::string("not merged: ") + why);
        continue;
      }
      std::vector<HloInstruction*> users = producer->users();
      for (HloInstruction* user : users) {
        status = FuseProducer(user, producer, /*multi_output=*/false);
        if (!status.ok()) break;
      }
      if (!status.ok()) break;
      BumpCounter("merged into all users");
      changed = true;
    }
    computation->set_removal_listener(nullptr);
    if (!status.ok()) return status;
  }
  return changed;
}

}  // namespace passlab
