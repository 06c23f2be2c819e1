// Elementwise arithmetic with XLA's semantics.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/eval/eval_internal.h"
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
      // + - * /; store rounds to the element type.
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

}  // namespace passlab::eval
