// GatherExpander ("gather_expander"): rewrites gather without the gather op.
// The general form is a while loop over the index vectors: iteration i reads
// index vector i, dynamic-slices the operand window at that start (dynamic
// slice clamps the start into the operand exactly as gather does, so
// out-of-bounds indices need no extra code) and dynamic-update-slices it into
// row i of an [N, window...] accumulator, which is then reshaped and
// transposed into the gather's output.
//
// Modes (XLA's):
//   kEliminateAllGathers: every gather (backends without a gather emitter).
//   kEliminateSimpleGathers: only gathers that need no loop: one index
//     vector (a single dynamic-slice) or a slice covering the whole operand
//     (every start clamps to 0: a broadcast of the operand).
// Gathers with zero-element results are left to ZeroSizedHloElimination.
#ifndef PASSLAB_PASSES_EXPANDERS_GATHER_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_GATHER_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class GatherExpander : public OpExpanderPass {
 public:
  enum class Mode { kEliminateAllGathers, kEliminateSimpleGathers };

  explicit GatherExpander(Mode mode = Mode::kEliminateAllGathers) : mode_(mode) {}
  std::string_view name() const override { return "gather_expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;

 private:
  Mode mode_;
};

// Number of index vectors a gather reads (its loop trip count).
int64_t GatherLoopTripCount(const HloInstruction& gather);

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_GATHER_EXPANDER_H_
