#include "core/ir/small_float.h"

#include <cmath>
#include <limits>

namespace passlab {
namespace {

// Rounds an exactly represented double to the nearest integer, ties to even,
// independently of the floating-point environment's rounding mode.
double RoundHalfToEven(double x) {
  double floor = std::floor(x);
  double fraction = x - floor;  // exact: x and floor share their exponent range
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return std::fmod(floor, 2.0) == 0 ? floor : floor + 1;
}

// What a value too large for the format becomes (ml_dtypes' non-saturating
// conversion: `negative ? -infinity() : infinity()`, where formats without
// inf use NaN, and f4e2m1fn its largest finite value, as infinity()).
uint32_t OverflowBits(SmallFloatFormat f, bool negative) {
  uint32_t sign = negative ? SmallFloatSignMask(f) : 0;
  switch (f.nan) {
    case NanEncoding::kIeee: return SmallFloatExponentMask(f) | sign;
    case NanEncoding::kAllOnes: return SmallFloatNanBits(f, negative);
    case NanEncoding::kNegativeZero: return SmallFloatNanBits(f, false);
    case NanEncoding::kNone: return SmallFloatMaxBits(f) | sign;
  }
  return 0;
}

}  // namespace

uint32_t EncodeSmallFloat(SmallFloatFormat f, double value) {
  const bool negative = std::signbit(value);
  const uint32_t sign = negative ? SmallFloatSignMask(f) : 0;
  if (std::isnan(value)) return SmallFloatNanBits(f, negative);
  if (std::isinf(value)) return OverflowBits(f, negative);
  if (value == 0) {
    if (!f.has_zero) return SmallFloatNanBits(f, false);  // e8m0 has no zero
    return f.nan == NanEncoding::kNegativeZero ? 0 : sign;
  }
  if (negative && !f.is_signed) return SmallFloatNanBits(f, false);

  const double magnitude = std::fabs(value);
  int frexp_exponent;
  std::frexp(magnitude, &frexp_exponent);
  const int exponent = frexp_exponent - 1;  // magnitude in [2^exponent, 2^(exponent+1))
  const int min_normal_exponent = 1 - f.bias;
  const uint64_t implicit_one = uint64_t{1} << f.mantissa_bits;
  uint64_t bits;
  if (exponent < min_normal_exponent) {
    if (!f.has_zero) {
      // e8m0 below 2^-126: ml_dtypes rounds as if encoding 0 were a zero with
      // 2^-126 as the next step, so everything up to 2^-127 gives 0x00 (which
      // is 2^-127) and everything above gives 0x01 (2^-126).
      return magnitude > std::ldexp(1.0, -f.bias) ? 1 : 0;
    }
    // Subnormal: count quanta of 2^(min_normal_exponent - mantissa_bits). A
    // result of 2^mantissa_bits is the smallest normal, encoded the same way.
    bits = static_cast<uint64_t>(
        RoundHalfToEven(std::ldexp(magnitude, f.mantissa_bits - min_normal_exponent)));
  } else {
    // Significand scaled to [2^m, 2^(m+1)]; rounding up to 2^(m+1) carries
    // into the exponent field. With m = 0 (e8m0) the only candidates are 1
    // and 2, so a tie goes up, as in ml_dtypes and LLVM's APFloat.
    uint64_t significand = static_cast<uint64_t>(
        RoundHalfToEven(std::ldexp(magnitude, f.mantissa_bits - exponent)));
    bits = (static_cast<uint64_t>(exponent + f.bias) << f.mantissa_bits) + significand - implicit_one;
  }
  if (bits > SmallFloatMaxBits(f)) return OverflowBits(f, negative);
  if (bits == 0 && f.nan == NanEncoding::kNegativeZero) return 0;  // no -0
  return static_cast<uint32_t>(bits) | sign;
}

double DecodeSmallFloat(SmallFloatFormat f, uint32_t bits) {
  bits &= (uint32_t{1} << SmallFloatWidth(f)) - 1;
  const uint32_t exponent_field = (uint32_t{1} << f.exponent_bits) - 1;
  const uint32_t mantissa_mask = (uint32_t{1} << f.mantissa_bits) - 1;
  const bool negative = (bits & SmallFloatSignMask(f)) != 0;
  const uint32_t exponent = (bits & SmallFloatExponentMask(f)) >> f.mantissa_bits;
  const uint32_t mantissa = bits & mantissa_mask;
  const double sign = negative ? -1.0 : 1.0;
  const double nan = std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
  switch (f.nan) {
    case NanEncoding::kIeee:
      if (exponent == exponent_field) {
        return mantissa == 0 ? sign * std::numeric_limits<double>::infinity() : nan;
      }
      break;
    case NanEncoding::kAllOnes:
      if (exponent == exponent_field && mantissa == mantissa_mask) return nan;
      break;
    case NanEncoding::kNegativeZero:
      // The sign bit is the NaN's encoding, not a sign.
      if (bits == SmallFloatSignMask(f)) return std::numeric_limits<double>::quiet_NaN();
      break;
    case NanEncoding::kNone:
      break;
  }
  if (exponent == 0 && f.has_zero) {  // zero or subnormal
    return sign * std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  }
  return sign * std::ldexp(static_cast<double>((uint32_t{1} << f.mantissa_bits) | mantissa),
                           static_cast<int>(exponent) - f.bias - f.mantissa_bits);
}

}  // namespace passlab
