// AsyncCollectiveCreator ("async-collective-creator"): turns each collective
// into a start/done pair so a scheduler can overlap it with independent
// work. all-reduce, all-gather and collective-permute use their own
// -start/-done opcodes; reduce-scatter, all-to-all and collective-broadcast
// become async-start/async-done wrapping a computation whose root is the op
// (seed 001's generic form). Values are unchanged. Runs last in
// collective-optimizations: every collective rewrite before it matches the
// synchronous forms.
#ifndef PASSLAB_PASSES_COLLECTIVES_ASYNC_COLLECTIVE_CREATOR_H_
#define PASSLAB_PASSES_COLLECTIVES_ASYNC_COLLECTIVE_CREATOR_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct AsyncCollectiveCreatorOptions {
  bool all_reduce = true;
  bool all_gather = true;
  bool collective_permute = true;
  bool reduce_scatter = true;
  bool all_to_all = true;
  bool collective_broadcast = true;
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
