// GpuInstructionFusion ("fusion", XLA:GPU's 2021 producer-consumer fusion;
// seed 003 section 2.3): fuses producers into their consumers so that the
// loops computing them become one kernel. Consumers are visited from the
// root up; each absorbs the operands it should fuse (ShouldFuse in the .cc):
// loop-fusible producers (elementwise, data movement, scalar constants, loop
// fusions) into loop-fusible ops, reduces (kInput fusions: the reduce is the
// kernel's hero), reduce-windows and fusions.
//
// Cost model (bytes saved vs recomputation): a producer with other users
// stays and is computed twice, so it is duplicated only when `may_duplicate`
// (XLA's second occurrence), it is cheap (IsExpensive), and the bytes the
// consumer would read in its place (the producer's operands it does not read
// yet) are no more than the producer's own bytes it no longer reads. An
// expensive producer is never fused into a consumer that reads its elements
// more than once (expanding broadcast, reduce-window). Fusions stay within
// the operand and size limits and what the CPU backend compiles
// (gpu_fusible.h).
//
// Runs after layout assignment and the reduction passes (post-layout-
// assignment): fusion freezes the ops it absorbs, so every pass that
// rewrites single ops must run first.
#ifndef PASSLAB_PASSES_FUSION_INSTRUCTION_FUSION_H_
#define PASSLAB_PASSES_FUSION_INSTRUCTION_FUSION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct GpuInstructionFusionOptions {
  // Whether a producer with other users may be fused (and so computed again
  // in the consumer).
  bool may_duplicate = true;
};

class GpuInstructionFusion : public HloModulePass {
 public:
  explicit GpuInstructionFusion(GpuInstructionFusionOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "fusion"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  GpuInstructionFusionOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_INSTRUCTION_FUSION_H_
