// HloMemoryScheduler ("hlo-memory-scheduler"): gives every non-fusion
// computation a sequence that keeps peak memory low and marks the module
// scheduled, as XLA:GPU's ScheduleGpuModule does for a single-GPU module
// (xla/service/gpu/gpu_hlo_schedule.cc, ScheduleGpuModuleWithMemoryScheduler;
// the algorithms are xla/hlo/transforms/simplifiers/hlo_memory_scheduler.cc).
//
// Algorithms (HloMemorySchedulerOptions::algorithm):
//  - list: greedy list scheduling; among the ready instructions the one with
//    the most bytes freed minus bytes defined goes first (then the most
//    users; effective scalars first, configured outfeeds early and infeeds
//    late; ties: the most recently readied).
//  - dfs: a post order from the root whose operands are visited by most
//    transitive fan-out, then largest transitive size, then name.
//  - postorder: XLA's MakeInstructionPostOrder.
//  - default: all three, keeping the one whose module has the smallest
//    simulated peak (SimulatePeakMemory; ties: list, dfs, postorder).
// Buffers are those of XLA's tuple points-to analysis (a tuple defines only
// its pointer table, get-tuple-element/bitcast forward), sized by
// ShapeUtil::ByteSizeOf with 8-byte pointers (host memory space: 0).
// Each sequence then goes through the GPU's PostProcessSchedule: a
// synchronous collective start (backend_config collective_backend_config
// is_sync) moves right before its done; other async starts and
// SCHEDULE_EARLIEST custom calls move right after their last operand, their
// dones and SCHEDULE_LATEST custom calls right before their first user.
//
// `Run` reports a change when some computation's order or the module's
// is_scheduled flag changed (XLA always reports one). Fusion computations
// keep their order. Runs last in XLA:GPU's compile before emission (the
// latency-hiding scheduler, when enabled, starts from this schedule).
// Optional: the CPU runtime runs any topological order.
#ifndef PASSLAB_PASSES_PREPARE_HLO_MEMORY_SCHEDULER_H_
#define PASSLAB_PASSES_PREPARE_HLO_MEMORY_SCHEDULER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/pass/hlo_pass_interface.h"

namespace passlab {

enum class MemorySchedulerAlgorithm { kDefault, kList, kDfs, kPostOrder };

struct HloMemorySchedulerOptions {
  // "default", "list", "dfs" or "postorder" (anything else: Run fails).
  std::string algorithm = "default";
  // XLA:GPU's PostProcessSchedule after each algorithm (before the peaks are
  // compared); plain XLA's HloMemoryScheduler has none.
  bool gpu_postprocess = true;
};

std::optional<MemorySchedulerAlgorithm> ParseMemorySchedulerAlgorithm(std::string_view name);

// One sequence per computation; a computation without one is taken in its
// instruction order (its schedule in a scheduled module).
using ComputationSequences = absl::flat_hash_map<const HloComputation*, std::vector<HloInstruction*>>;

// XLA's HeapSimulator::MinimumMemoryForModule without fragmentation or
// buffer reuse, roughly: the entry computation's parameters are live from
// the start and its outputs to the end, other buffers from their defining
// instruction to their last use (through tuple/get-tuple-element/bitcast
// aliases); constants take no heap. While loops, conditionals and calls add,
// while they run, the peak of their computations' own temporaries
// (parameters and outputs alias the caller's buffers).
int64_t SimulatePeakMemory(const HloModule& module, const ComputationSequences& sequences = {});

// The algorithms' sequences for one computation (no postprocessing).
std::vector<HloInstruction*> ListMemorySchedule(const HloComputation& computation);
std::vector<HloInstruction*> DfsMemorySchedule(const HloComputation& computation);
std::vector<HloInstruction*> PostOrderMemorySchedule(const HloComputation& computation);
// XLA:GPU's PostProcessSchedule.
std::vector<HloInstruction*> GpuPostProcessSchedule(absl::Span<HloInstruction* const> sequence);

class HloMemoryScheduler : public HloModulePass {
 public:
  explicit HloMemoryScheduler(HloMemorySchedulerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "hlo-memory-scheduler"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  HloMemorySchedulerOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_PREPARE_HLO_MEMORY_SCHEDULER_H_
