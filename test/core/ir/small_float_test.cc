// bf16/f16/f8/f4 conversions against ml_dtypes' behaviour: exhaustive round
// trips, round-to-nearest-even at every midpoint, one rounding from double,
// and each format's limits, overflow, NaN, zero and subnormal rules.
#include "core/ir/small_float.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace passlab {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
double Value(uint32_t bits) {
  return static_cast<double>(T::FromBits(static_cast<typename T::StorageType>(bits)));
}
template <typename T>
uint32_t Bits(double v) {
  return T::FromDouble(v).bits();
}

template <typename T>
constexpr bool kIsE8m0 = !T::kFormatDescription.has_zero;
template <typename T>
constexpr bool kIsFnuz = T::kFormatDescription.nan == NanEncoding::kNegativeZero;

template <typename T>
concept HasInfinity = requires { T::Infinity(); };
static_assert(HasInfinity<bfloat16> && HasInfinity<half> && HasInfinity<float8_e5m2> &&
              HasInfinity<float8_e4m3> && HasInfinity<float8_e3m4>);
static_assert(!HasInfinity<float8_e4m3fn> && !HasInfinity<float8_e4m3fnuz> &&
              !HasInfinity<float8_e5m2fnuz> && !HasInfinity<float8_e4m3b11fnuz> &&
              !HasInfinity<float8_e8m0fnu> && !HasInfinity<float4_e2m1fn>);
static_assert(sizeof(bfloat16) == 2 && sizeof(half) == 2 && sizeof(float8_e4m3fn) == 1 &&
              sizeof(float4_e2m1fn) == 1);

// Calls F::template Run<T>() for every format.
template <typename F>
void ForEachFormat() {
  F::template Run<bfloat16>();
  F::template Run<half>();
  F::template Run<float8_e5m2>();
  F::template Run<float8_e4m3>();
  F::template Run<float8_e3m4>();
  F::template Run<float8_e4m3fn>();
  F::template Run<float8_e4m3fnuz>();
  F::template Run<float8_e5m2fnuz>();
  F::template Run<float8_e4m3b11fnuz>();
  F::template Run<float8_e8m0fnu>();
  F::template Run<float4_e2m1fn>();
}

struct RoundTrip {
  template <typename T>
  static void Run() {
    for (uint32_t b = 0; b < (uint32_t{1} << T::kBits); ++b) {
      T v = T::FromBits(static_cast<typename T::StorageType>(b));
      float f = static_cast<float>(v);
      double d = static_cast<double>(v);
      if (v.IsNaN()) {
        EXPECT_TRUE(std::isnan(f) && std::isnan(d)) << b;
        EXPECT_TRUE(T::FromFloat(f).IsNaN()) << b;
        continue;
      }
      EXPECT_EQ(static_cast<double>(f), d) << b;  // widening to float is exact
      EXPECT_EQ(T::FromFloat(f).bits(), b) << "bits " << b << " value " << d;
      EXPECT_EQ(T::FromDouble(d).bits(), b) << "bits " << b << " value " << d;
    }
  }
};

TEST(SmallFloatTest, EveryEncodingRoundTripsThroughFloatAndDouble) { ForEachFormat<RoundTrip>(); }

// Between each pair of neighbouring finite values: the midpoint goes to the
// even encoding, anything off the midpoint to the nearer value; the same for
// the negated values.
struct Midpoints {
  template <typename T>
  static void Run() {
    const uint32_t sign = SmallFloatSignMask(T::kFormatDescription);
    auto negated = [&](uint32_t bits) -> uint32_t { return kIsFnuz<T> && bits == 0 ? 0 : bits | sign; };
    for (uint32_t b = kIsE8m0<T> ? 1 : 0; b < T::Max().bits(); ++b) {
      double lo = Value<T>(b), hi = Value<T>(b + 1);
      ASSERT_LT(lo, hi) << b;
      double mid = lo + (hi - lo) / 2;  // exact
      // Without mantissa bits (e8m0) every encoding is 1.0 * 2^e: ties go up.
      uint32_t even = kIsE8m0<T> || b % 2 == 1 ? b + 1 : b;
      double below = std::nextafter(mid, lo), above = std::nextafter(mid, hi);
      EXPECT_EQ(Bits<T>(mid), even) << "tie above bits " << b;
      EXPECT_EQ(Bits<T>(below), b) << b;
      EXPECT_EQ(Bits<T>(above), b + 1) << b;
      if (sign == 0) continue;
      EXPECT_EQ(Bits<T>(-mid), negated(even)) << b;
      EXPECT_EQ(Bits<T>(-below), negated(b)) << b;
      EXPECT_EQ(Bits<T>(-above), negated(b + 1)) << b;
    }
  }
};

TEST(SmallFloatTest, MidpointsRoundToEven) { ForEachFormat<Midpoints>(); }

TEST(SmallFloatTest, RoundsTiesToEven) {
  // bf16 keeps 7 mantissa bits: 1 + 2^-8 is halfway between 1 and 1 + 2^-7.
  EXPECT_EQ(Bits<bfloat16>(1.0 + 0x1p-8), 0x3F80);                            // down to 1
  EXPECT_EQ(Value<bfloat16>(Bits<bfloat16>(1.0 + 3 * 0x1p-8)), 1.0 + 0x1p-6);  // up to even
  EXPECT_EQ(Value<half>(Bits<half>(1.0 + 0x1p-11)), 1.0);
  EXPECT_EQ(Value<half>(Bits<half>(1.0 + 3 * 0x1p-11)), 1.0 + 0x1p-9);
  EXPECT_EQ(Value<float8_e4m3fn>(Bits<float8_e4m3fn>(1.0625)), 1.0);
  EXPECT_EQ(Value<float8_e4m3fn>(Bits<float8_e4m3fn>(1.1875)), 1.25);
  EXPECT_EQ(Value<float8_e5m2>(Bits<float8_e5m2>(1.125)), 1.0);
  EXPECT_EQ(Value<float8_e5m2>(Bits<float8_e5m2>(1.375)), 1.5);
  EXPECT_EQ(Value<float4_e2m1fn>(Bits<float4_e2m1fn>(1.25)), 1.0);
  EXPECT_EQ(Value<float4_e2m1fn>(Bits<float4_e2m1fn>(2.5)), 2.0);
  EXPECT_EQ(Value<float4_e2m1fn>(Bits<float4_e2m1fn>(3.5)), 4.0);
  EXPECT_EQ(Value<float4_e2m1fn>(Bits<float4_e2m1fn>(0.25)), 0.0);  // subnormal tie
  EXPECT_EQ(Value<float4_e2m1fn>(Bits<float4_e2m1fn>(0.75)), 1.0);
}

// ml_dtypes' DoubleRound test: 1 + 2^-(m+1) + 2^-24 lies just above the tie
// between 1 and 1 + epsilon, so one rounding gives 1 + epsilon; rounding to
// float first lands exactly on the tie (2^-24 is half a float ulp at 1), which
// then rounds to even, 1.
struct DoubleRoundsOnce {
  template <typename T>
  static void Run() {
    const int m = T::kFormatDescription.mantissa_bits;
    double v = 1.0 + std::ldexp(1.0, -(m + 1)) + 0x1p-24;
    double expected = 1.0 + static_cast<double>(T::Epsilon());
    EXPECT_EQ(static_cast<double>(T::FromDouble(v)), expected) << m;
    EXPECT_EQ(static_cast<double>(T(v)), expected) << m;
    if (!kIsE8m0<T>) {  // e8m0's ties go up, so both paths agree there
      EXPECT_EQ(static_cast<double>(T::FromFloat(static_cast<float>(v))), 1.0) << m;
    }
  }
};

TEST(SmallFloatTest, DoubleIsRoundedOnceNotThroughFloat) {
  ForEachFormat<DoubleRoundsOnce>();
  // The bf16 case spelled out: v = 1 + 2^-8 + 2^-30. As a float it becomes
  // 1 + 2^-8 (a bf16 tie that goes down to 1); rounded directly it is above
  // the tie and goes up to 1 + 2^-7.
  double v = 1.0 + 0x1p-8 + 0x1p-30;
  EXPECT_EQ(static_cast<float>(v), 1.0f + 0x1p-8f);
  EXPECT_EQ(static_cast<double>(bfloat16::FromDouble(v)), 1.0 + 0x1p-7);
  EXPECT_EQ(static_cast<double>(bfloat16::FromFloat(static_cast<float>(v))), 1.0);
}

template <typename T>
void ExpectLimits(double max, double lowest, double min, double epsilon) {
  EXPECT_EQ(static_cast<double>(T::Max()), max);
  EXPECT_EQ(static_cast<double>(T::Lowest()), lowest);
  EXPECT_EQ(static_cast<double>(T::Min()), min);
  EXPECT_EQ(static_cast<double>(T::Epsilon()), epsilon);
  EXPECT_TRUE(kIsE8m0<T> || static_cast<double>(T::Min()) == std::ldexp(1.0, 1 - T::kFormatDescription.bias));
}

TEST(SmallFloatTest, LimitsMatchMlDtypes) {
  ExpectLimits<bfloat16>(0x1.FEp127, -0x1.FEp127, 0x1p-126, 0x1p-7);
  ExpectLimits<half>(65504, -65504, 0x1p-14, 0x1p-10);
  ExpectLimits<float8_e5m2>(57344, -57344, 0x1p-14, 0.25);
  ExpectLimits<float8_e4m3>(240, -240, 0x1p-6, 0.125);
  ExpectLimits<float8_e3m4>(15.5, -15.5, 0.25, 0.0625);
  ExpectLimits<float8_e4m3fn>(448, -448, 0x1p-6, 0.125);
  ExpectLimits<float8_e4m3fnuz>(240, -240, 0x1p-7, 0.125);
  ExpectLimits<float8_e5m2fnuz>(57344, -57344, 0x1p-15, 0.25);
  ExpectLimits<float8_e4m3b11fnuz>(30, -30, 0x1p-10, 0.125);
  ExpectLimits<float8_e8m0fnu>(0x1p127, 0x1p-127, 0x1p-127, 1.0);
  ExpectLimits<float4_e2m1fn>(6, -6, 1, 0.5);
  EXPECT_EQ(float8_e4m3fn::Max().bits(), 0x7E);
  EXPECT_EQ(float8_e8m0fnu::Max().bits(), 0xFE);
  EXPECT_EQ(float4_e2m1fn::Lowest().bits(), 0xF);
  EXPECT_EQ(bfloat16::Infinity().bits(), 0x7F80);
  EXPECT_EQ(half::Infinity().bits(), 0x7C00);
  EXPECT_EQ(float8_e5m2::Infinity().bits(), 0x7C);
  EXPECT_EQ(float8_e4m3::Infinity().bits(), 0x78);
  EXPECT_EQ(float8_e3m4::Infinity().bits(), 0x70);
  EXPECT_TRUE(std::isinf(static_cast<double>(float8_e3m4::Infinity())));
}

TEST(SmallFloatTest, OverflowFollowsEachFormat) {
  // IEEE-like: past max + half an ulp is inf (max has an odd mantissa, so the
  // tie itself goes up too).
  EXPECT_EQ(Bits<bfloat16>(0x1.FEp127 + 0x1p119), 0x7F80);
  EXPECT_EQ(Bits<bfloat16>(std::nextafter(0x1.FEp127 + 0x1p119, 0.0)), 0x7F7F);
  EXPECT_EQ(Bits<bfloat16>(-1e39), 0xFF80);
  EXPECT_EQ(Bits<half>(65520.0), 0x7C00);
  EXPECT_EQ(Bits<half>(65519.0), 0x7BFF);
  EXPECT_EQ(Bits<float8_e5m2>(61440.0), 0x7C);
  EXPECT_EQ(Bits<float8_e5m2>(61439.0), 0x7B);
  EXPECT_EQ(Bits<float8_e4m3>(248.0), 0x78);
  EXPECT_EQ(Bits<float8_e3m4>(15.75), 0x70);
  EXPECT_EQ(Bits<float8_e3m4>(-kInf), 0xF0);
  // e4m3fn: no inf; out of range is NaN with the input's sign.
  EXPECT_EQ(Bits<float8_e4m3fn>(464.0), 0x7E);  // tie down to 448 (even mantissa)
  EXPECT_EQ(Bits<float8_e4m3fn>(465.0), 0x7F);
  EXPECT_EQ(Bits<float8_e4m3fn>(-1e6), 0xFF);
  EXPECT_EQ(Bits<float8_e4m3fn>(kInf), 0x7F);
  EXPECT_EQ(Bits<float8_e4m3fn>(-kInf), 0xFF);
  // fnuz: the one NaN, whatever the sign.
  EXPECT_EQ(Bits<float8_e4m3fnuz>(247.0), 0x7F);
  EXPECT_EQ(Bits<float8_e4m3fnuz>(248.0), 0x80);
  EXPECT_EQ(Bits<float8_e4m3fnuz>(-kInf), 0x80);
  EXPECT_EQ(Bits<float8_e5m2fnuz>(61440.0), 0x80);
  EXPECT_EQ(Bits<float8_e5m2fnuz>(-1e6), 0x80);
  EXPECT_EQ(Bits<float8_e4m3b11fnuz>(30.9), 0x7F);
  EXPECT_EQ(Bits<float8_e4m3b11fnuz>(31.0), 0x80);
  // e8m0: NaN.
  EXPECT_EQ(Bits<float8_e8m0fnu>(0x1.4p127), 0xFE);
  EXPECT_EQ(Bits<float8_e8m0fnu>(0x1.8p127), 0xFF);
  EXPECT_EQ(Bits<float8_e8m0fnu>(0x1p300), 0xFF);
  EXPECT_EQ(Bits<float8_e8m0fnu>(kInf), 0xFF);
  // f4e2m1fn: saturates to +-6 (7 is a tie that would round up).
  EXPECT_EQ(Bits<float4_e2m1fn>(7.0), 0x7);
  EXPECT_EQ(Bits<float4_e2m1fn>(100.0), 0x7);
  EXPECT_EQ(Bits<float4_e2m1fn>(-100.0), 0xF);
  EXPECT_EQ(Bits<float4_e2m1fn>(kInf), 0x7);
  EXPECT_EQ(Bits<float4_e2m1fn>(-kInf), 0xF);
}

template <typename T>
int CountNanEncodings() {
  int n = 0;
  for (uint32_t b = 0; b < (uint32_t{1} << T::kBits); ++b) n += std::isnan(Value<T>(b)) ? 1 : 0;
  return n;
}

TEST(SmallFloatTest, NanEncodings) {
  // NaN converts to the format's quiet NaN, keeping the sign where it can.
  EXPECT_EQ(Bits<bfloat16>(kNaN), 0x7FC0);
  EXPECT_EQ(Bits<bfloat16>(-kNaN), 0xFFC0);
  EXPECT_EQ(Bits<half>(kNaN), 0x7E00);
  EXPECT_EQ(Bits<half>(-kNaN), 0xFE00);
  EXPECT_EQ(Bits<float8_e5m2>(kNaN), 0x7E);
  EXPECT_EQ(Bits<float8_e4m3>(kNaN), 0x7C);
  EXPECT_EQ(Bits<float8_e4m3>(-kNaN), 0xFC);
  EXPECT_EQ(Bits<float8_e3m4>(kNaN), 0x78);
  EXPECT_EQ(Bits<float8_e3m4>(-kNaN), 0xF8);
  EXPECT_EQ(Bits<float8_e4m3fn>(kNaN), 0x7F);
  EXPECT_EQ(Bits<float8_e4m3fn>(-kNaN), 0xFF);
  EXPECT_EQ(Bits<float8_e4m3fnuz>(-kNaN), 0x80);
  EXPECT_EQ(Bits<float8_e5m2fnuz>(kNaN), 0x80);
  EXPECT_EQ(Bits<float8_e4m3b11fnuz>(-kNaN), 0x80);
  EXPECT_EQ(Bits<float8_e8m0fnu>(-kNaN), 0xFF);
  // f4e2m1fn has no NaN: ml_dtypes gives quiet_NaN() = -0 for +NaN and its
  // negation, +0, for -NaN.
  EXPECT_EQ(Bits<float4_e2m1fn>(kNaN), 0x8);
  EXPECT_EQ(Bits<float4_e2m1fn>(-kNaN), 0x0);
  EXPECT_EQ(float4_e2m1fn::QuietNaN().bits(), 0x8);
  EXPECT_EQ(float8_e4m3fnuz::QuietNaN().bits(), 0x80);
  EXPECT_EQ(float8_e8m0fnu::QuietNaN().bits(), 0xFF);
  EXPECT_TRUE(half::QuietNaN().IsNaN());
  EXPECT_FALSE(half::QuietNaN() == half::QuietNaN());
  // How many encodings are NaN.
  EXPECT_EQ(CountNanEncodings<bfloat16>(), 254);
  EXPECT_EQ(CountNanEncodings<half>(), 2046);
  EXPECT_EQ(CountNanEncodings<float8_e5m2>(), 6);
  EXPECT_EQ(CountNanEncodings<float8_e4m3>(), 14);
  EXPECT_EQ(CountNanEncodings<float8_e3m4>(), 30);
  EXPECT_EQ(CountNanEncodings<float8_e4m3fn>(), 2);
  EXPECT_EQ(CountNanEncodings<float8_e4m3fnuz>(), 1);
  EXPECT_EQ(CountNanEncodings<float8_e5m2fnuz>(), 1);
  EXPECT_EQ(CountNanEncodings<float8_e4m3b11fnuz>(), 1);
  EXPECT_EQ(CountNanEncodings<float8_e8m0fnu>(), 1);
  EXPECT_EQ(CountNanEncodings<float4_e2m1fn>(), 0);
}

TEST(SmallFloatTest, ZeroEncodings) {
  EXPECT_EQ(Bits<bfloat16>(-0.0), 0x8000);
  EXPECT_EQ(Bits<half>(-0.0), 0x8000);
  EXPECT_EQ(Bits<float8_e5m2>(-0.0), 0x80);
  EXPECT_EQ(Bits<float8_e4m3fn>(-0.0), 0x80);
  EXPECT_EQ(Bits<float8_e4m3fn>(-1e-30), 0x80);  // underflow keeps the sign
  EXPECT_EQ(Bits<float4_e2m1fn>(-0.0), 0x8);
  EXPECT_TRUE(std::signbit(Value<float4_e2m1fn>(0x8)));
  EXPECT_TRUE(bfloat16::FromDouble(-0.0) == bfloat16::FromDouble(0.0));
  // fnuz: no -0; -0 and negative underflow give +0.
  EXPECT_EQ(Bits<float8_e4m3fnuz>(-0.0), 0x00);
  EXPECT_EQ(Bits<float8_e5m2fnuz>(-1e-30), 0x00);
  EXPECT_EQ(Bits<float8_e4m3b11fnuz>(-0.0), 0x00);
  // e8m0: no zero and no sign: +-0 and negative values are NaN.
  EXPECT_EQ(Bits<float8_e8m0fnu>(0.0), 0xFF);
  EXPECT_EQ(Bits<float8_e8m0fnu>(-0.0), 0xFF);
  EXPECT_EQ(Bits<float8_e8m0fnu>(-1.0), 0xFF);
  EXPECT_EQ(Bits<float8_e8m0fnu>(-0x1p-149), 0xFF);
  EXPECT_EQ(Value<float8_e8m0fnu>(0x00), 0x1p-127);
  EXPECT_EQ(static_cast<double>(float8_e8m0fnu()), 0x1p-127);
}

TEST(SmallFloatTest, Subnormals) {
  EXPECT_EQ(Value<half>(0x0001), 0x1p-24);
  EXPECT_EQ(Bits<half>(0x1p-25), 0x0000);          // tie to even: 0
  EXPECT_EQ(Bits<half>(0x1.8p-24), 0x0002);        // tie to even: 2 quanta
  EXPECT_EQ(Bits<half>(0x1p-14 - 0x1p-25), 0x0400);  // rounds up into the normals
  EXPECT_EQ(Value<bfloat16>(0x0001), 0x1p-133);
  EXPECT_EQ(Bits<bfloat16>(0x1p-133), 0x0001);
  EXPECT_EQ(Bits<bfloat16>(-0x1p-134), 0x8000);
  EXPECT_EQ(Value<float8_e4m3fn>(0x01), 0x1p-9);
  EXPECT_EQ(Value<float8_e4m3fnuz>(0x01), 0x1p-10);
  EXPECT_EQ(Value<float8_e5m2fnuz>(0x01), 0x1p-17);
  EXPECT_EQ(Value<float8_e4m3b11fnuz>(0x01), 0x1p-13);
  EXPECT_EQ(Value<float4_e2m1fn>(0x1), 0.5);
  // ml_dtypes' SmallCastToDenormal cases: rounding in the subnormal quantum,
  // not the normal one.
  EXPECT_EQ(Value<float8_e4m3>(Bits<float8_e4m3>(0x0.94p-6)), 0x0.Ap-6);
  EXPECT_EQ(Value<float8_e5m2>(Bits<float8_e5m2>(0x0.A8p-14)), 0x0.Cp-14);
  EXPECT_EQ(Value<float8_e3m4>(Bits<float8_e3m4>(0x0.8Ap-2)), 0x0.9p-2);
}

TEST(SmallFloatTest, E8m0Rounding) {
  EXPECT_EQ(Bits<float8_e8m0fnu>(1.0), 127);
  EXPECT_EQ(Bits<float8_e8m0fnu>(1.49), 127);
  EXPECT_EQ(Bits<float8_e8m0fnu>(1.5), 128);  // ties go up (odd exponent)
  EXPECT_EQ(Bits<float8_e8m0fnu>(3.0), 129);  // and up (even exponent)
  EXPECT_EQ(Bits<float8_e8m0fnu>(0x1p-126), 1);
  // Below 2^-126 ml_dtypes splits at 2^-127 itself, not at the midpoint.
  EXPECT_EQ(Bits<float8_e8m0fnu>(0x1.4p-127), 1);
  EXPECT_EQ(Bits<float8_e8m0fnu>(0x1p-127), 0);
  EXPECT_EQ(Bits<float8_e8m0fnu>(0x1p-140), 0);
  EXPECT_EQ(Bits<float8_e8m0fnu>(std::numeric_limits<double>::denorm_min()), 0);
  EXPECT_EQ(float8_e8m0fnu::FromFloat(std::nextafter(0x1p-126f, 0.0f)).bits(), 1);
}

TEST(SmallFloatTest, HighStorageBitsOfF4AreIgnored) {
  EXPECT_EQ(Value<float4_e2m1fn>(0xF7), 6.0);
  EXPECT_EQ(Value<float4_e2m1fn>(0x0F), -6.0);
}

}  // namespace
}  // namespace passlab
