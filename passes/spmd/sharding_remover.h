// ShardingRemover ("sharding-remover", xla/service/sharding_remover.cc): in a
// module that is not partitioned, the custom calls that only carry sharding
// ("Sharding", "SPMDShardToFullShape", "SPMDFullToShardShape", Shardy's
// sharding-group, propagation-barrier and func-result markers and the
// partitioner's shard barriers) hand their users their operand. "Sharding"
// and the markers that XLA's DCE keeps are replaced by a copy, which HloDCE
// then removes when nothing reads it; a sharding group (no users) goes at
// once. JAX writes "Sharding" custom calls into single-device programs
// (e.g. jax.random's key handling), so XLA:GPU's "sharding-removal"
// pipeline runs this where "spmd-partitioner" does not (num_partitions 1).
#ifndef PASSLAB_PASSES_SPMD_SHARDING_REMOVER_H_
#define PASSLAB_PASSES_SPMD_SHARDING_REMOVER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ShardingRemover : public HloModulePass {
 public:
  std::string_view name() const override { return "sharding-remover"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SPMD_SHARDING_REMOVER_H_
