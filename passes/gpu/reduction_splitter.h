// ReductionSplitter ("reduction-splitter", after XLA:GPU's pass): a reduce
// whose reduced dimensions are neither one block nor around one kept block
// (no row/column kind, e.g. reduce(f32[a,b,c,d], dims={0,2})) is split in
// two: first over its largest reduced dimension, which shrinks the data
// most, then over the rest. Only when that dimension has at least 128
// elements (XLA's threshold; smaller ones are cheap enough unsplit). Runs
// to a fixed point after ReductionDimensionGrouper (which merges adjacent
// reduced dims); single-output reduces with default layouts only.
#ifndef PASSLAB_PASSES_GPU_REDUCTION_SPLITTER_H_
#define PASSLAB_PASSES_GPU_REDUCTION_SPLITTER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ReductionSplitter : public HloModulePass {
 public:
  std::string_view name() const override { return "reduction-splitter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_GPU_REDUCTION_SPLITTER_H_
