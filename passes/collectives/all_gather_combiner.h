// AllGatherCombiner ("all-gather-combiner"): independent all-gathers along
// the same dimension, with the same element type, groups and channel kind
// become one all-gather of a tuple, up to a byte and a count threshold;
// get-tuple-elements replace the originals. An all-gather that
// (transitively) reads another is never combined with it. Runs in
// post-fusion-optimization next to AllReduceCombiner.
#ifndef PASSLAB_PASSES_COLLECTIVES_ALL_GATHER_COMBINER_H_
#define PASSLAB_PASSES_COLLECTIVES_ALL_GATHER_COMBINER_H_

#include <cstdint>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct AllGatherCombinerOptions {
  int64_t combine_threshold_bytes = 30 * 1024 * 1024;  // XLA:GPU's default
  int64_t combine_threshold_count = 256;
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
