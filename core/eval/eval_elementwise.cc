// Elementwise arithmetic with XLA's semantics.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/eval/eval_internal.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab::eval {
namespace {

int64_t MinOf(int width) { return width >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (width - 1)); }
uint64_t MaskOf(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

// Total order of floats (XLA's TOTALORDER comparison): -NaN < -Inf < ... <
// -0 < +0 < ... < +Inf < +NaN.
int64_t TotalOrderKey(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof(v));
  // Negative floats sort in reverse of their bit patterns.
  return bits < 0 ? bits ^ std::numeric_limits<int64_t>::max() : bits;
}

bool CompareFloat(double a, double b, ComparisonDirection d, bool total) {
  if (total) {
    int64_t x = TotalOrderKey(a), y = TotalOrderKey(b);
    switch (d) {
      case ComparisonDirection::kEq: return x == y;
      case ComparisonDirection::kNe: return x != y;
      case ComparisonDirection::kLt: return x < y;
      case ComparisonDirection::kLe: return x <= y;
      case ComparisonDirection::kGt: return x > y;
      case ComparisonDirection::kGe: return x >= y;
    }
  }
  switch (d) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kLt: return a < b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kGe: return a >= b;
  }
  return false;
}

template <typename T>
bool CompareOrdered(T a, T b, ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kLt: return a < b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kGe: return a >= b;
  }
  return false;
}

// Integer power by squaring, as XLA's evaluator does (negative exponents
// give 0 except for bases 1 and -1).
int64_t IntPow(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 == 0 ? 1 : -1) : 0;
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  while (exp > 0) {
    if (exp & 1) result *= b;
    b *= b;
    exp >>= 1;
  }
  return static_cast<int64_t>(result);
}

}  // namespace

int64_t Linear(const Index& idx, const std::vector<int64_t>& dims) {
  int64_t l = 0;
  for (size_t i = 0; i < dims.size(); ++i) l = l * dims[i] + idx[i];
  return l;
}

Kind KindOf(PrimitiveType t) {
  if (t == PrimitiveType::kPred) return Kind::kPred;
  if (IsSignedIntegralType(t)) return Kind::kSigned;
  if (IsUnsignedIntegralType(t)) return Kind::kUnsigned;
  if (IsComplexType(t)) return Kind::kComplex;
  return Kind::kFloat;
}

absl::Status BinaryElement(HloOpcode op, ComparisonDirection dir, ComparisonType ctype, const Literal& a,
                           int64_t i, const Literal& b, int64_t j, Literal& out, int64_t k) {
  PrimitiveType t = a.shape().element_type();
  int width = PrimitiveBitWidth(t);
  switch (KindOf(t)) {
    case Kind::kFloat: {
      double x = a.GetDouble(i), y = b.GetDouble(j);
      if (op == HloOpcode::kCompare) {
        out.SetBits(k, CompareFloat(x, y, dir, ctype == ComparisonType::kTotalOrder));
        return absl::OkStatus();
      }
      double r;
      switch (op) {
        case HloOpcode::kAdd: r = x + y; break;
        case HloOpcode::kSubtract: r = x - y; break;
        case HloOpcode::kMultiply: r = x * y; break;
        case HloOpcode::kDivide: r = x / y; break;
        case HloOpcode::kRemainder: r = std::fmod(x, y); break;
        case HloOpcode::kPower: r = std::pow(x, y); break;
        case HloOpcode::kAtan2: r = std::atan2(x, y); break;
        // IEEE 754-2019 maximum/minimum (LLVM's llvm.maximum): NaN wins and
        // -0 < +0.
        case HloOpcode::kMaximum:
          r = std::isnan(x) || std::isnan(y) ? std::nan("")
              : (x == 0 && y == 0)            ? (std::signbit(x) ? y : x)
                                              : std::max(x, y);
          break;
        case HloOpcode::kMinimum:
          r = std::isnan(x) || std::isnan(y) ? std::nan("")
              : (x == 0 && y == 0)            ? (std::signbit(x) ? x : y)
                                              : std::min(x, y);
          break;
        case HloOpcode::kComplex:
          out.SetComplex(k, {x, y});
          return absl::OkStatus();
        default:
          return absl::UnimplementedError(StrCat("'", HloOpcodeString(op), "' on floats"));
      }
      // f32 arithmetic is correctly rounded from the exact double result for
      // + - * /; narrower floats compute in f32 and round again on store.
      if (width < 32) r = static_cast<double>(static_cast<float>(r));
      out.SetDouble(k, r);
      return absl::OkStatus();
    }
    case Kind::kComplex: {
      std::complex<double> x = a.GetComplex(i), y = b.GetComplex(j);
      if (op == HloOpcode::kCompare) {
        bool r = dir == ComparisonDirection::kEq ? x == y : dir == ComparisonDirection::kNe ? x != y : false;
        out.SetBits(k, r);
        return absl::OkStatus();
      }
      std::complex<double> r;
      switch (op) {
        case HloOpcode::kAdd: r = x + y; break;
        case HloOpcode::kSubtract: r = x - y; break;
        case HloOpcode::kMultiply: r = x * y; break;
        case HloOpcode::kDivide: r = x / y; break;
        case HloOpcode::kPower: r = std::pow(x, y); break;
        default:
          return absl::UnimplementedError(StrCat("'", HloOpcodeString(op), "' on complex numbers"));
      }
      out.SetComplex(k, r);
      return absl::OkStatus();
    }
    case Kind::kPred:
    case Kind::kUnsigned: {
      uint64_t x = a.GetUint(i), y = b.GetUint(j), r;
      uint64_t mask = MaskOf(width);
      switch (op) {
        case HloOpcode::kCompare: out.SetBits(k, CompareOrdered(x, y, dir)); return absl::OkStatus();
        case HloOpcode::kAdd: r = x + y; break;
        case HloOpcode::kSubtract: r = x - y; break;
        case HloOpcode::kMultiply: r = x * y; break;
        case HloOpcode::kDivide: r = y == 0 ? mask : x / y; break;
        case HloOpcode::kRemainder: r = y == 0 ? x : x % y; break;
        case HloOpcode::kMaximum: r = std::max(x, y); break;
        case HloOpcode::kMinimum: r = std::min(x, y); break;
        case HloOpcode::kAnd: r = x & y; break;
        case HloOpcode::kOr: r = x | y; break;
        case HloOpcode::kXor: r = x ^ y; break;
        case HloOpcode::kShiftLeft: r = y >= static_cast<uint64_t>(width) ? 0 : x << y; break;
        case HloOpcode::kShiftRightLogical:
        case HloOpcode::kShiftRightArithmetic: r = y >= static_cast<uint64_t>(width) ? 0 : x >> y; break;
        case HloOpcode::kPower: r = static_cast<uint64_t>(IntPow(static_cast<int64_t>(x), static_cast<int64_t>(y))); break;
        // The high half of the double-width product (XLA's mulhi).
        case HloOpcode::kMulhi:
          r = static_cast<uint64_t>((static_cast<unsigned __int128>(x) * y) >> width);
          break;
        default:
          return absl::UnimplementedError(StrCat("'", HloOpcodeString(op), "' on ", PrimitiveTypeName(t)));
      }
      out.SetBits(k, t == PrimitiveType::kPred ? (r & 1) : (r & mask));
      return absl::OkStatus();
    }
    case Kind::kSigned: {
      int64_t x = a.GetInt(i), y = b.GetInt(j), r;
      uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
      int64_t min = MinOf(width);
      switch (op) {
        case HloOpcode::kCompare: out.SetBits(k, CompareOrdered(x, y, dir)); return absl::OkStatus();
        case HloOpcode::kAdd: r = static_cast<int64_t>(ux + uy); break;
        case HloOpcode::kSubtract: r = static_cast<int64_t>(ux - uy); break;
        case HloOpcode::kMultiply: r = static_cast<int64_t>(ux * uy); break;
        case HloOpcode::kDivide: r = y == 0 ? -1 : (x == min && y == -1) ? min : x / y; break;
        case HloOpcode::kRemainder: r = y == 0 ? x : (x == min && y == -1) ? 0 : x % y; break;
        case HloOpcode::kMaximum: r = std::max(x, y); break;
        case HloOpcode::kMinimum: r = std::min(x, y); break;
        case HloOpcode::kAnd: r = x & y; break;
        case HloOpcode::kOr: r = x | y; break;
        case HloOpcode::kXor: r = x ^ y; break;
        case HloOpcode::kShiftLeft: r = uy >= static_cast<uint64_t>(width) ? 0 : static_cast<int64_t>(ux << uy); break;
        case HloOpcode::kShiftRightLogical:
          r = uy >= static_cast<uint64_t>(width) ? 0 : static_cast<int64_t>((ux & MaskOf(width)) >> uy);
          break;
        case HloOpcode::kShiftRightArithmetic: r = uy >= static_cast<uint64_t>(width) ? (x < 0 ? -1 : 0) : x >> uy; break;
        case HloOpcode::kPower: r = IntPow(x, y); break;
        case HloOpcode::kMulhi:
          r = static_cast<int64_t>((static_cast<__int128>(x) * y) >> width);
          break;
        default:
          return absl::UnimplementedError(StrCat("'", HloOpcodeString(op), "' on ", PrimitiveTypeName(t)));
      }
      out.SetInt(k, r);
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unreachable");
}

double ReducePrecision(double value, PrimitiveType type, int exponent_bits, int mantissa_bits) {
  if (std::isnan(value)) return value;
  // Work on f64 bits for f64, f32 bits otherwise.
  if (type == PrimitiveType::kF64) {
    uint64_t x;
    std::memcpy(&x, &value, 8);
    const int src_m = 52, src_e = 11;
    if (mantissa_bits < src_m) {
      int shift = src_m - mantissa_bits;
      uint64_t last = (x >> shift) & 1;
      uint64_t base = (uint64_t{1} << (shift - 1)) - 1;
      x += base + last;
      x &= ~((uint64_t{1} << shift) - 1);
    }
    if (exponent_bits < src_e) {
      uint64_t sign = x & (uint64_t{1} << 63);
      int64_t exp = static_cast<int64_t>((x >> 52) & 0x7ff) - 1023;
      int64_t max_exp = (int64_t{1} << (exponent_bits - 1)) - 1;
      int64_t min_exp = 1 - max_exp;
      double r;
      std::memcpy(&r, &x, 8);
      if (exp > max_exp) return sign ? -HUGE_VAL : HUGE_VAL;
      if (exp < min_exp) return sign ? -0.0 : 0.0;
      return r;
    }
    double r;
    std::memcpy(&r, &x, 8);
    return r;
  }
  float f = static_cast<float>(value);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const int src_m = 23, src_e = 8;
  if (mantissa_bits < src_m) {
    int shift = src_m - mantissa_bits;
    uint32_t last = (x >> shift) & 1;
    uint32_t base = (uint32_t{1} << (shift - 1)) - 1;
    x += base + last;
    x &= ~((uint32_t{1} << shift) - 1);
  }
  float r;
  std::memcpy(&r, &x, 4);
  if (exponent_bits < src_e && std::isfinite(r)) {
    int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127;
    int32_t max_exp = (1 << (exponent_bits - 1)) - 1;
    int32_t min_exp = 1 - max_exp;
    if (exp > max_exp) return std::signbit(r) ? -HUGE_VALF : HUGE_VALF;
    if (exp < min_exp) return std::signbit(r) ? -0.0 : 0.0;
  }
  return r;
}

absl::Status UnaryElement(const HloInstruction& inst, const Literal& a, int64_t i, Literal& out, int64_t k) {
  HloOpcode op = inst.opcode();
  if (op == HloOpcode::kReal && !IsComplexType(a.shape().element_type())) {
    CopyElement(out, k, a, i);
    return absl::OkStatus();
  }
  PrimitiveType t = a.shape().element_type();
  int width = PrimitiveBitWidth(t);
  switch (KindOf(t)) {
    case Kind::kFloat: {
      double x = a.GetDouble(i), r;
      switch (op) {
        case HloOpcode::kAbs: r = std::fabs(x); break;
        case HloOpcode::kNegate: r = -x; break;
        case HloOpcode::kExp: r = std::exp(x); break;
        case HloOpcode::kExpm1: r = std::expm1(x); break;
        case HloOpcode::kLog: r = std::log(x); break;
        case HloOpcode::kLog1p: r = std::log1p(x); break;
        case HloOpcode::kLogistic: r = 1.0 / (1.0 + std::exp(-x)); break;
        case HloOpcode::kSqrt: r = std::sqrt(x); break;
        case HloOpcode::kRsqrt: r = 1.0 / std::sqrt(x); break;
        case HloOpcode::kCbrt: r = std::cbrt(x); break;
        case HloOpcode::kSin: r = std::sin(x); break;
        case HloOpcode::kCos: r = std::cos(x); break;
        case HloOpcode::kTan: r = std::tan(x); break;
        case HloOpcode::kTanh: r = std::tanh(x); break;
        case HloOpcode::kAcos: r = std::acos(x); break;
        case HloOpcode::kAcosh: r = std::acosh(x); break;
        case HloOpcode::kAsin: r = std::asin(x); break;
        case HloOpcode::kAsinh: r = std::asinh(x); break;
        case HloOpcode::kAtanh: r = std::atanh(x); break;
        case HloOpcode::kCosh: r = std::cosh(x); break;
        case HloOpcode::kSinh: r = std::sinh(x); break;
        case HloOpcode::kErf: r = std::erf(x); break;
        case HloOpcode::kCeil: r = std::ceil(x); break;
        case HloOpcode::kFloor: r = std::floor(x); break;
        case HloOpcode::kRoundNearestAfz: r = std::round(x); break;
        case HloOpcode::kRoundNearestEven: r = std::nearbyint(x); break;
        case HloOpcode::kSign: r = std::isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : x; break;
        case HloOpcode::kIsFinite: out.SetBits(k, std::isfinite(x)); return absl::OkStatus();
        case HloOpcode::kReal: case HloOpcode::kCopy: r = x; break;
        case HloOpcode::kImag: r = 0; break;
        case HloOpcode::kReducePrecision:
          r = ReducePrecision(x, t, static_cast<int>(inst.attrs().exponent_bits),
                              static_cast<int>(inst.attrs().mantissa_bits));
          break;
        default:
          return absl::UnimplementedError(StrCat("'", HloOpcodeString(op), "' on floats"));
      }
      if (width < 32) r = static_cast<double>(static_cast<float>(r));
      out.SetDouble(k, r);
      return absl::OkStatus();
    }
    case Kind::kComplex: {
      std::complex<double> x = a.GetComplex(i);
      switch (op) {
        case HloOpcode::kAbs: out.SetDouble(k, std::abs(x)); return absl::OkStatus();
        case HloOpcode::kReal: out.SetDouble(k, x.real()); return absl::OkStatus();
        case HloOpcode::kImag: out.SetDouble(k, x.imag()); return absl::OkStatus();
        case HloOpcode::kNegate: out.SetComplex(k, -x); return absl::OkStatus();
        case HloOpcode::kExp: out.SetComplex(k, std::exp(x)); return absl::OkStatus();
        case HloOpcode::kLog: out.SetComplex(k, std::log(x)); return absl::OkStatus();
        case HloOpcode::kSqrt: out.SetComplex(k, std::sqrt(x)); return absl::OkStatus();
        case HloOpcode::kSin: out.SetComplex(k, std::sin(x)); return absl::OkStatus();
        case HloOpcode::kCos: out.SetComplex(k, std::cos(x)); return absl::OkStatus();
        case HloOpcode::kTanh: out.SetComplex(k, std::tanh(x)); return absl::OkStatus();
        case HloOpcode::kTan: out.SetComplex(k, std::tan(x)); return absl::OkStatus();
        case HloOpcode::kAcos: out.SetComplex(k, std::acos(x)); return absl::OkStatus();
        case HloOpcode::kAcosh: out.SetComplex(k, std::acosh(x)); return absl::OkStatus();
        case HloOpcode::kAsin: out.SetComplex(k, std::asin(x)); return absl::OkStatus();
        case HloOpcode::kAsinh: out.SetComplex(k, std::asinh(x)); return absl::OkStatus();
        case HloOpcode::kAtanh: out.SetComplex(k, std::atanh(x)); return absl::OkStatus();
        case HloOpcode::kCosh: out.SetComplex(k, std::cosh(x)); return absl::OkStatus();
        case HloOpcode::kSinh: out.SetComplex(k, std::sinh(x)); return absl::OkStatus();
        case HloOpcode::kRsqrt: out.SetComplex(k, 1.0 / std::sqrt(x)); return absl::OkStatus();
        case HloOpcode::kExpm1: out.SetComplex(k, std::exp(x) - 1.0); return absl::OkStatus();
        case HloOpcode::kLog1p: out.SetComplex(k, std::log(1.0 + x)); return absl::OkStatus();
        case HloOpcode::kSign: out.SetComplex(k, x == 0.0 ? x : x / std::abs(x)); return absl::OkStatus();
        case HloOpcode::kIsFinite: out.SetBits(k, std::isfinite(x.real()) && std::isfinite(x.imag())); return absl::OkStatus();
        case HloOpcode::kCopy: out.SetComplex(k, x); return absl::OkStatus();
        default:
          return absl::UnimplementedError(StrCat("'", HloOpcodeString(op), "' on complex numbers"));
      }
    }
    case Kind::kPred:
    case Kind::kUnsigned: {
      uint64_t x = a.GetUint(i), r;
      switch (op) {
        case HloOpcode::kNot: r = t == PrimitiveType::kPred ? !x : ~x; break;
        case HloOpcode::kPopulationCount: r = std::popcount(x); break;
        case HloOpcode::kClz: r = (x == 0 ? 64 : std::countl_zero(x)) - (64 - width); break;
        case HloOpcode::kSign: r = x != 0; break;
        case HloOpcode::kAbs: case HloOpcode::kCopy: r = x; break;
        case HloOpcode::kNegate: r = ~x + 1; break;
        default:
          return absl::UnimplementedError(StrCat("'", HloOpcodeString(op), "' on ", PrimitiveTypeName(t)));
      }
      out.SetBits(k, t == PrimitiveType::kPred ? (r & 1) : (r & MaskOf(width)));
      return absl::OkStatus();
    }
    case Kind::kSigned: {
      int64_t x = a.GetInt(i), r;
      uint64_t ux = static_cast<uint64_t>(x) & MaskOf(width);
      switch (op) {
        case HloOpcode::kAbs: r = x < 0 ? static_cast<int64_t>(~static_cast<uint64_t>(x) + 1) : x; break;
        case HloOpcode::kNegate: r = static_cast<int64_t>(~static_cast<uint64_t>(x) + 1); break;
        case HloOpcode::kNot: r = ~x; break;
        case HloOpcode::kSign: r = x > 0 ? 1 : x < 0 ? -1 : 0; break;
        case HloOpcode::kPopulationCount: r = std::popcount(ux); break;
        case HloOpcode::kClz: r = (ux == 0 ? 64 : std::countl_zero(ux)) - (64 - width); break;
        case HloOpcode::kCopy: r = x; break;
        default:
          return absl::UnimplementedError(StrCat("'", HloOpcodeString(op), "' on ", PrimitiveTypeName(t)));
      }
      out.SetInt(k, r);
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unreachable");
}

std::optional<SimpleBinary> RecognizeSimpleBinary(const HloComputation* c) {
  if (c == nullptr || c->num_parameters() != 2 || c->instruction_count() != 3) return std::nullopt;
  const HloInstruction* r = c->root_instruction();
  if (r->operand_count() != 2 || (!IsElementwiseBinary(r->opcode()))) return std::nullopt;
  const HloInstruction* p0 = c->parameter_instruction(0);
  const HloInstruction* p1 = c->parameter_instruction(1);
  SimpleBinary s{r->opcode()};
  if (r->operand(0) == p0 && r->operand(1) == p1) {
    s.swapped = false;
  } else if (r->operand(0) == p1 && r->operand(1) == p0) {
    s.swapped = true;
  } else {
    return std::nullopt;
  }
  if (r->opcode() == HloOpcode::kCompare) {
    s.direction = r->attrs().comparison_direction;
    s.type = r->attrs().comparison_type;
  }
  return s;
}

namespace {

// Typed loops for the common float cases; results equal the generic path's.
template <typename T>
bool FastBinary(HloOpcode op, const T* a, const T* b, T* out, int64_t n) {
  switch (op) {
    case HloOpcode::kAdd: for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i]; return true;
    case HloOpcode::kSubtract: for (int64_t i = 0; i < n; ++i) out[i] = a[i] - b[i]; return true;
    case HloOpcode::kMultiply: for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b[i]; return true;
    case HloOpcode::kDivide: for (int64_t i = 0; i < n; ++i) out[i] = a[i] / b[i]; return true;
    default: return false;
  }
}

template <typename T>
bool FastUnary(HloOpcode op, const T* a, T* out, int64_t n) {
  auto each = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(f(static_cast<double>(a[i])));
    return true;
  };
  switch (op) {
    case HloOpcode::kNegate: return each([](double x) { return -x; });
    case HloOpcode::kAbs: return each([](double x) { return std::fabs(x); });
    case HloOpcode::kExp: return each([](double x) { return std::exp(x); });
    case HloOpcode::kLog: return each([](double x) { return std::log(x); });
    case HloOpcode::kSqrt: return each([](double x) { return std::sqrt(x); });
    case HloOpcode::kRsqrt: return each([](double x) { return 1.0 / std::sqrt(x); });
    case HloOpcode::kTanh: return each([](double x) { return std::tanh(x); });
    case HloOpcode::kLogistic: return each([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    default: return false;
  }
}

bool SameArrayType(Operands ops, PrimitiveType t) {
  for (const Literal* l : ops) {
    if (l->shape().element_type() != t) return false;
  }
  return true;
}

// Stochastic rounding into a narrower float type: of the two neighbours
// around x, the one away from zero is taken when the random bits are below
// the distance to the one toward zero, scaled to 2^width.
absl::StatusOr<Literal> StochasticRoundFloat(const Literal& x, const Literal& bits, const Shape& shape) {
  PrimitiveType t = shape.element_type();
  Literal out(shape);
  int width = PrimitiveBitWidth(bits.shape().element_type());
  int out_width = PrimitiveBitWidth(t);
  bool is_signed = t != PrimitiveType::kF8E8M0FNU;
  uint64_t sign_mask = is_signed ? uint64_t{1} << (out_width - 1) : 0;
  for (int64_t i = 0, count = out.element_count(); i < count; ++i) {
    double v = x.GetDouble(i);
    uint64_t nearest = DoubleToSmallFloatBits(t, v);
    double r = SmallFloatToDouble(t, nearest);
    if (!std::isfinite(v) || r == v || std::isnan(r)) {
      out.SetBits(i, nearest);
      continue;
    }
    uint64_t sign = std::signbit(v) ? sign_mask : 0;
    uint64_t mag = nearest & ~sign_mask;
    uint64_t lo_mag = std::fabs(r) > std::fabs(v) ? mag - 1 : mag;
    uint64_t lo = lo_mag == 0 ? DoubleToSmallFloatBits(t, std::signbit(v) ? -0.0 : 0.0) : (sign | lo_mag);
    uint64_t hi = sign | (lo_mag + 1);
    double lo_v = std::fabs(SmallFloatToDouble(t, lo)), hi_v = std::fabs(SmallFloatToDouble(t, hi));
    double fraction = (std::fabs(v) - lo_v) / (hi_v - lo_v);
    double threshold = std::ldexp(fraction, width);
    out.SetBits(i, static_cast<double>(bits.GetUint(i)) < threshold ? hi : lo);
  }
  return out;
}

// XLA's stochastic-convert: round |x| down or up with probability given by
// its fraction against the random bits, restore the sign, saturate.
absl::StatusOr<Literal> StochasticConvert(const HloInstruction& inst, const Literal& x, const Literal& bits) {
  const Shape& shape = inst.shape();
  if (IsFloatingPointType(shape.element_type())) return StochasticRoundFloat(x, bits, shape);
  if (!IsIntegralType(shape.element_type())) {
    return absl::UnimplementedError("stochastic-convert to a non-numeric type");
  }
  Literal out(shape);
  int width = PrimitiveBitWidth(bits.shape().element_type());
  int out_width = PrimitiveBitWidth(shape.element_type());
  bool is_signed = IsSignedIntegralType(shape.element_type());
  double lo = is_signed ? -std::ldexp(1.0, out_width - 1) : 0;
  double hi = is_signed ? std::ldexp(1.0, out_width - 1) - 1 : std::ldexp(1.0, out_width) - 1;
  for (int64_t i = 0, count = out.element_count(); i < count; ++i) {
    double v = x.GetDouble(i);
    if (std::isnan(v)) {
      out.SetInt(i, 0);
      continue;
    }
    double mag = std::fabs(v), whole = std::floor(mag);
    double scaled = std::ldexp(mag - whole, width);
    uint64_t threshold = static_cast<uint64_t>(std::min(scaled, std::ldexp(1.0, 64) - 1));
    if (bits.GetUint(i) < threshold) whole += 1;
    double r = std::signbit(v) ? -whole : whole;
    r = std::clamp(r, lo, hi);
    if (is_signed) {
      out.SetInt(i, static_cast<int64_t>(r));
    } else {
      out.SetBits(i, static_cast<uint64_t>(r));
    }
  }
  return out;
}

absl::StatusOr<Literal> BitcastConvert(const Literal& src, const Shape& shape) {
  // Reinterpret the bits; element widths may differ (XLA adds or removes a
  // minor dimension, lower addresses holding the less significant parts).
  Literal out(shape);
  int in_bits = PrimitiveBitWidth(src.shape().element_type());
  int out_bits = PrimitiveBitWidth(shape.element_type());
  if (in_bits == out_bits) {
    if (in_bits > 64) {
      std::memcpy(out.untyped_data(), src.untyped_data(), std::min(out.size_bytes(), src.size_bytes()));
      return out;
    }
    for (int64_t i = 0, count = out.element_count(); i < count; ++i) out.SetBits(i, src.GetBits(i));
  } else if (in_bits > out_bits) {
    int ratio = in_bits / out_bits;
    uint64_t mask = out_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << out_bits) - 1;
    for (int64_t i = 0, count = src.element_count(); i < count; ++i) {
      uint64_t bits = src.GetBits(i);
      for (int r = 0; r < ratio; ++r) out.SetBits(i * ratio + r, (bits >> (r * out_bits)) & mask);
    }
  } else {
    int ratio = out_bits / in_bits;
    uint64_t mask = in_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << in_bits) - 1;
    for (int64_t i = 0, count = out.element_count(); i < count; ++i) {
      uint64_t bits = 0;
      for (int r = 0; r < ratio; ++r) bits |= (src.GetBits(i * ratio + r) & mask) << (r * in_bits);
      out.SetBits(i, bits);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalElementwise(const HloInstruction& inst, Operands ops) {
  const Shape& shape = inst.shape();
  HloOpcode op = inst.opcode();
  switch (op) {
    case HloOpcode::kIota: {
      Literal out(shape);
      int64_t dim = inst.iota_dimension();
      bool is_float = IsFloatingPointType(shape.element_type()) || IsComplexType(shape.element_type());
      ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
        if (is_float) {
          out.SetDouble(linear, static_cast<double>(idx[dim]));
        } else {
          out.SetInt(linear, idx[dim]);
        }
      });
      return out;
    }
    case HloOpcode::kConvert: {
      absl::StatusOr<Literal> r = ops[0]->Convert(shape.element_type());
      if (!r.ok()) return r;
      r->set_shape_layout(shape);
      return r;
    }
    case HloOpcode::kBitcastConvert:
      return BitcastConvert(*ops[0], shape);
    case HloOpcode::kStochasticConvert:
      return StochasticConvert(inst, *ops[0], *ops[1]);
    case HloOpcode::kSelect: {
      Literal out(shape);
      const Literal& p = *ops[0];
      bool scalar = p.shape().rank() == 0;
      int w = PrimitiveByteWidth(shape.element_type());
      for (int64_t i = 0, count = out.element_count(); i < count; ++i) {
        const Literal& src = p.GetBits(scalar ? 0 : i) ? *ops[1] : *ops[2];
        std::memcpy(out.untyped_data() + i * w, src.untyped_data() + i * w, w);
      }
      return out;
    }
    case HloOpcode::kClamp: {
      const Literal& lo = *ops[0];
      const Literal& x = *ops[1];
      const Literal& hi = *ops[2];
      Literal out(shape), tmp(shape);
      bool lo_scalar = lo.shape().rank() == 0 && shape.rank() > 0, hi_scalar = hi.shape().rank() == 0 && shape.rank() > 0;
      for (int64_t i = 0, count = out.element_count(); i < count; ++i) {
        // clamp = min(max(x, lo), hi) with XLA's NaN propagation.
        if (absl::Status s = BinaryElement(HloOpcode::kMaximum, {}, {}, x, i, lo, lo_scalar ? 0 : i, tmp, i); !s.ok()) {
          return s;
        }
        if (absl::Status s = BinaryElement(HloOpcode::kMinimum, {}, {}, tmp, i, hi, hi_scalar ? 0 : i, out, i); !s.ok()) {
          return s;
        }
      }
      return out;
    }
    default:
      break;
  }
  Literal out(shape);
  int64_t n = out.element_count();
  PrimitiveType t = ops[0]->shape().element_type();
  if (ops.size() == 2) {
    if (t == shape.element_type() && SameArrayType(ops, t)) {
      if (t == PrimitiveType::kF32 &&
          FastBinary(op, ops[0]->data<float>().data(), ops[1]->data<float>().data(), out.data<float>().data(), n)) {
        return out;
      }
      if (t == PrimitiveType::kF64 &&
          FastBinary(op, ops[0]->data<double>().data(), ops[1]->data<double>().data(), out.data<double>().data(), n)) {
        return out;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      if (absl::Status s = BinaryElement(op, inst.attrs().comparison_direction, inst.attrs().comparison_type, *ops[0], i,
                                         *ops[1], i, out, i);
          !s.ok()) {
        return s;
      }
    }
    return out;
  }
  if (t == shape.element_type()) {
    if (t == PrimitiveType::kF32 && FastUnary(op, ops[0]->data<float>().data(), out.data<float>().data(), n)) return out;
    if (t == PrimitiveType::kF64 && FastUnary(op, ops[0]->data<double>().data(), out.data<double>().data(), n)) return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(UnaryElement(inst, *ops[0], i, out, i));
  }
  return out;
}

}  // namespace passlab::eval
