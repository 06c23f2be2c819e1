// ShardingPropagation ("sharding-propagation"): gives every array
// instruction of a module with sharding annotations a sharding, inferred
// from its operands (forward) or, failing that, from its users (backward),
// until nothing changes. The SPMD partitioner then reads one sharding per
// instruction.
//
// Handled: replicated and maximal shardings pass through every op; tiled
// shardings with one split dimension (devices=[1,N,1]..., no replication
// dimension) move through elementwise ops, broadcast, transpose, reshape
// (when the split dimension keeps its blocks), dot (batch and free
// dimensions; a split contracting dimension leaves a replicated result),
// reduce (kept dimensions; a reduced split dimension leaves a replicated
// result), convolution (batch dimension: data parallelism), tuple and
// get-tuple-element. Other tiled shardings are copied only through
// elementwise ops and tuples. Existing annotations are never changed.
//
// A module without annotations is left alone (returns false): single-device
// programs pass through.
#ifndef PASSLAB_PASSES_SPMD_SHARDING_PROPAGATION_H_
#define PASSLAB_PASSES_SPMD_SHARDING_PROPAGATION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ShardingPropagation : public HloModulePass {
 public:
  std::string_view name() const override { return "sharding-propagation"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SPMD_SHARDING_PROPAGATION_H_
