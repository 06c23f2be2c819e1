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
//     With a device (options.device), XLA's cost checks on that pair too:
//     not when the merged IR would exceed the cost model's size limit, nor
//     when the performance model (gpu_performance_model.h) says the
//     two-output kernel runs slower than the two kernels.
// Constants and custom fusions are never fused here. Without a device
// (the seed era's pipeline) passlab assumes every fusion pays off.
//
// Runs after GpuInstructionFusion and FusionMerger, on the fusions they
// left.
#ifndef PASSLAB_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_
#define PASSLAB_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_

#include <string>
#include <utility>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct MultiOutputFusionOptions {
  // A name DeviceByName knows ("H100", "H200", ...), or "" for no cost
  // checks.
  std::string device = "H100";
};

class GpuMultiOutputFusion : public HloModulePass {
 public:
  explicit GpuMultiOutputFusion(MultiOutputFusionOptions options = {}) : options_(std::move(options)) {}
  std::string_view name() const override { return "multi_output_fusion"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  MultiOutputFusionOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_
