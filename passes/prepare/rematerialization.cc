#include "passes/prepare/rematerialization.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "passes/prepare/latency_hiding_scheduler.h"

namespace passlab {
namespace {

// Users that only name (part of) their operand's buffer: recomputing for
// them would not end the value's live range.
bool IsView(HloOpcode op) {
  return op == HloOpcode::kGetTupleElement || op == HloOpcode::kTuple || op == HloOpcode::kBitcast ||
         op == HloOpcode::kOptimizationBarrier || op == HloOpcode::kDomain || op == HloOpcode::kAddDependency ||
         op == HloOpcode::kAsyncUpdate || op == HloOpcode::kAsyncDone || op == HloOpcode::kAllReduceDone ||
         op == HloOpcode::kAllGatherDone || op == HloOpcode::kCollectivePermuteDone || op == HloOpcode::kCopyDone;
}

bool IsParameterOrConstant(const HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kParameter || inst->opcode() == HloOpcode::kConstant;
}

// Elementwise, broadcast or iota, no side effects, reading only
// parameters, constants or values at most a quarter of its size (whose live
// ranges the copy may extend).
bool CheapToRecompute(const HloInstruction& inst) {
  HloOpcode op = inst.opcode();
  if (inst.HasSideEffect() || !inst.shape().IsArray() || op == HloOpcode::kFusion) return false;
  if (!inst.IsElementwise() && op != HloOpcode::kBroadcast && op != HloOpcode::kIota) return false;
  if (!inst.control_predecessors().empty() || !inst.control_successors().empty()) return false;
  int64_t operand_bytes = 0;
  for (const HloInstruction* operand : inst.operands()) {
    if (!IsParameterOrConstant(operand)) operand_bytes += operand->shape().total_leaf_bytes();
  }
  return operand_bytes * 4 <= inst.shape().byte_size();
}

struct Candidate {
  HloInstruction* value = nullptr;
  std::vector<HloInstruction*> late_users;  // in sequence order
  bool has_early_users = false;
};

// The largest cheap value live across step `peak` of `sequence` and not
// used there.
Candidate PickCandidate(const HloComputation& c, const std::vector<HloInstruction*>& sequence, size_t peak,
                        const absl::flat_hash_set<const HloInstruction*>& tried) {
  absl::flat_hash_map<const HloInstruction*, size_t> position;
  for (size_t i = 0; i < sequence.size(); ++i) position[sequence[i]] = i;
  Candidate best;
  int64_t best_bytes = 0;
  for (size_t i = 0; i < peak; ++i) {
    HloInstruction* value = sequence[i];
    if (tried.contains(value) || value == c.root_instruction() || !CheapToRecompute(*value)) continue;
    int64_t bytes = value->shape().byte_size();
    if (bytes <= best_bytes || value->users().empty()) continue;
    Candidate candidate{value, {}, false};
    bool usable = true;
    for (HloInstruction* user : value->users()) {
      size_t at = position.at(user);
      usable &= !IsView(user->opcode()) && at != peak;
      if (at < peak) candidate.has_early_users = true;
      if (at > peak) candidate.late_users.push_back(user);
    }
    if (!usable || candidate.late_users.empty()) continue;
    std::sort(candidate.late_users.begin(), candidate.late_users.end(),
              [&](const HloInstruction* a, const HloInstruction* b) { return position.at(a) < position.at(b); });
    best = std::move(candidate);
    best_bytes = bytes;
  }
  return best;
}

struct Peak {
  int64_t bytes = 0;
  size_t step = 0;
  int64_t steps_at_peak = 0;
};

Peak FindPeak(const ScheduleEstimate& e) {
  Peak p{e.peak_live_bytes, 0, 0};
  for (size_t i = 0; i < e.live_bytes.size(); ++i) {
    if (e.live_bytes[i] != e.peak_live_bytes) continue;
    if (p.steps_at_peak++ == 0) p.step = i;
  }
  return p;
}

struct ComputationResult {
  bool changed = false;
  int64_t rematerialized = 0;
  int64_t bytes_saved = 0;
};

absl::StatusOr<ComputationResult> RematerializeComputation(HloComputation& c,
                                                           const RematerializationOptions& options) {
  ComputationResult result;
  std::vector<HloInstruction*> sequence = c.instructions();
  Peak peak = FindPeak(EstimateSchedule(c, sequence));
  int64_t initial_peak = peak.bytes;
  absl::flat_hash_set<const HloInstruction*> tried;
  for (int64_t attempt = 0; attempt < options.max_attempts && peak.bytes > options.memory_limit_bytes; ++attempt) {
    Candidate candidate = PickCandidate(c, sequence, peak.step, tried);
    if (candidate.value == nullptr) break;
    HloInstruction* value = candidate.value;
    tried.insert(value);
    // value => value.remat right before its first use after the peak.
    HloInstruction* copy = c.AddInstruction(value->CloneWithNewOperands(value->shape(), value->operands()),
                                            StrCat(value->name(), ".remat"));
    if (absl::Status s = value->ReplaceUsesWith(candidate.late_users, copy); !s.ok()) return s;
    std::vector<HloInstruction*> trial;
    trial.reserve(sequence.size() + 1);
    for (HloInstruction* inst : sequence) {
      if (inst == candidate.late_users.front()) trial.push_back(copy);
      trial.push_back(inst);
    }
    if (absl::Status s = c.SetInstructionSequence(trial); !s.ok()) return s;
    Peak next = FindPeak(EstimateSchedule(c, trial));
    if (next.bytes < peak.bytes || (next.bytes == peak.bytes && next.steps_at_peak < peak.steps_at_peak)) {
      if (!candidate.has_early_users) {
        // Every use moved: the value is recomputed late, not kept.
        tried.erase(value);
        std::erase(trial, value);
        if (absl::Status s = c.RemoveInstruction(value); !s.ok()) return s;
        if (absl::Status s = c.SetInstructionSequence(trial); !s.ok()) return s;
        next = FindPeak(EstimateSchedule(c, trial));
      }
      sequence = std::move(trial);
      peak = next;
      result.changed = true;
      ++result.rematerialized;
      continue;
    }
    // No better: undo.
    if (absl::Status s = copy->ReplaceUsesWith(candidate.late_users, value); !s.ok()) return s;
    if (absl::Status s = c.RemoveInstruction(copy); !s.ok()) return s;
    if (absl::Status s = c.SetInstructionSequence(sequence); !s.ok()) return s;
  }
  result.bytes_saved = initial_peak - peak.bytes;
  return result;
}

}  // namespace

absl::StatusOr<bool> Rematerialization::RunImpl(HloModule& module, PassRunContext*) {
  if (options_.memory_limit_bytes <= 0) {
    BumpCounter("no memory limit: nothing rematerialized");
    return false;
  }
  if (!module.is_scheduled()) {
    BumpCounter("module not scheduled: nothing rematerialized");
    return false;
  }
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    absl::StatusOr<ComputationResult> r = RematerializeComputation(*c, options_);
    if (!r.ok()) return absl::InternalError(StrCat(name(), ": computation ", c->name(), ": ", r.status().message()));
    changed |= r->changed;
    if (r->rematerialized > 0) BumpCounter("instructions rematerialized", r->rematerialized);
    if (r->bytes_saved > 0) BumpCounter("peak live bytes saved", r->bytes_saved);
  }
  return changed;
}

}  // namespace passlab
