// ReduceScatterCreator ("reduce-scatter-creator"): an all-reduce whose only
// user keeps one participant-dependent slice, dynamic-slice(all-reduce(x),
// offsets) with offset k * size along one dimension for the k-th member of
// each group (0 elsewhere), becomes reduce-scatter(x) along that dimension:
// each participant receives only its slice. The offsets are checked by
// evaluating their scalar expression (constants, partition-id, replica-id,
// arithmetic, lookups in constant tables) for every participant. This is the
// form the SPMD partitioner leaves for a reduced, then sharded value.
#ifndef PASSLAB_PASSES_COLLECTIVES_REDUCE_SCATTER_CREATOR_H_
#define PASSLAB_PASSES_COLLECTIVES_REDUCE_SCATTER_CREATOR_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ReduceScatterCreator : public HloModulePass {
 public:
  std::string_view name() const override { return "reduce-scatter-creator"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_COLLECTIVES_REDUCE_SCATTER_CREATOR_H_
