// An analytical kernel-time model in the manner of XLA:GPU's
// GpuPerformanceModel (xla/service/gpu/model/gpu_performance_model.cc,
// gpu_performance_model_base.cc, gpu_hlo_cost_analysis.cc): for one kernel
// (an unfused op or a fusion) it counts flops and the bytes read and
// written, and estimates
//
//   time = compute + memory - 0.95 * min(compute, memory)   (~ the max)
//
// with compute = flops / (the FMA lanes the launch keeps busy) and memory =
// reads (first read of each operand from DRAM, re-reads from L2/L1 when the
// operand fits) + writes, both at the device's bandwidth (limited by how
// many blocks are in flight). A kernel launch adds `kernel_launch_overhead`.
//
// Counting follows GpuHloCostAnalysis with count_multiple_input_accesses
// (XLA's setting for priority fusion): inside a fusion each instruction's
// "utilization" (how many times each of its elements is computed per
// kernel) is propagated from the root to the parameters, so an operand read
// through an expanding broadcast is read once per element, a sliced operand
// only in part, and a producer fused into a consumer is recomputed as often
// as the consumer reads it. EstimateRunTimes(producer, consumers) compares
// the producer and its consumers as separate kernels with each consumer
// fused with the producer, as XLA's priority fusion does.
//
// Launches (blocks, threads) follow XLA's emitters on the GPU devices: the
// loop emitter (unrolled only above threads_per_core_limit x cores
// elements), the row, multi-row, column and small-column reduction emitters
// and the shared-memory transpose emitter; heroes as XLA's
// FindNonTrivialHero finds them (a tiled transpose behind elementwise ops
// of up to three operands). Coalescing is XLA's IsReadCoalescedHeuristic:
// outside transpose kernels, a transpose of the minor dimension makes every
// read of the kernel uncoalesced, as does fusing two reductions.
//
// Not modelled: XLA's indexing-map coalescing analysis, the packed
// transpose of narrow types, Triton/tiled cost models, collectives.
#ifndef PASSLAB_PASSES_FUSION_GPU_PERFORMANCE_MODEL_H_
#define PASSLAB_PASSES_FUSION_GPU_PERFORMANCE_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/hlo_instruction.h"

namespace passlab {

// What the model needs to know about a device (XLA: se::DeviceDescription).
struct DeviceDescription {
  std::string name;
  double memory_bandwidth = 0;        // bytes/s, DRAM (HBM)
  double peak_f32_flops = 0;          // flop/s of the vector units (FMA = 2)
  double peak_f16_flops = 0;          // flop/s of the matrix units on f16/bf16 dots
  double kernel_launch_overhead = 0;  // seconds per kernel
  int64_t core_count = 0;             // SMs, or CPU cores
  int64_t fpus_per_core = 0;          // f32 FMA lanes per core
  double clock_rate_ghz = 0;
  int64_t l2_cache_size = 0;          // bytes (on a CPU: the last-level cache)
  int64_t l1_cache_size_per_core = 0;
  // Bytes one core (block) can move per clock: caps the bandwidth of a
  // launch with few blocks (XLA: memory_transactions_per_clock, 32 on NVIDIA).
  int64_t bytes_per_clock_per_core = 0;
  // Threads per block of a loop kernel (XLA's loop emitter: 128).
  int64_t threads_per_block = 128;
  // DRAM-to-L2 transaction size: an uncoalesced read uses element_bytes of it.
  int64_t dram_transaction_bytes = 64;
  // Loop and reduction kernels launch as XLA:GPU's emitters do (loop.cc,
  // reduction.cc; warps of 32, threads_per_core_limit threads a core);
  // false on the CPU, whose kernels run a vector of work per "thread block".
  bool xla_gpu_launch = true;
  int64_t threads_per_core_limit = 2048;
};

// "H100" (SXM), "H200", "A100" (SXM 80GB), "A6000" (RTX A6000, the device
// XLA's priority fusion tests use) and "cpu" (passlab's CPU backend).
const std::vector<DeviceDescription>& KnownDevices();
// The device called `name` (case-insensitive); an unknown name is an error
// listing the known ones.
absl::StatusOr<DeviceDescription> DeviceByName(std::string_view name);

// Per-kernel counts and times (XLA: EstimateRunTimeData). Times in seconds,
// without the launch overhead.
struct KernelEstimate {
  int64_t flops = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  double read_time = 0;
  double write_time = 0;
  double compute_time = 0;
  double exec_time = 0;
};

// The counts XLA's GpuHloCostAnalysis keeps for one kernel.
struct KernelCost {
  double flops = 0;
  int64_t bytes_written = 0;
  int64_t ir_size = 1;
  // Per operand slot: elements read per element of the operand (may exceed 1).
  std::vector<double> operand_utilization;
  // For a fusion: per fused instruction, the roots of the elementwise paths
  // from it to the root (XLA: elementwise_use_roots_) and each such root's
  // utilization; per fused parameter, how many times it is emitted.
  absl::flat_hash_map<const HloInstruction*, absl::flat_hash_set<const HloInstruction*>> elementwise_roots;
  absl::flat_hash_map<const HloInstruction*, double> root_utilization;
  absl::flat_hash_map<const HloInstruction*, int64_t> times_emitted;
};

class GpuPerformanceModel {
 public:
  // Above this IR size (XLA: GpuHloCostAnalysis::kMaxIRSize) a fusion is
  // not formed.
  static constexpr int64_t kMaxIRSize = 10000;

  explicit GpuPerformanceModel(DeviceDescription device) : device_(std::move(device)) {}
  const DeviceDescription& device() const { return device_; }

  // The counts of one kernel (cached until Invalidate).
  const KernelCost& Cost(const HloInstruction& instruction);
  // One kernel as it stands (cached until Invalidate).
  const KernelEstimate& EstimateRunTimeForInstruction(const HloInstruction& instruction);
  // `producer` fused into `consumer` (its operand) as one kernel; seconds,
  // without the launch overhead. With `producer_writes_side_output` the
  // kernel also writes the producer's result (a multi-output fusion).
  double EstimateRunTimeForFusion(const HloInstruction& producer, const HloInstruction& consumer,
                                  bool producer_writes_side_output = false);

  struct RunTimes {
    double time_unfused = 0;  // producer and consumers as separate kernels
    double time_fused = 0;    // each consumer fused with the producer
  };
  RunTimes EstimateRunTimes(const HloInstruction& producer, absl::Span<HloInstruction* const> consumers);
  // XLA's EstimateRunTimesForMultiOutputFusion: `producer` and `consumer`
  // as two kernels, or as one kernel that writes both results.
  RunTimes EstimateRunTimesForMultiOutputFusion(const HloInstruction& producer, const HloInstruction& consumer);

  // Whether fusing `producer` into `consumer` would exceed kMaxIRSize.
  bool ProducerConsumerMergedTooLarge(const HloInstruction& producer, const HloInstruction& consumer);

  // Forgets what is cached for `instruction` (call before it changes or is
  // removed).
  void Invalidate(const HloInstruction* instruction);

 private:
  DeviceDescription device_;
  absl::flat_hash_map<const HloInstruction*, std::unique_ptr<KernelCost>> costs_;
  absl::flat_hash_map<const HloInstruction*, KernelEstimate> estimates_;
};

// One kernel's estimated time on `device` in seconds, launch included: for
// `passlab run` to show beside the measured time.
double EstimateKernelTime(const HloInstruction& fusion_or_op, const DeviceDescription& device);

// The emitter a kernel would use, as XLA's HloFusionAnalysis chooses it
// (only what priority fusion needs: reductions, tiled transposes,
// concatenates, and loops for the rest). `producer` may be null; otherwise
// the kernel is `producer` fused into `consumer`.
enum class KernelEmitterKind { kLoop, kReduction, kTranspose, kConcatenate };
KernelEmitterKind EmitterKindOf(const HloInstruction* producer, const HloInstruction& consumer);
// The reduce hero of that kernel, or nullptr.
const HloInstruction* ReductionHeroOf(const HloInstruction* producer, const HloInstruction& consumer);

// A transpose, normalized: size-1 dimensions dropped and dimensions that
// stay adjacent merged (XLA's GetNormalizedLogicalTransposeShape; only
// default layouts, nullopt otherwise).
struct NormalizedTranspose {
  std::vector<int64_t> dims;         // output dimensions
  std::vector<int64_t> permutation;  // output dimension i reads input dimension permutation[i]
};
std::optional<NormalizedTranspose> NormalizeTranspose(const HloInstruction& transpose);

// XLA's GetDescriptionForTiledTransposeEmitter (ir_emission_utils.cc;
// without the packed transpose of narrow types): the transposes XLA's
// shared-memory transpose emitter takes, with the shared memory it needs
// in bytes; nullopt for the ones the loop emitter runs.
std::optional<int64_t> TiledTransposeSharedMemory(const HloInstruction& hero);

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_GPU_PERFORMANCE_MODEL_H_
