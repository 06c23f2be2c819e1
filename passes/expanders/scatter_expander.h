// ScatterExpander ("scatter_expander"): rewrites scatter into a while loop
// over the scatter indices. Iteration i reads index vector i, turns it into a
// start position in the operand (scatter_dims_to_operand_dims, batching
// dims), dynamic-slices the operand window and the update window, combines
// them with the scatter's update computation (a map), and dynamic-update-
// slices the result back. A window that does not fit inside the operand is
// left untouched, which is XLA's out-of-bounds rule for scatter.
//
// Modes (XLA's):
//   kEliminateAllScatters: every scatter (backends without a scatter emitter).
//   kEliminateSimpleScatters: only scatters with one index (trip count 1);
//     WhileLoopSimplifier then inlines the one-trip loop, leaving a
//     dynamic-update-slice.
//   kEliminateIndeterministicScatters: scatters whose result may depend on
//     the order updates are applied: indices not marked unique and an update
//     computation that is not an associative, commutative binary op (float
//     add is not associative). Conservative: never misses one.
//
// Needs nothing before it. After it, the matched scatters are gone; the
// expansion is plain HLO (while, dynamic-slice, map, select, ...).
#ifndef PASSLAB_PASSES_EXPANDERS_SCATTER_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_SCATTER_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class ScatterExpander : public OpExpanderPass {
 public:
  enum class Mode { kEliminateAllScatters, kEliminateSimpleScatters, kEliminateIndeterministicScatters };

  explicit ScatterExpander(Mode mode = Mode::kEliminateAllScatters) : mode_(mode) {}
  std::string_view name() const override { return "scatter_expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;

 private:
  Mode mode_;
};

// Number of index vectors a scatter applies (its loop trip count).
int64_t ScatterIndicesCount(const HloInstruction& scatter);
// Whether the scatter's result is independent of the order updates apply.
bool IsScatterDeterministic(const HloInstruction& scatter);

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_SCATTER_EXPANDER_H_
