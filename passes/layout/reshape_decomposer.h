// ReshapeDecomposer ("reshape-decomposer", after XLA's
// xla/hlo/transforms/expanders/reshape_decomposer.cc): every reshape becomes
// a bitcast, with physical transpositions (copies) where the layouts do not
// allow one: a reshape that already is a bitcast becomes one; else the
// operand is copied into the layout that makes the reshape a bitcast of it
// (when there is one), or the bitcast goes to the result layout the operand
// allows and a copy follows; else the operand is copied to the descending
// layout, bitcast, and copied to the result's layout.
//
// Runs after layout assignment, before LayoutNormalization (which needs
// every reshape to be a bitcast).
#ifndef PASSLAB_PASSES_LAYOUT_RESHAPE_DECOMPOSER_H_
#define PASSLAB_PASSES_LAYOUT_RESHAPE_DECOMPOSER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class ReshapeDecomposer : public HloModulePass {
 public:
  std::string_view name() const override { return "reshape-decomposer"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LAYOUT_RESHAPE_DECOMPOSER_H_
