// FlattenCallGraph ("flatten-call-graph"): makes every computation reached by
// a call, while or conditional have exactly one such call site, cloning
// computations used from several (reducers and comparators may stay shared).
// Passes that edit a callee in place (while-loop passes, layout assignment)
// rely on this.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_FLATTEN_CALL_GRAPH_H_
#define PASSLAB_PASSES_SIMPLIFIERS_FLATTEN_CALL_GRAPH_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class FlattenCallGraph : public HloModulePass {
 public:
  std::string_view name() const override { return "flatten-call-graph"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

// A copy of `computation` added to its module under a fresh name; calls
// inside it still reach the same computations.
HloComputation* CloneComputation(const HloComputation& computation);

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_FLATTEN_CALL_GRAPH_H_
