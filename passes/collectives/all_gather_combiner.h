// AllGatherCombiner ("all-gather-combiner"), as XLA's
// xla/hlo/transforms/collectives/all_gather_combiner.cc: independent
// single-operand all-gathers in one sharding domain with the same groups,
// channel kind (and, by option, gather dimension and element type) become
// one all-gather of a tuple, up to a byte and a count threshold (see
// CombineInstructionsByKey); get-tuple-elements replace the originals. When
// gather dimensions differ, the combined op gathers along the most frequent
// one and the others are bitcast to it (the two dimensions swapped, the
// physical layout kept) and back. The combined op takes the first member's
// groups and channel id, merged metadata and frontend attributes, and a
// tuple of the members' shardings. A module with a layout-constrained
// all-gather is left alone. Runs in post-fusion-optimization next to
// AllReduceCombiner.
#ifndef PASSLAB_PASSES_COLLECTIVES_ALL_GATHER_COMBINER_H_
#define PASSLAB_PASSES_COLLECTIVES_ALL_GATHER_COMBINER_H_

#include <cstdint>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

// XLA's constructor arguments; the defaults are XLA:GPU's (30 MiB, 256,
// xla_gpu_enable_all_gather_combine_by_dim=false).
struct AllGatherCombinerOptions {
  int64_t combine_threshold_in_bytes = 30 * 1024 * 1024;
  int64_t combine_threshold_count = 256;
  bool combine_by_dim = false;            // only all-gathers along the same dimension
  bool combine_different_dtypes = true;   // false: only the same element type
  bool combine_while_loops = true;        // false: skip computations a while calls
};

class AllGatherCombiner : public HloModulePass {
 public:
  explicit AllGatherCombiner(AllGatherCombinerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "all-gather-combiner"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  AllGatherCombinerOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_COLLECTIVES_ALL_GATHER_COMBINER_H_
