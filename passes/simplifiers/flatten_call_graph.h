// FlattenCallGraph ("flatten-call-graph"), after XLA's
// xla/hlo/transforms/simplifiers/flatten_call_graph.cc: gives every caller of
// a computation its own copy ("name.clone"), together with copies of
// everything the copy calls, so that each computation has one call site.
// Computations are visited callees first; callers in unique-id order, the
// first keeping the original (unless it calls it twice, as a while whose
// condition is its body). With skip_cloning_for_calls (XLA's
// SkipCloningForCalls handler) computations only kCall instructions call
// are left shared. Passes that edit a callee in place (while-loop passes,
// layout assignment) rely on this.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_FLATTEN_CALL_GRAPH_H_
#define PASSLAB_PASSES_SIMPLIFIERS_FLATTEN_CALL_GRAPH_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct FlattenCallGraphOptions {
  // XLA's FlattenCallGraph(FlattenCallGraph::SkipCloningForCalls).
  bool skip_cloning_for_calls = false;
};

class FlattenCallGraph : public HloModulePass {
 public:
  explicit FlattenCallGraph(FlattenCallGraphOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "flatten-call-graph"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  FlattenCallGraphOptions options_;
};

// A copy of `computation` added to its module under a fresh name; calls
// inside it still reach the same computations.
HloComputation* CloneComputation(const HloComputation& computation);

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_FLATTEN_CALL_GRAPH_H_
