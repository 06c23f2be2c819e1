// FloatSupport (after XLA's float_support.h): what a backend can do with a
// low-precision float type (bf16 by default) next to its high-precision type
// (f32). FloatNormalization asks it which operands/outputs may stay low
// precision and which instructions may mix the two.
//
// The base class is XLA's conservative default: only instructions that move
// values without computing on them (tuple, get-tuple-element, call, while,
// conditional, custom-call, domain, optimization-barrier, and converts from or
// to the low type) take or produce the low type. GpuFloatSupport is the
// default table passlab uses for its GPU-modelled pipeline.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_FLOAT_SUPPORT_H_
#define PASSLAB_PASSES_SIMPLIFIERS_FLOAT_SUPPORT_H_

#include "core/ir/hlo_instruction.h"

namespace passlab {

class FloatSupport {
 public:
  explicit FloatSupport(PrimitiveType low = PrimitiveType::kBF16, PrimitiveType high = PrimitiveType::kF32)
      : low_(low), high_(high) {}
  virtual ~FloatSupport() = default;

  PrimitiveType LowPrecisionType() const { return low_; }
  PrimitiveType HighPrecisionType() const { return high_; }

  // Whether operand `operand_index` of `inst` may have the low type.
  virtual bool SupportsLowPrecisionOperand(const HloInstruction& inst, int64_t operand_index) const;
  // Whether `inst`'s result may have the low type.
  virtual bool SupportsLowPrecisionOutput(const HloInstruction& inst) const;
  // Whether `inst` may mix low- and high-precision operands and output.
  virtual bool SupportsMixedPrecisions(const HloInstruction& inst) const;
  // Whether the value of operand `operand_index` reaches the output only at
  // the output's precision (data movement, max/min, ...), so that rounding
  // that operand to the output's type first changes nothing.
  static bool EffectiveOperandPrecisionIsOutputPrecision(const HloInstruction& inst, int64_t operand_index);

 private:
  PrimitiveType low_;
  PrimitiveType high_;
};

// A GPU-like table (after XLA's GpuFloatSupport on a Hopper-class GPU):
// besides the base class, data movement ops (broadcast, concatenate, copy,
// slices, pad, reshape, transpose, reverse, gather, scatter, select, ...),
// bf16 add/subtract/multiply, dot and convolution (cuBLAS/cuDNN take bf16
// and may accumulate in f32: mixed precision allowed) take and produce bf16.
// Everything else computes in f32.
class GpuFloatSupport : public FloatSupport {
 public:
  using FloatSupport::FloatSupport;
  bool SupportsLowPrecisionOperand(const HloInstruction& inst, int64_t operand_index) const override;
  bool SupportsLowPrecisionOutput(const HloInstruction& inst) const override;
  bool SupportsMixedPrecisions(const HloInstruction& inst) const override;

 private:
  bool IsSupported(const HloInstruction& inst) const;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_FLOAT_SUPPORT_H_
