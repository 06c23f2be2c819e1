// ReduceDecomposer ("reduce-decomposer", after XLA's
// xla/hlo/transforms/expanders/reduce_decomposer.cc): makes every reduce
// keep its input's layout. First the inputs of a variadic reduce get the
// first input's layout (copies where they differ); then a reduce whose
// output layout is not its input's layout with the reduced dimensions
// deleted becomes a reduce into that layout followed by a copy (a physical
// transposition) into the original output layout. A reduce with a single
// convert user keeps the convert next to it and the copy goes after both.
//
// XLA:GPU runs it in the post-layout-assignment pipeline, after
// ReshapeDecomposer, with reductions the GPU emitter handles in any layout
// (IsReductionFromOrToContiguousDimensions) left alone.
#ifndef PASSLAB_PASSES_LAYOUT_REDUCE_DECOMPOSER_H_
#define PASSLAB_PASSES_LAYOUT_REDUCE_DECOMPOSER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct ReduceDecomposerOptions {
  // XLA:GPU's custom_layout_allowed predicate: reductions from or to
  // contiguous dimensions keep whatever output layout they have.
  bool allow_custom_layout_for_contiguous_reductions = false;
};

class ReduceDecomposer : public HloModulePass {
 public:
  explicit ReduceDecomposer(ReduceDecomposerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "reduce-decomposer"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  ReduceDecomposerOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LAYOUT_REDUCE_DECOMPOSER_H_
