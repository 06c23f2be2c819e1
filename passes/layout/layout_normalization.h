// LayoutNormalization ("layout_normalization", after XLA's
// xla/service/layout_normalization.cc): rewrites array ops so that they
// compute on shapes with descending ({rank-1,...,0}) layouts, with bitcasts
// between the original shapes and their normalized forms: an op whose
// operands are bitcasts of normalized values is rebuilt on those values
// (dimension attributes renumbered by the layout permutation) and its result
// bitcast back. Handled: elementwise unary/binary ops, select, clamp,
// constants, slice, dynamic-slice, dynamic-update-slice, concatenate, pad,
// reverse, broadcast, iota, reshape (a bitcast already), transpose and copy
// (both become physical transposes), reduce-window, scatter (a single scatter
// dimension, as ScatterSimplifier leaves it), convolution and
// bitcast-convert, and convolution library calls (rebuilt on bitcasts of
// their operands with renumbered dim_labels, as XLA:GPU's
// NormalizeLayoutForGpuCustomCalls does). Anything else (reduce, dot,
// parameters, other custom calls, ...) gets a bitcast to its normalized
// form and back after it, so that its users see a normalized value.
//
// Runs after layout assignment, after ReshapeDecomposer (every reshape must
// be a bitcast) and ScatterSimplifier; the algebraic simplifier cleans the
// bitcast chains up afterwards. Ops that already have descending layouts
// for their result and operands are left alone.
#ifndef PASSLAB_PASSES_LAYOUT_LAYOUT_NORMALIZATION_H_
#define PASSLAB_PASSES_LAYOUT_LAYOUT_NORMALIZATION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class LayoutNormalization : public HloModulePass {
 public:
  std::string_view name() const override { return "layout_normalization"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LAYOUT_LAYOUT_NORMALIZATION_H_
