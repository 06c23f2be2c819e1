// TupleSimplifier ("tuple-simplifier"): removes tuple packing round trips:
//   get-tuple-element(tuple(a0..an), i)        => ai
//   tuple(gte(t,0), gte(t,1), ..., gte(t,n-1)) => t   (same shape, all elements)
// Runs anywhere; after it no GTE reads a tuple instruction directly.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_TUPLE_SIMPLIFIER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_TUPLE_SIMPLIFIER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class TupleSimplifier : public HloModulePass {
 public:
  std::string_view name() const override { return "tuple-simplifier"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_TUPLE_SIMPLIFIER_H_
