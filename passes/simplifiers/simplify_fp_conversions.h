// SimplifyFPConversions ("simplify-fp-conversions"), as XLA's
// xla/hlo/transforms/simplifiers/simplify_fp_conversions.cc: a chain of two
// or more converts whose results are all floating-point types collapses to
// one convert from the chain's input (or to the input itself when the types
// agree):
//   convert<f32>(convert<bf16>(x: f32))            => x
//   convert<bf16>(convert<f32>(convert<f16>(x: f64))) => convert<bf16>(x)
// This drops the intermediate roundings, so it may *increase* precision
// (f32 -> bf16 -> f32 becomes exact); XLA:GPU only runs it when
// xla_allow_excess_precision is set (the default). Values are unchanged
// where every intermediate type holds the input exactly (bf16 -> f32 ->
// bf16, f32 -> f64 -> f32). Runs after FloatNormalization (which leaves
// such round trips behind) and after the post-layout algebraic simplifier.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_SIMPLIFY_FP_CONVERSIONS_H_
#define PASSLAB_PASSES_SIMPLIFIERS_SIMPLIFY_FP_CONVERSIONS_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class SimplifyFPConversions : public HloModulePass {
 public:
  std::string_view name() const override { return "simplify-fp-conversions"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_SIMPLIFY_FP_CONVERSIONS_H_
