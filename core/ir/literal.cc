#include "core/ir/literal.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/ir/str_util.h"
#include "absl/strings/str_format.h"

namespace passlab {
namespace {

template <typename T>
uint64_t BitsOf(T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <typename T>
T FromBitsAs(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

template <typename T>
double SmallToDouble(uint64_t bits) {
  return static_cast<double>(static_cast<float>(T::FromBits(static_cast<decltype(T().bits())>(bits))));
}

template <typename T>
uint64_t DoubleToSmall(double v) {
  return T::FromDouble(v).bits();
}

std::string ShortestG(PrimitiveType type, double value);

// Shortest "%g" text that reads back to the same value of `type`; integral
// values print as integers when that is no longer ("65504", not "6.55e+04").
std::string FloatText(PrimitiveType type, double value) {
  std::string shortest = ShortestG(type, value);
  if (value == std::trunc(value) && std::fabs(value) < 1e17) {
    std::string integral = absl::StrFormat("%.0f", value);
    if (std::signbit(value) && value == 0) integral = "-0";
    if (integral.size() <= shortest.size()) return integral;
  }
  return shortest;
}

std::string ShortestG(PrimitiveType type, double value) {
  for (int precision = 1; precision <= 17; ++precision) {
    std::string s = absl::StrFormat("%.*g", precision, value);
    double back = std::strtod(s.c_str(), nullptr);
    bool same;
    switch (type) {
      case PrimitiveType::kF64: same = back == value; break;
      case PrimitiveType::kF32: same = static_cast<float>(back) == static_cast<float>(value); break;
      default:
        same = DoubleToSmallFloatBits(type, back) == DoubleToSmallFloatBits(type, value);
    }
    if (same) return s;
  }
  return absl::StrFormat("%.17g", value);
}

std::string ShortestG(PrimitiveType type, double value);

// NaN text: "nan", "-nan", or "nan(0x<payload>)" when the payload is not the
// default quiet-NaN payload.
std::string NanText(PrimitiveType type, uint64_t bits) {
  int mbits = MantissaBits(type);
  int width = PrimitiveBitWidth(type);
  bool negative = (bits >> (width - 1)) & 1;
  uint64_t payload = mbits == 0 ? 0 : bits & ((uint64_t{1} << mbits) - 1);
  uint64_t quiet = mbits == 0 ? 0 : uint64_t{1} << (mbits - 1);
  // Formats whose only NaN encoding is all-ones mantissa (e4m3fn) or the
  // sign bit alone (fnuz) have no payload to speak of.
  bool has_payloads = type != PrimitiveType::kF8E4M3FN && type != PrimitiveType::kF8E4M3FNUZ &&
                      type != PrimitiveType::kF8E5M2FNUZ &&
                      type != PrimitiveType::kF8E4M3B11FNUZ && type != PrimitiveType::kF8E8M0FNU;
  if (type == PrimitiveType::kF8E4M3FNUZ || type == PrimitiveType::kF8E5M2FNUZ ||
      type == PrimitiveType::kF8E4M3B11FNUZ) {
    negative = false;  // 0x80 is NaN; its "sign" bit is the encoding.
  }
  std::string s = negative ? "-nan" : "nan";
  if (has_payloads && payload != quiet) StrAppend(&s, absl::StrFormat("(0x%x)", payload));
  return s;
}

}  // namespace

double SmallFloatToDouble(PrimitiveType type, uint64_t bits) {
  switch (type) {
    case PrimitiveType::kF16: return SmallToDouble<half>(bits);
    case PrimitiveType::kBF16: return SmallToDouble<bfloat16>(bits);
    case PrimitiveType::kF8E5M2: return SmallToDouble<float8_e5m2>(bits);
    case PrimitiveType::kF8E4M3: return SmallToDouble<float8_e4m3>(bits);
    case PrimitiveType::kF8E4M3FN: return SmallToDouble<float8_e4m3fn>(bits);
    case PrimitiveType::kF8E4M3B11FNUZ: return SmallToDouble<float8_e4m3b11fnuz>(bits);
    case PrimitiveType::kF8E5M2FNUZ: return SmallToDouble<float8_e5m2fnuz>(bits);
    case PrimitiveType::kF8E4M3FNUZ: return SmallToDouble<float8_e4m3fnuz>(bits);
    case PrimitiveType::kF8E3M4: return SmallToDouble<float8_e3m4>(bits);
    case PrimitiveType::kF8E8M0FNU: return SmallToDouble<float8_e8m0fnu>(bits);
    case PrimitiveType::kF4E2M1FN: return SmallToDouble<float4_e2m1fn>(bits);
    case PrimitiveType::kF32: return FromBitsAs<float>(bits);
    case PrimitiveType::kF64: return FromBitsAs<double>(bits);
    default: assert(false && "not a float type"); return 0;
  }
}

uint64_t DoubleToSmallFloatBits(PrimitiveType type, double value) {
  switch (type) {
    case PrimitiveType::kF16: return DoubleToSmall<half>(value);
    case PrimitiveType::kBF16: return DoubleToSmall<bfloat16>(value);
    case PrimitiveType::kF8E5M2: return DoubleToSmall<float8_e5m2>(value);
    case PrimitiveType::kF8E4M3: return DoubleToSmall<float8_e4m3>(value);
    case PrimitiveType::kF8E4M3FN: return DoubleToSmall<float8_e4m3fn>(value);
    case PrimitiveType::kF8E4M3B11FNUZ: return DoubleToSmall<float8_e4m3b11fnuz>(value);
    case PrimitiveType::kF8E5M2FNUZ: return DoubleToSmall<float8_e5m2fnuz>(value);
    case PrimitiveType::kF8E4M3FNUZ: return DoubleToSmall<float8_e4m3fnuz>(value);
    case PrimitiveType::kF8E3M4: return DoubleToSmall<float8_e3m4>(value);
    case PrimitiveType::kF8E8M0FNU: return DoubleToSmall<float8_e8m0fnu>(value);
    case PrimitiveType::kF4E2M1FN: return DoubleToSmall<float4_e2m1fn>(value);
    case PrimitiveType::kF32: return BitsOf(static_cast<float>(value));
    case PrimitiveType::kF64: return BitsOf(value);
    default: assert(false && "not a float type"); return 0;
  }
}

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) elements_.emplace_back(s);
  } else if (shape.IsArray()) {
    data_.assign(static_cast<size_t>(shape.element_count()) * PrimitiveByteWidth(shape.element_type()), 0);
  }
}

int64_t Literal::LinearIndex(absl::Span<const int64_t> index) const {
  int64_t linear = 0;
  const auto& dims = shape_.dimensions();
  for (size_t i = 0; i < index.size(); ++i) linear = linear * dims[i] + index[i];
  return linear;
}

uint64_t Literal::GetBits(int64_t linear) const {
  int w = PrimitiveByteWidth(shape_.element_type());
  uint64_t bits = 0;
  std::memcpy(&bits, data_.data() + linear * w, std::min(w, 8));
  return bits;
}

void Literal::SetBits(int64_t linear, uint64_t bits) {
  int w = PrimitiveByteWidth(shape_.element_type());
  std::memcpy(data_.data() + linear * w, &bits, std::min(w, 8));
}

double Literal::GetDouble(int64_t linear) const {
  PrimitiveType t = shape_.element_type();
  if (IsFloatingPointType(t)) return SmallFloatToDouble(t, GetBits(linear));
  if (IsComplexType(t)) return GetComplex(linear).real();
  if (IsUnsignedIntegralType(t)) return static_cast<double>(GetUint(linear));
  return static_cast<double>(GetInt(linear));
}

void Literal::SetDouble(int64_t linear, double value) {
  PrimitiveType t = shape_.element_type();
  if (IsFloatingPointType(t)) {
    SetBits(linear, DoubleToSmallFloatBits(t, value));
  } else if (IsComplexType(t)) {
    SetComplex(linear, {value, 0});
  } else if (t == PrimitiveType::kPred) {
    SetBits(linear, value != 0 ? 1 : 0);
  } else {
    SetInt(linear, static_cast<int64_t>(value));
  }
}

int64_t Literal::GetInt(int64_t linear) const {
  PrimitiveType t = shape_.element_type();
  uint64_t bits = GetBits(linear);
  int width = PrimitiveBitWidth(t);
  if (t == PrimitiveType::kPred) return bits != 0;
  if (IsSignedIntegralType(t) && width < 64) {
    uint64_t sign = uint64_t{1} << (width - 1);
    bits &= (uint64_t{1} << width) - 1;
    return static_cast<int64_t>((bits ^ sign) - sign);
  }
  if (IsUnsignedIntegralType(t) && width < 64) bits &= (uint64_t{1} << width) - 1;
  return static_cast<int64_t>(bits);
}

uint64_t Literal::GetUint(int64_t linear) const {
  PrimitiveType t = shape_.element_type();
  int width = PrimitiveBitWidth(t);
  uint64_t bits = GetBits(linear);
  if (t == PrimitiveType::kPred) return bits != 0;
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  return bits;
}

void Literal::SetInt(int64_t linear, int64_t value) {
  PrimitiveType t = shape_.element_type();
  if (t == PrimitiveType::kPred) {
    SetBits(linear, value != 0);
    return;
  }
  if (IsFloatingPointType(t) || IsComplexType(t)) {
    SetDouble(linear, static_cast<double>(value));
    return;
  }
  int width = PrimitiveBitWidth(t);
  uint64_t bits = static_cast<uint64_t>(value);
  if (width < 64) {
    bits &= (uint64_t{1} << width) - 1;
    // Sub-byte signed values are stored sign-extended to the byte, as XLA's
    // unpacked int4 does.
    if (IsSignedIntegralType(t) && width < 8 && ((bits >> (width - 1)) & 1)) {
      bits |= ~((uint64_t{1} << width) - 1) & 0xff;
    }
  }
  SetBits(linear, bits);
}

std::complex<double> Literal::GetComplex(int64_t linear) const {
  if (shape_.element_type() == PrimitiveType::kC64) {
    auto v = data<std::complex<float>>()[linear];
    return {v.real(), v.imag()};
  }
  if (shape_.element_type() == PrimitiveType::kC128) return data<std::complex<double>>()[linear];
  return {GetDouble(linear), 0};
}

void Literal::SetComplex(int64_t linear, std::complex<double> value) {
  if (shape_.element_type() == PrimitiveType::kC64) {
    data<std::complex<float>>()[linear] = {static_cast<float>(value.real()),
                                           static_cast<float>(value.imag())};
  } else if (shape_.element_type() == PrimitiveType::kC128) {
    data<std::complex<double>>()[linear] = value;
  } else {
    SetDouble(linear, value.real());
  }
}

const Literal& Literal::subliteral(absl::Span<const int64_t> index) const {
  const Literal* l = this;
  for (int64_t i : index) l = &l->elements_[i];
  return *l;
}

Literal& Literal::mutable_subliteral(absl::Span<const int64_t> index) {
  Literal* l = this;
  for (int64_t i : index) l = &l->elements_[i];
  return *l;
}

bool Literal::operator==(const Literal& other) const {
  if (!shape_.Compatible(other.shape_)) return false;
  if (shape_.IsTuple()) return elements_ == other.elements_;
  if (shape_.IsArray() && PrimitiveBitWidth(shape_.element_type()) < 8) {
    for (int64_t i = 0; i < element_count(); ++i) {
      if (GetUint(i) != other.GetUint(i)) return false;
    }
    return true;
  }
  return data_ == other.data_;
}

std::string Literal::ElementToString(int64_t linear) const {
  PrimitiveType t = shape_.element_type();
  if (t == PrimitiveType::kPred) return GetBits(linear) ? "true" : "false";
  if (IsSignedIntegralType(t)) return StrCat(GetInt(linear));
  if (IsUnsignedIntegralType(t)) return StrCat(GetUint(linear));
  if (IsComplexType(t)) {
    PrimitiveType ct = ComplexComponentType(t);
    std::complex<double> c = GetComplex(linear);
    auto part = [&](double v) {
      if (std::isnan(v)) return std::string(std::signbit(v) ? "-nan" : "nan");
      if (std::isinf(v)) return std::string(v < 0 ? "-inf" : "inf");
      return FloatText(ct, v);
    };
    return StrCat("(", part(c.real()), ", ", part(c.imag()), ")");
  }
  uint64_t bits = GetBits(linear);
  double v = SmallFloatToDouble(t, bits);
  if (std::isnan(v)) return NanText(t, bits);
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return FloatText(t, v);
}

std::string Literal::ToString() const {
  if (shape_.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i > 0) out += ", ";
      out += elements_[i].ToString();
    }
    return out + ")";
  }
  if (!shape_.IsArray()) return "{}";
  if (shape_.rank() == 0) return ElementToString(0);
  if (elided_) return "{...}";
  const auto& dims = shape_.dimensions();
  int64_t rank = shape_.rank();
  std::string out;
  int64_t linear = 0;
  // Recursive printer: rank-1 rows are "{a, b}", outer levels "{ row, row }".
  std::function<void(int64_t)> print = [&](int64_t dim) {
    if (dim == rank - 1) {
      out += "{";
      for (int64_t i = 0; i < dims[dim]; ++i) {
        if (i > 0) out += ", ";
        out += ElementToString(linear++);
      }
      out += "}";
      return;
    }
    out += "{ ";
    for (int64_t i = 0; i < dims[dim]; ++i) {
      if (i > 0) out += ", ";
      print(dim + 1);
    }
    out += " }";
  };
  print(0);
  return out;
}

void Literal::set_shape_layout(const Shape& shape) {
  assert(shape.Compatible(shape_));
  shape_ = shape;
  if (shape.IsTuple()) {
    for (size_t i = 0; i < elements_.size(); ++i) elements_[i].set_shape_layout(shape.tuple_shapes(i));
  }
}

Literal Literal::FromDoubles(const Shape& shape, absl::Span<const double> values) {
  Literal l(shape);
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < l.element_count(); ++i) {
    l.SetDouble(static_cast<int64_t>(i), values[i]);
  }
  return l;
}

Literal Literal::Tuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal l(Shape::Tuple(std::move(shapes)));
  l.elements_ = std::move(elements);
  return l;
}

absl::StatusOr<Literal> Literal::Convert(PrimitiveType type) const {
  if (!shape_.IsArray() || !IsArrayType(type)) {
    return absl::InvalidArgumentError(StrCat("cannot convert ", shape_.ToString(), " to ",
                                                   PrimitiveTypeName(type)));
  }
  Shape s = shape_;
  s.set_element_type(type);
  Literal out(s);
  PrimitiveType from = shape_.element_type();
  for (int64_t i = 0; i < element_count(); ++i) {
    if (IsComplexType(type)) {
      out.SetComplex(i, GetComplex(i));
    } else if (IsFloatingPointType(type)) {
      if (IsSignedIntegralType(from) && type == PrimitiveType::kF32) {
        out.SetBits(i, BitsOf(static_cast<float>(GetInt(i))));
      } else if (IsUnsignedIntegralType(from) && type == PrimitiveType::kF32) {
        out.SetBits(i, BitsOf(static_cast<float>(GetUint(i))));
      } else {
        out.SetDouble(i, GetDouble(i));
      }
    } else if (type == PrimitiveType::kPred) {
      out.SetBits(i, IsIntegralType(from) || from == PrimitiveType::kPred ? GetUint(i) != 0
                                                                           : GetDouble(i) != 0);
    } else if (IsFloatingPointType(from) || IsComplexType(from)) {
      // Float -> int: NaN -> 0, saturate at the type's range.
      double v = GetDouble(i);
      int width = PrimitiveBitWidth(type);
      if (std::isnan(v)) {
        out.SetInt(i, 0);
      } else if (IsSignedIntegralType(type)) {
        double lo = -std::ldexp(1.0, width - 1), hi = std::ldexp(1.0, width - 1);
        if (v <= lo) {
          out.SetInt(i, width == 64 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(lo));
        } else if (v >= hi) {
          out.SetInt(i, width == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi) - 1);
        } else {
          out.SetInt(i, static_cast<int64_t>(v));
        }
      } else {
        double hi = std::ldexp(1.0, width);
        if (v <= 0) {
          out.SetInt(i, 0);
        } else if (v >= hi) {
          out.SetBits(i, width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1);
        } else {
          out.SetBits(i, static_cast<uint64_t>(v));
        }
      }
    } else {
      // Int/pred -> int: two's complement wrap.
      out.SetInt(i, IsUnsignedIntegralType(from) ? static_cast<int64_t>(GetUint(i)) : GetInt(i));
    }
  }
  return out;
}

}  // namespace passlab
