// GpuMultiOutputFusion ("multi_output_fusion"): XLA:GPU's multi-output
// fusion (xla/backends/gpu/transforms/multi_output_fusion.cc), which fuses
// kernels that read the same data into one kernel with several outputs.
//
// Each computation that may hold fusions (not fused, reducer or called
// computations; while and conditional bodies are) is walked from its root
// up (uses before defs). At each instruction, the producer:
//  1) Sibling fusion: its users that can be a multi-output root (a loop
//     fusion, an elementwise op, a reduction or transpose the GPU emitters
//     tile) are sorted multi-output fusions first, then fusions, then ops;
//     each fusion absorbs the later siblings it is compatible with: not
//     connected to it, the same loop shape (reductions and tiled transposes
//     by their input shape; shapes that are a reshape or transpose bitcast
//     of each other count), compatible heroes (no nested transpose with a
//     tiled hero, no tiled transpose with a tiled reduction), slices of a
//     large shared operand that overlap, no dynamic-update-slice root, and
//     within the shared-memory, unnested-reduction and operand budgets. The
//     producer must not be an effective scalar.
//  2) Producer-consumer fusion: a loop-fusible producer (not multi-output,
//     not in-place, not physically transposing) with several users is
//     fused, as an extra output, into the user of highest priority that is
//     a multi-output root candidate with compatible shapes, whose other
//     operands it does not reach, and that fits the budget.
// Constants and custom fusions are never fused here. Where XLA consults its
// GPU cost model (IR size, estimated run times) passlab assumes the fusion
// pays off.
//
// Runs after GpuInstructionFusion and FusionMerger, on the fusions they
// left.
#ifndef PASSLAB_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_
#define PASSLAB_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class GpuMultiOutputFusion : public HloModulePass {
 public:
  std::string_view name() const override { return "multi_output_fusion"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_
