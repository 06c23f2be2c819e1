// FusionWrapper ("fusion-wrapper", XLA's xla/backends/gpu/transforms/
// fusion_wrapper.cc on emitters/fusion_wrapper_base.cc): wraps every op
// that is still unfused and that the emitters run as a kernel into a fusion
// of its own ("wrapped_<opcode>", calling "wrapped_<opcode>_computation"),
// so that after it every kernel is a fusion. Walks the entry computation
// and, through while/conditional/call/async-start, the computations they
// run; fused computations are not entered. Control dependencies move to the
// fusion. Copies, custom calls (library calls), collectives, sorts and
// other ops the runtime runs itself are left alone, as in XLA; so are the
// ops XLA wraps but passlab's emitters only compile unfused (scatter) or
// not at all (complex, real, imag, reduce-precision, stochastic-convert,
// map), and dynamic-update-slice: the CPU runtime updates an unfused one in
// place, and a fusion only with output_to_operand_aliasing.
//
// Runs at the end of XLA:GPU's pipeline (its own "fusion-wrapper"
// sub-pipeline after rematerialization, and again first in
// "pre-scheduling-passes"), after every pass that edits single ops.
#ifndef PASSLAB_PASSES_FUSION_FUSION_WRAPPER_H_
#define PASSLAB_PASSES_FUSION_FUSION_WRAPPER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class FusionWrapper : public HloModulePass {
 public:
  std::string_view name() const override { return "fusion-wrapper"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_FUSION_WRAPPER_H_
