// Value types for XLA's small floating-point formats (bf16, f16 and the 8-/4-
// bit formats), each a struct holding raw bits, with conversions from float
// and double that round to nearest even exactly as ml_dtypes/XLA do:
//   - IEEE-like formats (f16, bf16, f8e5m2, f8e4m3, f8e3m4) overflow to inf;
//   - "fn" formats (f8e4m3fn) have no inf: overflow becomes NaN (S.1111.111);
//   - "fnuz" formats have one NaN (0x80), no inf and no negative zero;
//   - f8e8m0fnu is exponent-only and unsigned (0xFF is NaN);
//   - f4e2m1fn has neither inf nor NaN: overflow saturates to +-6.
// Arithmetic is done by callers in float/double and rounded back.
#ifndef PASSLAB_CORE_IR_SMALL_FLOAT_H_
#define PASSLAB_CORE_IR_SMALL_FLOAT_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace passlab {

enum class NanEncoding : uint8_t {
  kIeee,        // exponent all ones, mantissa != 0; inf exists
  kAllOnes,     // only S.1...1 is NaN (fn formats); no inf
  kNegZero,     // only the "negative zero" pattern is NaN (fnuz); no inf
  kNone,        // no NaN, no inf (f4e2m1fn); overflow saturates
};

template <typename Storage, int kExpBits, int kMantBits, int kBias, NanEncoding kNan,
          bool kSigned = true, bool kSubnormals = true>
class SmallFloat {
 public:
  static constexpr int kBits = (kSigned ? 1 : 0) + kExpBits + kMantBits;
  using StorageType = Storage;

  constexpr SmallFloat() = default;
  static constexpr SmallFloat FromBits(Storage bits) {
    SmallFloat f;
    f.bits_ = bits;
    return f;
  }
  constexpr Storage bits() const { return bits_; }

  static SmallFloat FromDouble(double v) { return FromBits(Encode(v)); }
  static SmallFloat FromFloat(float v) { return FromBits(Encode(v)); }
  explicit SmallFloat(float v) : bits_(Encode(v)) {}
  explicit SmallFloat(double v) : bits_(Encode(v)) {}

  explicit operator double() const { return Decode(bits_); }
  explicit operator float() const { return static_cast<float>(Decode(bits_)); }

  bool IsNaN() const { return std::isnan(Decode(bits_)); }

  static SmallFloat QuietNaN() { return FromDouble(std::numeric_limits<double>::quiet_NaN()); }
  static SmallFloat Infinity() {  // only meaningful when the format has inf
    return FromBits(static_cast<Storage>(kExpMask));
  }
  static SmallFloat Max() { return FromBits(MaxBits()); }
  static SmallFloat Lowest() {
    return kSigned ? FromBits(static_cast<Storage>(MaxBits() | kSignMask)) : FromBits(0);
  }
  static SmallFloat Min() {  // smallest positive normal
    return FromBits(static_cast<Storage>(kSubnormals ? (Storage{1} << kMantBits) : 0));
  }
  static SmallFloat Epsilon() { return FromDouble(std::ldexp(1.0, -kMantBits)); }

  friend bool operator==(SmallFloat a, SmallFloat b) {
    return static_cast<double>(a) == static_cast<double>(b);
  }

 private:
  static constexpr uint32_t kMantMask = (uint32_t{1} << kMantBits) - 1;
  static constexpr uint32_t kExpField = (uint32_t{1} << kExpBits) - 1;
  static constexpr uint32_t kExpMask = kExpField << kMantBits;
  static constexpr uint32_t kSignMask = kSigned ? uint32_t{1} << (kExpBits + kMantBits) : 0;

  static constexpr Storage MaxBits() {
    switch (kNan) {
      case NanEncoding::kIeee:  // largest exponent below all-ones, full mantissa
        return static_cast<Storage>(((kExpField - 1) << kMantBits) | kMantMask);
      case NanEncoding::kAllOnes:  // all ones but the last mantissa bit
        return static_cast<Storage>(kExpMask | (kMantMask - 1));
      case NanEncoding::kNegZero:
      case NanEncoding::kNone:
        return static_cast<Storage>(kExpMask | kMantMask);
    }
    return 0;
  }
  static constexpr Storage NanBits(bool negative) {
    switch (kNan) {
      case NanEncoding::kIeee: {
        uint32_t quiet = kMantBits > 0 ? uint32_t{1} << (kMantBits - 1) : 1;
        return static_cast<Storage>(kExpMask | quiet | (negative ? kSignMask : 0));
      }
      case NanEncoding::kAllOnes:
        return static_cast<Storage>(kExpMask | kMantMask | (negative ? kSignMask : 0));
      case NanEncoding::kNegZero:
        return static_cast<Storage>(kSignMask);
      case NanEncoding::kNone:
        return 0;
    }
    return 0;
  }

  static double Decode(Storage raw) {
    uint32_t b = raw;
    bool negative = (b & kSignMask) != 0;
    uint32_t exp = (b & kExpMask) >> kMantBits;
    uint32_t mant = b & kMantMask;
    double sign = negative ? -1.0 : 1.0;
    switch (kNan) {
      case NanEncoding::kIeee:
        if (exp == kExpField) {
          if (mant == 0) return sign * std::numeric_limits<double>::infinity();
          return std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
        }
        break;
      case NanEncoding::kAllOnes:
        if (exp == kExpField && mant == kMantMask) {
          if (!kSigned || kMantBits == 0) return std::numeric_limits<double>::quiet_NaN();
          return std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
        }
        break;
      case NanEncoding::kNegZero:
        if (b == kSignMask) return std::numeric_limits<double>::quiet_NaN();
        break;
      case NanEncoding::kNone:
        break;
    }
    if (exp == 0 && kSubnormals) {
      return sign * std::ldexp(static_cast<double>(mant), 1 - kBias - kMantBits);
    }
    return sign * std::ldexp(static_cast<double>((uint32_t{1} << kMantBits) | mant),
                             static_cast<int>(exp) - kBias - kMantBits);
  }

  static Storage Encode(double v) {
    bool negative = std::signbit(v);
    if (std::isnan(v)) return NanBits(negative);
    if (!kSigned && negative && v != 0) return NanBits(false);
    uint32_t sign = negative ? kSignMask : 0;
    if (kNan == NanEncoding::kNegZero) sign = negative ? kSignMask : 0;
    double a = std::fabs(v);
    if (std::isinf(a)) return Overflow(sign);
    if (a == 0) {
      if (!kSubnormals) return 0;  // e8m0 has no zero; 2^-127 is nearest
      return kNan == NanEncoding::kNegZero ? 0 : static_cast<Storage>(sign);
    }
    int e2;
    std::frexp(a, &e2);  // a = m * 2^e2, m in [0.5, 1)
    int exponent = e2 - 1;  // a in [2^exponent, 2^(exponent+1))
    int min_exponent = (kSubnormals ? 1 : 0) - kBias;
    uint64_t bits;
    if (exponent < min_exponent) {
      // Subnormal range (or below e8m0's minimum): quantum is 2^(min - mant).
      double q = std::nearbyint(std::ldexp(a, kMantBits - min_exponent));
      if (!kSubnormals) {
        // Exponent-only format: round to the nearer of 2^min and 0 -> 2^min.
        return 0;
      }
      bits = static_cast<uint64_t>(q);  // a carry lands in the exponent field
    } else {
      double q = std::nearbyint(std::ldexp(a, kMantBits - exponent));  // in [2^m, 2^(m+1)]
      uint64_t biased = static_cast<uint64_t>(exponent + kBias);
      bits = (biased << kMantBits) + static_cast<uint64_t>(q) - (uint64_t{1} << kMantBits);
    }
    if (bits > MaxBits() || (kNan == NanEncoding::kIeee && bits >= kExpMask)) {
      return Overflow(sign);
    }
    if (kNan == NanEncoding::kNegZero && bits == 0) return 0;
    return static_cast<Storage>(bits | sign);
  }

  static Storage Overflow(uint32_t sign) {
    switch (kNan) {
      case NanEncoding::kIeee: return static_cast<Storage>(kExpMask | sign);
      case NanEncoding::kAllOnes: return NanBits(sign != 0);
      case NanEncoding::kNegZero: return NanBits(false);
      case NanEncoding::kNone: return static_cast<Storage>(MaxBits() | sign);
    }
    return 0;
  }

  Storage bits_ = 0;
};

using bfloat16 = SmallFloat<uint16_t, 8, 7, 127, NanEncoding::kIeee>;
using half = SmallFloat<uint16_t, 5, 10, 15, NanEncoding::kIeee>;
using float8_e5m2 = SmallFloat<uint8_t, 5, 2, 15, NanEncoding::kIeee>;
using float8_e4m3 = SmallFloat<uint8_t, 4, 3, 7, NanEncoding::kIeee>;
using float8_e3m4 = SmallFloat<uint8_t, 3, 4, 3, NanEncoding::kIeee>;
using float8_e4m3fn = SmallFloat<uint8_t, 4, 3, 7, NanEncoding::kAllOnes>;
using float8_e4m3fnuz = SmallFloat<uint8_t, 4, 3, 8, NanEncoding::kNegZero>;
using float8_e5m2fnuz = SmallFloat<uint8_t, 5, 2, 16, NanEncoding::kNegZero>;
using float8_e4m3b11fnuz = SmallFloat<uint8_t, 4, 3, 11, NanEncoding::kNegZero>;
using float8_e8m0fnu =
    SmallFloat<uint8_t, 8, 0, 127, NanEncoding::kAllOnes, /*kSigned=*/false, /*kSubnormals=*/false>;
using float4_e2m1fn = SmallFloat<uint8_t, 2, 1, 1, NanEncoding::kNone>;

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_SMALL_FLOAT_H_
