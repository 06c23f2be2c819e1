// FusionMerger ("fusion_merger", XLA:GPU's 2021 pass; seed 003 section
// 2.4): merges a loop fusion into every one of its users, which must all be
// fusions, so that its value is computed inside each of them and never
// written to memory. Merged only when the bytes transferred do not grow
// (its operands read by each user, instead of the producer reading them,
// writing its result and every user reading that back), the producer has no
// expensive op that a user would read several times per element, and every
// merged fusion stays within the fusion limits. Input (reduction) fusions
// are never merged into their users: their value is a reduction.
//
// Runs after GpuInstructionFusion (which leaves multi-user producers as
// separate fusions) and before GpuMultiOutputFusion.
#ifndef PASSLAB_PASSES_FUSION_FUSION_MERGER_H_
#define PASSLAB_PASSES_FUSION_FUSION_MERGER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class FusionMerger : public HloModulePass {
 public:
  std::string_view name() const override { return "fusion_merger"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_FUSION_MERGER_H_
