// AllReduceSimplifier ("all-reduce-simplifier"): removes collectives that
// cannot exchange anything. An all-reduce whose every group holds one
// participant returns its operand; so do all-gather and reduce-scatter whose
// result has the operand's shape. An all-reduce of a value every member of
// its group already holds (computed from constants, iotas and parameters
// marked replicated, never from replica ids, rng or collectives) becomes the
// operand for min/max/and/or and operand x group size for sum, when every
// group has the same size. Needs the module's replica_count and
// num_partitions; runs first in collective-optimizations, after the SPMD
// partitioner emitted its collectives.
#ifndef PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_SIMPLIFIER_H_
#define PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_SIMPLIFIER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class AllReduceSimplifier : public HloModulePass {
 public:
  std::string_view name() const override { return "all-reduce-simplifier"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_SIMPLIFIER_H_
