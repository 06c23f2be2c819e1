// Shared by the fusion passes (GpuInstructionFusion, FusionMerger,
// GpuMultiOutputFusion, the horizontal fusions): what may be fused, the
// bytes/recomputation cost model, and the edits that build fusions.
//
// Legality keeps within what the CPU backend compiles inside one kernel
// (core/codegen: CpuKernelCompiler::CheckCompilable and the emitters): array
// shapes of the element types the emitters know, static, untiled; inside a
// fused computation only elementwise ops, data movement (bitcast, broadcast,
// concatenate, dynamic-slice, iota, pad, reshape, reverse, slice, transpose),
// scalar constants, and as the kernel's hero a reduce (kInput fusion) or a
// reduce-window. Dots, convolutions, custom calls (library calls), gathers,
// scatters, dynamic-update-slices, batch norms, sorts and rng stay unfused,
// as the backend runs them as library calls, in-place kernels or routines.
// The e2e tests compile every fusion the pipeline creates.
#ifndef PASSLAB_PASSES_FUSION_GPU_FUSIBLE_H_
#define PASSLAB_PASSES_FUSION_GPU_FUSIBLE_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"

namespace passlab {

// XLA:GPU's limit on a fusion's parameters plus outputs (kernel arguments).
inline constexpr int64_t kMaxOperandsAndOutputsPerFusion = 64;
// Keeps emitted kernels (and their compile time) bounded.
inline constexpr int64_t kMaxInstructionsPerFusion = 256;

// An array shape the CPU emitters compile: a supported element type (pred,
// integers, f16, bf16, f32, f64), static dimensions, no tiled layout.
bool IsEmittableArrayShape(const Shape& shape);

// An op that may be fused as a producer (and be a loop fusion's root):
// elementwise, data movement or a scalar constant, on emittable shapes,
// without side effects or control dependencies.
bool IsLoopFusibleOp(const HloInstruction& instruction);
// A single-output reduce over an emittable input (an input fusion's hero).
bool IsFusibleReduce(const HloInstruction& instruction);
// A loop or input fusion whose fused instructions are all fusible ops (the
// fusions these passes build; anything else is left alone).
bool IsFusibleFusion(const HloInstruction& instruction);
// Whether `instruction` may absorb producers: a loop-fusible op, a fusible
// reduce, a single-operand reduce-window, or a fusible fusion.
bool IsFusibleConsumer(const HloInstruction& instruction);
// Whether `instruction` may be fused into a consumer: a loop-fusible op or a
// single-output loop fusion of such ops.
bool IsFusibleProducer(const HloInstruction& instruction);

// Ops worth not computing twice (transcendentals, power, integer division,
// ...; XLA:GPU's list, with f32 divide/sqrt/rsqrt cheap as on GPUs). For a
// fusion: whether any fused instruction is.
bool IsExpensive(const HloInstruction& instruction);
// Whether `consumer` reads some element of `operand` more than once (an
// expanding broadcast, a reduce-window, or a fused parameter used on
// several paths), so that fusing an expensive producer would recompute it.
bool ReusesOperandElements(const HloInstruction& consumer, const HloInstruction* operand);

// The instructions a fusion would hold (1 for an unfused op).
int64_t FusedInstructionCount(const HloInstruction& instruction);
// Distinct operands of `a` and `b` together, leaving out `b` itself as an
// operand of `a` and `a` of `b` (the operands of their fusion).
int64_t MergedOperandCount(const HloInstruction& a, const HloInstruction& b);
// Number of output arrays (tuple leaves).
int64_t OutputCount(const HloInstruction& instruction);
// The reduce hero of a reduce or an input fusion (the first reduce root),
// or nullptr.
const HloInstruction* ReductionHero(const HloInstruction& instruction);
// The shape a kernel iterates over: a reduce hero's input shape, otherwise
// the (first) output's.
const Shape& IterationShape(const HloInstruction& instruction);

// Every output leaf of `instruction` has the dimensions `dims`.
bool OutputsHaveDimensions(const HloInstruction& instruction, const std::vector<int64_t>& dims);
// Whether two kernels iterate over the same index space, so that one loop
// computes the outputs of both (the CPU emitters group output leaves of
// equal dimensions into one loop nest): reductions with the same input
// dimensions and reduced dimensions, or loop kernels whose outputs all have
// one shape.
bool SameIterationSpace(const HloInstruction& a, const HloInstruction& b);
// Whether a multi-output fusion of `a` and `b` stays within the limits.
bool WithinMultiOutputLimits(const HloInstruction& a, const HloInstruction& b);

// Whether `to` is reachable from `from` through users (from != to).
bool IsReachable(const HloInstruction* from, const HloInstruction* to);

// IsReachable for many queries on one computation: a walk from `from` only
// visits instructions before `to` in a post order (anything after it cannot
// reach it). Call Invalidate() after editing the computation.
class ReachabilityQuery {
 public:
  explicit ReachabilityQuery(const HloComputation& computation) : computation_(computation) {}
  bool Reaches(const HloInstruction* from, const HloInstruction* to);
  void Invalidate() { valid_ = false; }

 private:
  const HloComputation& computation_;
  absl::flat_hash_map<const HloInstruction*, int64_t> position_;
  bool valid_ = false;
};

// The computations that run as programs: the entry and, transitively, the
// bodies of while/conditional/call (not reducers or fused computations).
std::vector<HloComputation*> ProgramComputations(const HloModule& module);

// --- Edits. Each keeps the module valid and removes what it leaves dead.

// Wraps an unfused op into a fusion of `kind` with it as the root; returns
// the fusion (which replaced `instruction`).
absl::StatusOr<HloInstruction*> WrapInFusion(HloInstruction* instruction, FusionKind kind);
// Clones `producer` (an op, or the body of a single-output fusion) into
// `fusion`, replacing the fused parameters that read it. With
// `multi_output`, the producer's value also becomes an output of the fusion
// (its root becomes a tuple) and the producer's other users read it from
// there. The producer is removed when nothing uses it any more.
absl::Status FuseProducer(HloInstruction* fusion, HloInstruction* producer, bool multi_output);
// Moves every output of `sibling` (an op or a fusion, not an operand of
// `fusion` and not depending on it) into `fusion`, which becomes a
// multi-output fusion; `sibling`'s users read its values from `fusion`.
absl::Status MergeSibling(HloInstruction* fusion, HloInstruction* sibling);

// The fusion kind for a fused computation rooted at `root`: kInput when a
// root leaf is a reduce, kLoop otherwise.
FusionKind KindForRoot(const HloInstruction& root);

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_GPU_FUSIBLE_H_
