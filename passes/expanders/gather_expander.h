// GatherExpander ("gather_expander"), as XLA's
// xla/service/gather_expander.cc: rewrites gather without the gather op.
//   - A gather whose slice is the whole operand (every start clamps to 0)
//     becomes a broadcast of the operand reshaped without its collapsed and
//     batching dimensions.
//   - Otherwise a counted while loop over the index vectors (XLA's
//     WhileUtil::MakeCountedLoop): the indices are canonicalized to
//     [N, K] (or [N] for scalar indices), iteration i reads index vector i,
//     expands it into an operand start (batching dimensions from i's
//     coordinates), dynamic-slices the operand window there (dynamic slice
//     clamps the start exactly as gather does) and dynamic-update-slices it
//     into row i of an [N, window...] accumulator, which is then reshaped
//     into the batch dimensions and transposed into the gather's output.
//
// Modes (XLA's):
//   kEliminateAllGathers: every gather (backends without a gather emitter).
//   kEliminateSimpleGathers: only gathers with one index vector (a loop of
//     one trip) or whose slice is the whole operand.
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
