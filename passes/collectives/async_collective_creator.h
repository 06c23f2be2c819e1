// AsyncCollectiveCreator ("async-collective-creator", after XLA's
// xla/hlo/transforms/collectives/async_collective_creator.cc): turns each
// collective of an enabled kind (and, for all-reduce, all-gather and
// reduce-scatter, with a result of at least its byte threshold) into a
// start/done pair so a scheduler can overlap it with independent work.
// all-reduce, all-gather and collective-permute use their own -start/-done
// opcodes unless use_generic_async_start_done; the other kinds become
// async-start/async-done wrapping a computation whose root is the op
// (seed 001's generic form). Values are unchanged. Runs last in
// collective-optimizations: every collective rewrite before it matches the
// synchronous forms.
#ifndef PASSLAB_PASSES_COLLECTIVES_ASYNC_COLLECTIVE_CREATOR_H_
#define PASSLAB_PASSES_COLLECTIVES_ASYNC_COLLECTIVE_CREATOR_H_

#include <cstdint>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

// XLA's CollectiveCreatorConfig, its predicates as flags. The defaults
// convert every kind (XLA:GPU's pipeline setting; XLA's own config defaults
// convert none).
struct AsyncCollectiveCreatorOptions {
  bool convert_all_reduce = true;
  bool convert_all_gather = true;
  bool convert_collective_permute = true;
  bool convert_reduce_scatter = true;
  bool convert_all_to_all = true;
  bool convert_collective_broadcast = true;
  // all-reduce, all-gather and reduce-scatter results smaller than their
  // threshold stay synchronous unless should_ignore_size_check.
  int64_t all_reduce_min_threshold_in_bytes = 0;
  int64_t all_gather_min_threshold_in_bytes = 0;
  int64_t reduce_scatter_min_threshold_in_bytes = 0;
  bool should_ignore_size_check = false;
  // async-start/async-done for every kind, not the own -start/-done
  // opcodes of all-reduce, all-gather and collective-permute.
  bool use_generic_async_start_done = false;
};

class AsyncCollectiveCreator : public HloModulePass {
 public:
  explicit AsyncCollectiveCreator(AsyncCollectiveCreatorOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "async-collective-creator"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  AsyncCollectiveCreatorOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_COLLECTIVES_ASYNC_COLLECTIVE_CREATOR_H_
