// LatencyHidingScheduler ("latency-hiding-scheduler"): gives every
// non-fusion computation (entry, loop bodies and conditions, branches,
// called and reducer computations) a sequence and marks the module
// scheduled, as XLA:GPU does last before emission. Fusion computations keep
// their order (they are one kernel).
//
// A forward list scheduler over a simulated clock with a simple cost model
// (LatencyHidingSchedulerOptions): a kernel costs its launch plus the larger
// of bytes/bandwidth and flops/throughput; an asynchronous pair
// (all-reduce-, all-gather-, collective-permute-, copy-, async-start ...
// -done) costs a latency that runs on its own stream. Starts are issued as
// soon as they are ready (at most `max_in_flight_per_stream` per stream),
// the work that feeds a pending start comes first, other independent work
// fills the gap, and a done is placed once its latency has elapsed, or when
// nothing else is left to do. Among ordinary instructions the one that frees
// the most live bytes goes first, so without asynchronous ops the result is
// a memory-aware post order; once live bytes exceed the memory limit,
// freeing memory takes precedence over hiding latency. Side-effecting
// instructions (other than the asynchronous collectives) keep their order.
//
// The new sequence is kept only when the cost model rates it no worse than
// the incoming post order (memory over the limit, then estimated time, then
// peak bytes); otherwise the post order is the schedule. `Run` reports a
// change only when some computation's order or the module's is_scheduled
// flag changed.
//
// Runs at the end of ir-emit-prepare (only rematerialization, which edits
// the schedule, comes after it). Optional: the CPU runtime runs any topological
// order (the post order, which follows the sequence when there is one).
#ifndef PASSLAB_PASSES_PREPARE_LATENCY_HIDING_SCHEDULER_H_
#define PASSLAB_PASSES_PREPARE_LATENCY_HIDING_SCHEDULER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "core/pass/hlo_pass_interface.h"

namespace passlab {

// The cost model, roughly one H100-class GPU. Times in nanoseconds.
struct LatencyHidingSchedulerOptions {
  double memory_bytes_per_ns = 2000;     // device memory bandwidth (2 TB/s)
  double flops_per_ns = 50000;           // arithmetic throughput (50 TFLOP/s)
  double kernel_launch_ns = 2000;        // fixed cost of every kernel
  double collective_latency_ns = 10000;  // fixed latency of a collective
  double collective_bytes_per_ns = 100;  // interconnect bandwidth (100 GB/s)
  double copy_latency_ns = 5000;         // fixed latency of copy-start/done
  double copy_bytes_per_ns = 25;         // host link bandwidth (25 GB/s)
  // Asynchronous ops of one stream (one per collective kind, host copies,
  // other async computations) the scheduler lets overlap each other.
  int64_t max_in_flight_per_stream = 1;
  // Live-bytes budget per computation; 0: `peak_growth_limit` times the
  // peak of the incoming order.
  int64_t memory_limit_bytes = 0;
  double peak_growth_limit = 1.5;
};

// What a sequence of one computation costs under the model.
struct ScheduleEstimate {
  double total_ns = 0;    // compute plus the time spent waiting on dones
  double exposed_ns = 0;  // async latency not covered by work (waiting)
  double hidden_ns = 0;   // async latency covered by work between start and done
  // Instructions with a cost, placed between a start and its done.
  int64_t overlapped_instructions = 0;
  // Peak of the live bytes of the instructions' results (parameters and
  // constants excluded, views share their source's buffer).
  int64_t peak_live_bytes = 0;
  // Live bytes while each instruction of the sequence runs (its operands
  // and its result both live).
  std::vector<int64_t> live_bytes;
};

// Estimates `sequence` (a topological order of all of `computation`'s
// instructions).
ScheduleEstimate EstimateSchedule(const HloComputation& computation, absl::Span<HloInstruction* const> sequence,
                                  const LatencyHidingSchedulerOptions& options = {});

// The scheduler's sequence for `computation` (not applied): the list
// schedule, or the post order when the model rates that at least as good.
std::vector<HloInstruction*> ScheduleComputation(const HloComputation& computation,
                                                 const LatencyHidingSchedulerOptions& options = {});

class LatencyHidingScheduler : public HloModulePass {
 public:
  explicit LatencyHidingScheduler(LatencyHidingSchedulerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "latency-hiding-scheduler"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  LatencyHidingSchedulerOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_PREPARE_LATENCY_HIDING_SCHEDULER_H_
