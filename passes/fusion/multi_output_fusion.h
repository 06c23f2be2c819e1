// GpuMultiOutputFusion ("multi_output_fusion", XLA:GPU's 2021 pass; seed
// 003 section 2.5 and its diagrams): fuses kernels that would read the same
// data into one kernel with several outputs.
//  1) Sibling fusion: users of one value (reductions, loop fusions,
//     elementwise ops) that iterate over the same shape — reductions with
//     the same input shape and reduced dimensions, loop kernels with the same
//     output shape — and do not depend on each other become one
//     multi-output fusion: the shared input is read once, in one loop.
//  2) Producer-consumer fusion: a loop-fusible producer whose value is also
//     used elsewhere is fused into a consumer that iterates over the
//     producer's shape (a reduction of it, or a loop kernel of its shape);
//     the producer's value becomes an extra output that its other users
//     read, instead of a separate kernel writing it. Not when another user
//     depends on the consumer (a cycle), and an expensive producer only
//     into loop consumers (a reduction kernel computes its outputs in
//     separate loops, so the producer would be computed twice).
// Every fusion stays within the operand/output and size limits.
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
