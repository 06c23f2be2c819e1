// AllReduceCombiner ("all-reduce-combiner"), as XLA's
// xla/hlo/transforms/collectives/all_reduce_combiner.cc: independent
// single-operand all-reduces in one sharding domain whose reduction is one
// binary op of its two parameters, with the same op, element type, groups
// and channel kind, become one all-reduce of a tuple (one collective launch
// instead of many small ones), up to a byte and a count threshold (see
// CombineInstructionsByKey); get-tuple-elements replace the originals.
// All-reduces with control dependencies or a _scheduling_group_id frontend
// attribute are left alone, and so is a module with a layout-constrained
// all-reduce. The combined op keeps the first member's reduction, groups
// and channel id. XLA:GPU runs it in post-fusion-optimization, once fusion
// has settled which values are materialized.
#ifndef PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_COMBINER_H_
#define PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_COMBINER_H_

#include <cstdint>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

// XLA's constructor arguments; the defaults are XLA:GPU's.
struct AllReduceCombinerOptions {
  int64_t combine_threshold_in_bytes = 30 * 1024 * 1024;
  int64_t combine_threshold_count = 256;
};

class AllReduceCombiner : public HloModulePass {
 public:
  explicit AllReduceCombiner(AllReduceCombinerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "all-reduce-combiner"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  AllReduceCombinerOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_COMBINER_H_
