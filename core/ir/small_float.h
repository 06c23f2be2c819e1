// Value types for XLA's small floating-point formats: bf16, f16 and the 8- and
// 4-bit formats. Each is a 1- or 2-byte struct holding the raw encoding, with
// conversions from float and double that round to nearest even the way
// ml_dtypes (and so XLA's evaluator) does:
//   - IEEE-like formats (f16, bf16, f8e5m2, f8e4m3, f8e3m4) overflow to +-inf;
//   - "fn" (f8e4m3fn) has no inf: overflow and +-inf become NaN (S.1111.111);
//   - "fnuz" formats have one NaN (0x80), no inf and no negative zero (-0 and
//     negative values that round to zero give +0);
//   - f8e8m0fnu is exponent-only and unsigned: 0xFF is NaN, there is no zero,
//     and zero, negative values, inf and overflow all become NaN;
//   - f4e2m1fn (low nibble of a byte) has neither inf nor NaN: overflow and
//     +-inf saturate to +-6, and NaN becomes a zero (ml_dtypes: +NaN -> 0x8,
//     the "-0" it uses as quiet_NaN(); -NaN -> 0x0).
// A double converts directly (one rounding), never through float.
// Arithmetic is done by callers in float/double and rounded back.
#ifndef PASSLAB_CORE_IR_SMALL_FLOAT_H_
#define PASSLAB_CORE_IR_SMALL_FLOAT_H_

#include <cstdint>

namespace passlab {

// Which encodings a format spends on NaN and infinity.
enum class NanEncoding : uint8_t {
  kIeee,          // exponent all ones: mantissa 0 is inf, anything else NaN
  kAllOnes,       // only exponent and mantissa all ones is NaN; no inf
  kNegativeZero,  // only the sign bit alone (0x80) is NaN; no inf, no -0
  kNone,          // neither NaN nor inf; overflow saturates
};

// The parameters that define one format. Bits are laid out sign (if any),
// exponent, mantissa from the top of the format's width down to bit 0.
struct SmallFloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  NanEncoding nan;
  bool is_signed = true;
  // false for the exponent-only f8e8m0fnu: encoding 0 is 2^-bias, so there is
  // neither a zero nor subnormals.
  bool has_zero = true;
};

// Width of the encoding in bits.
constexpr int SmallFloatWidth(SmallFloatFormat f) {
  return (f.is_signed ? 1 : 0) + f.exponent_bits + f.mantissa_bits;
}
constexpr uint32_t SmallFloatSignMask(SmallFloatFormat f) {
  return f.is_signed ? uint32_t{1} << (f.exponent_bits + f.mantissa_bits) : 0;
}
constexpr uint32_t SmallFloatExponentMask(SmallFloatFormat f) {
  return ((uint32_t{1} << f.exponent_bits) - 1) << f.mantissa_bits;
}
// Encoding of the largest finite value.
constexpr uint32_t SmallFloatMaxBits(SmallFloatFormat f) {
  uint32_t all_ones = SmallFloatExponentMask(f) | ((uint32_t{1} << f.mantissa_bits) - 1);
  switch (f.nan) {
    case NanEncoding::kIeee: return SmallFloatExponentMask(f) - 1;  // below the inf exponent
    case NanEncoding::kAllOnes: return all_ones - 1;
    case NanEncoding::kNegativeZero:
    case NanEncoding::kNone: return all_ones;
  }
  return 0;
}
// The NaN a conversion of a NaN with the given sign produces (ml_dtypes:
// `negative ? -quiet_NaN() : quiet_NaN()`). For f4e2m1fn, which has no NaN,
// this is ml_dtypes' stand-in: 0x8 (-0) for +NaN, 0x0 for -NaN.
constexpr uint32_t SmallFloatNanBits(SmallFloatFormat f, bool negative) {
  uint32_t sign = negative ? SmallFloatSignMask(f) : 0;
  switch (f.nan) {
    case NanEncoding::kIeee:  // quiet bit: the top mantissa bit
      return SmallFloatExponentMask(f) | (uint32_t{1} << (f.mantissa_bits - 1)) | sign;
    case NanEncoding::kAllOnes:
      return SmallFloatExponentMask(f) | ((uint32_t{1} << f.mantissa_bits) - 1) | sign;
    case NanEncoding::kNegativeZero: return SmallFloatSignMask(f);
    case NanEncoding::kNone: return SmallFloatSignMask(f) ^ sign;
  }
  return 0;
}
// Encoding of 2^-mantissa_bits (std::numeric_limits::epsilon); a subnormal in
// formats whose bias is not above the mantissa width (f8e3m4, f4e2m1fn).
constexpr uint32_t SmallFloatEpsilonBits(SmallFloatFormat f) {
  int biased = f.bias - f.mantissa_bits;
  if (biased > 0 || !f.has_zero) return static_cast<uint32_t>(biased) << f.mantissa_bits;
  return uint32_t{1} << (f.bias - 1);  // 2^-m / 2^(1 - bias - m)
}

// The encoding nearest to `value` in format `f` (ties to even), with the
// format's rules for NaN, inf, zero and overflow listed at the top of this
// file. Exactly one rounding step, also for double inputs.
uint32_t EncodeSmallFloat(SmallFloatFormat f, double value);
// The exact value of encoding `bits` (bits above the format's width are
// ignored). NaN encodings give a NaN carrying the encoding's sign bit (fnuz:
// positive, as its one NaN is the sign bit alone).
double DecodeSmallFloat(SmallFloatFormat f, uint32_t bits);

// A value of format `kFormat` stored in the low bits of `Storage`.
template <typename Storage, SmallFloatFormat kFormat>
class SmallFloat {
  static_assert(SmallFloatWidth(kFormat) <= 8 * static_cast<int>(sizeof(Storage)));

 public:
  using StorageType = Storage;
  static constexpr SmallFloatFormat kFormatDescription = kFormat;
  static constexpr int kBits = SmallFloatWidth(kFormat);
  static constexpr bool kHasInfinity = kFormat.nan == NanEncoding::kIeee;

  constexpr SmallFloat() = default;  // encoding 0: +0 (2^-127 for f8e8m0fnu)
  explicit SmallFloat(float v) : bits_(Round(v)) {}
  explicit SmallFloat(double v) : bits_(Round(v)) {}

  // The value with encoding `bits`, taken as is.
  static constexpr SmallFloat FromBits(Storage bits) {
    SmallFloat f;
    f.bits_ = bits;
    return f;
  }
  // Nearest value to `v`, rounded once (see EncodeSmallFloat).
  static SmallFloat FromFloat(float v) { return FromBits(Round(v)); }
  static SmallFloat FromDouble(double v) { return FromBits(Round(v)); }

  constexpr Storage bits() const { return bits_; }
  // Exact: every value of these formats is a float.
  explicit operator float() const { return static_cast<float>(DecodeSmallFloat(kFormat, bits_)); }
  explicit operator double() const { return DecodeSmallFloat(kFormat, bits_); }

  bool IsNaN() const {
    double v = DecodeSmallFloat(kFormat, bits_);
    return v != v;
  }

  // std::numeric_limits counterparts, with ml_dtypes' values.
  static constexpr SmallFloat Max() { return Make(SmallFloatMaxBits(kFormat)); }
  static constexpr SmallFloat Lowest() {  // most negative finite; 2^-127 for e8m0
    return kFormat.is_signed ? Make(SmallFloatMaxBits(kFormat) | SmallFloatSignMask(kFormat)) : Make(0);
  }
  static constexpr SmallFloat Min() {  // smallest positive normal
    return Make(kFormat.has_zero ? uint32_t{1} << kFormat.mantissa_bits : 0);
  }
  static constexpr SmallFloat Epsilon() { return Make(SmallFloatEpsilonBits(kFormat)); }
  static constexpr SmallFloat Infinity()
    requires kHasInfinity
  {
    return Make(SmallFloatExponentMask(kFormat));
  }
  // A positive quiet NaN (f4e2m1fn: ml_dtypes' stand-in, -0; see above).
  static constexpr SmallFloat QuietNaN() { return Make(SmallFloatNanBits(kFormat, false)); }

  // Compares values: NaN != NaN, +0 == -0.
  friend bool operator==(SmallFloat a, SmallFloat b) {
    return static_cast<double>(a) == static_cast<double>(b);
  }

 private:
  static constexpr SmallFloat Make(uint32_t bits) { return FromBits(static_cast<Storage>(bits)); }
  static Storage Round(double v) { return static_cast<Storage>(EncodeSmallFloat(kFormat, v)); }

  Storage bits_ = 0;
};

using bfloat16 = SmallFloat<uint16_t, SmallFloatFormat{8, 7, 127, NanEncoding::kIeee}>;
using half = SmallFloat<uint16_t, SmallFloatFormat{5, 10, 15, NanEncoding::kIeee}>;
using float8_e5m2 = SmallFloat<uint8_t, SmallFloatFormat{5, 2, 15, NanEncoding::kIeee}>;
using float8_e4m3 = SmallFloat<uint8_t, SmallFloatFormat{4, 3, 7, NanEncoding::kIeee}>;
using float8_e3m4 = SmallFloat<uint8_t, SmallFloatFormat{3, 4, 3, NanEncoding::kIeee}>;
using float8_e4m3fn = SmallFloat<uint8_t, SmallFloatFormat{4, 3, 7, NanEncoding::kAllOnes}>;
using float8_e4m3fnuz = SmallFloat<uint8_t, SmallFloatFormat{4, 3, 8, NanEncoding::kNegativeZero}>;
using float8_e5m2fnuz = SmallFloat<uint8_t, SmallFloatFormat{5, 2, 16, NanEncoding::kNegativeZero}>;
using float8_e4m3b11fnuz = SmallFloat<uint8_t, SmallFloatFormat{4, 3, 11, NanEncoding::kNegativeZero}>;
using float8_e8m0fnu = SmallFloat<uint8_t, SmallFloatFormat{8, 0, 127, NanEncoding::kAllOnes,
                                                            /*is_signed=*/false, /*has_zero=*/false}>;
using float4_e2m1fn = SmallFloat<uint8_t, SmallFloatFormat{2, 1, 1, NanEncoding::kNone}>;

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_SMALL_FLOAT_H_
