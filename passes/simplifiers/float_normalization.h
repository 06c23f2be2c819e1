// FloatNormalization ("float-normalization-bf16" for bf16, after XLA's
// float_normalization.h): makes every use of the low-precision float type
// (bf16) one the backend supports, per a FloatSupport table:
//   - an operand the instruction cannot take in bf16 gets convert(f32);
//   - a bf16 result it cannot produce is computed in f32 and converted back
//     (with excess precision allowed, as XLA's default, a user that converts
//     the result to f32 anyway reads the f32 value directly);
//   - an instruction that cannot mix bf16 and f32 either runs entirely in
//     bf16 (when the f32 operands only feed the output at its precision) or
//     entirely in f32, called computations (reducers) included: those are
//     cloned with f32 parameters and result.
// Skipped as in XLA: tuple, get-tuple-element, constant, domain, parameter,
// fusion, convert, call, custom-call, while, conditional, bitcast-convert
// and side-effecting instructions. Sort, all-reduce and reduce-scatter with
// one output per operand are handled output by output (XLA's
// HandleMultipleOutputs); other instructions with tuple operands or results
// are left alone. Runs DCE afterwards when it changed something.
//
// XLA runs it after layout assignment; it must run after every pass that
// creates bf16 arithmetic.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_FLOAT_NORMALIZATION_H_
#define PASSLAB_PASSES_SIMPLIFIERS_FLOAT_NORMALIZATION_H_

#include <memory>
#include <string>

#include "core/pass/hlo_pass_interface.h"
#include "passes/simplifiers/float_support.h"

namespace passlab {

struct FloatNormalizationOptions {
  // Which ops take/produce the low type; null means GpuFloatSupport (bf16).
  std::shared_ptr<const FloatSupport> support;
  // XLA's xla_allow_excess_precision (default true): a convert-to-f32 user
  // of a result this pass widened reads the wide value, skipping a bf16
  // rounding. Results may then differ from the unnormalized program by that
  // rounding (more precise, not equal).
  bool allow_excess_precision = true;
};

class FloatNormalization : public HloModulePass {
 public:
  explicit FloatNormalization(FloatNormalizationOptions options = {});
  std::string_view name() const override { return name_; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  std::shared_ptr<const FloatSupport> support_;
  bool allow_excess_precision_;
  std::string name_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_FLOAT_NORMALIZATION_H_
