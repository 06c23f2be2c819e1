// PriorityFusion ("priority-fusion", XLA:GPU's fusion pass since 2024:
// xla/backends/gpu/transforms/priority_fusion.cc): producers wait in a
// priority queue ordered by the time fusing them into all their users would
// save, by the performance model (gpu_performance_model.h) of the chosen
// device: time_unfused - time_fused over the users. The best producer is
// fused into every user (duplicated when there are several) if that saves
// time and every user can take it; then the priorities of the new fusions
// and of their operands are recomputed. Bitcasts go first (they are free);
// small constants are fused into their users at the end.
//
// Legality (XLA's CanFuse): not across a computation's root, not into a
// lone bitcast, not a reduce into a kernel that already reduces (unless one
// of the reductions is smaller than 16 elements per output), not an epilogue
// that would turn a reduction kernel into a loop kernel, within the operand
// and IR-size limits. Fusible ops are those the CPU emitters compile inside
// a fusion (gpu_fusible.h): elementwise ops, data movement, reduces,
// reduce-windows and loop/input fusions of them; scatters, gathers,
// dynamic-update-slices, dots and library calls stay unfused. Triton and
// the ProducerConsumer multi-output fusion it enables are not modelled (XLA
// with Triton fusion disabled). Fusion kinds: kInput for reduction,
// transpose and concatenate kernels, kLoop otherwise.
//
// Runs in the "fusion" sub-pipeline after layout assignment, in place of
// XLA's 2021 "fusion" + "fusion_merger" pair.
#ifndef PASSLAB_PASSES_FUSION_PRIORITY_FUSION_H_
#define PASSLAB_PASSES_FUSION_PRIORITY_FUSION_H_

#include <string>

#include "core/pass/hlo_pass_interface.h"
#include "passes/fusion/gpu_performance_model.h"

namespace passlab {

struct PriorityFusionOptions {
  // A name DeviceByName knows: "H100", "H200", "A100", "A6000", "cpu".
  std::string device = "H100";
};

class PriorityFusion : public HloModulePass {
 public:
  explicit PriorityFusion(PriorityFusionOptions options = {}) : options_(std::move(options)) {}
  std::string_view name() const override { return "priority-fusion"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  PriorityFusionOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_PRIORITY_FUSION_H_
