// AllReduceCombiner ("all-reduce-combiner"): independent all-reduces with
// the same reduction, element type, groups and channel kind become one
// all-reduce of a tuple (one collective launch instead of many small ones),
// up to a byte and a count threshold; get-tuple-elements replace the
// originals. An all-reduce that (transitively) reads another is never
// combined with it. The combined op keeps the first member's channel id.
// XLA:GPU runs it in post-fusion-optimization, once fusion has settled
// which values are materialized.
#ifndef PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_COMBINER_H_
#define PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_COMBINER_H_

#include <cstdint>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct AllReduceCombinerOptions {
  int64_t combine_threshold_bytes = 30 * 1024 * 1024;  // XLA:GPU's default
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
