// ScatterSliceSimplifier ("scatter-slice-simplifier", XLA's
// xla/backends/gpu/transforms/scatter_slice_simplifier.cc): a scatter whose
// every use ends, through elementwise ops and get-tuple-elements, in slices
// keeping the same leading part ([0:n) with stride 1) of each dimension gets
// its operands sliced to that part instead; the elementwise ops are rebuilt
// at the smaller shape (their other operands sliced too) and the slices
// vanish. Only dimensions where the (canonical) scatter's updates have size
// 1 may shrink, so no update is lost; the scatter must be in
// ScatterSimplifier's canonical form, and a path reaching the root without a
// slice stops it. Runs in XLA:GPU's optimization pipeline after
// ScatterSimplifier/ScatterExpander, before DotStrengthReduction; the scatter
// then writes only the elements that are read.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_SCATTER_SLICE_SIMPLIFIER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_SCATTER_SLICE_SIMPLIFIER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ScatterSliceSimplifier : public HloModulePass {
 public:
  std::string_view name() const override { return "scatter-slice-simplifier"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_SCATTER_SLICE_SIMPLIFIER_H_
