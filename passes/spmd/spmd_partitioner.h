// SpmdPartitioner ("spmd-partitioning"): rewrites the entry computation of
// a module with num_partitions > 1 into the program one partition runs:
// every array takes its local (per-partition) shape under its sharding, and
// the collectives the math needs are inserted (XLA's SPMD partitioner, for
// the shardings data and simple tensor parallelism use).
//
// Supported shardings: replicated, and tiled with one dimension split
// evenly over all partitions (any device order, no replication dimension);
// an instruction without a sharding is replicated. Any other sharding
// (maximal, partial replication, several split dimensions, uneven split) is
// an error naming the instruction. Needs sharding-propagation first.
//
// Local rewrites: parameters take local shapes; elementwise ops, broadcast,
// transpose and reshape (when the split keeps its blocks) run on local
// operands; dot splits on batch or free dimensions run locally, a split
// contracting dimension runs locally then all-reduces the partial sums;
// reduce over a kept split dimension runs locally, over the split dimension
// locally then all-reduce; convolution split on the batch runs locally.
// Everything else runs on whole (all-gathered) operands and its result is
// sliced at the partition's offset (dynamic-slice of a partition-id
// indexed offset table). Resharding: replicated -> split is a
// dynamic-slice, split -> replicated an all-gather (channel id, global
// device ids). Modules with one partition, or without shardings, are left
// alone (returns false).
#ifndef PASSLAB_PASSES_SPMD_SPMD_PARTITIONER_H_
#define PASSLAB_PASSES_SPMD_SPMD_PARTITIONER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class SpmdPartitioner : public HloModulePass {
 public:
  std::string_view name() const override { return "spmd-partitioning"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SPMD_SPMD_PARTITIONER_H_
