#include "core/eval/literal_compare.h"

#include <cmath>

#include "core/ir/str_util.h"

namespace passlab {
namespace {

std::string IndexString(const Shape& shape, int64_t linear) {
  std::vector<int64_t> idx(shape.rank());
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    idx[d] = shape.dimensions(d) == 0 ? 0 : linear % shape.dimensions(d);
    linear /= std::max<int64_t>(shape.dimensions(d), 1);
  }
  return StrCat("{", Join(idx, ","), "}");
}

// Distance in units in the last place of the element type.
int64_t UlpDistance(PrimitiveType t, double a, double b) {
  if (t == PrimitiveType::kF64) {
    int64_t x, y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    if ((x < 0) != (y < 0)) return std::numeric_limits<int64_t>::max();
    return std::llabs(x - y);
  }
  uint64_t x = DoubleToSmallFloatBits(t, a), y = DoubleToSmallFloatBits(t, b);
  int width = PrimitiveBitWidth(t);
  uint64_t sign = uint64_t{1} << (width - 1);
  if ((x & sign) != (y & sign)) return std::numeric_limits<int64_t>::max();
  return x > y ? static_cast<int64_t>(x - y) : static_cast<int64_t>(y - x);
}

absl::Status Compare(const Literal& e, const Literal& a, const ErrorSpec& spec, const std::string& where) {
  if (!e.shape().Compatible(a.shape())) {
    return absl::FailedPreconditionError(StrCat(where, "shapes differ: expected ", e.shape().ToString(false), ", got ",
                                                a.shape().ToString(false)));
  }
  if (e.shape().IsTuple()) {
    for (size_t i = 0; i < e.tuple_elements().size(); ++i) {
      if (absl::Status s = Compare(e.tuple_elements()[i], a.tuple_elements()[i], spec, StrCat(where, "element ", i, ": "));
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
  if (!e.shape().IsArray()) return absl::OkStatus();
  PrimitiveType t = e.shape().element_type();
  int64_t worst = -1, mismatches = 0;
  double worst_err = -1;
  for (int64_t i = 0, count = e.element_count(); i < count; ++i) {
    bool ok;
    double err = 0;
    if (IsFloatingPointType(t) || IsComplexType(t)) {
      std::complex<double> x = e.GetComplex(i), y = a.GetComplex(i);
      if (IsFloatingPointType(t)) {
        x = e.GetDouble(i);
        y = a.GetDouble(i);
      }
      bool xn = std::isnan(x.real()) || std::isnan(x.imag()), yn = std::isnan(y.real()) || std::isnan(y.imag());
      if (xn || yn) {
        ok = xn && yn;
        err = ok ? 0 : HUGE_VAL;
      } else if (x == y) {
        ok = true;
      } else {
        err = std::abs(x - y);
        double tol = spec.abs + spec.rel * std::abs(x);
        ok = err <= tol;
        if (!ok && spec.max_ulps > 0 && IsFloatingPointType(t)) ok = UlpDistance(t, x.real(), y.real()) <= spec.max_ulps;
        if (std::isinf(err)) err = HUGE_VAL;
      }
    } else {
      ok = e.GetBits(i) == a.GetBits(i);
      err = ok ? 0 : std::fabs(static_cast<double>(e.GetInt(i)) - static_cast<double>(a.GetInt(i)));
    }
    if (!ok) {
      ++mismatches;
      if (err > worst_err) {
        worst_err = err;
        worst = i;
      }
    }
  }
  if (mismatches == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      StrCat(where, mismatches, " of ", e.element_count(), " elements differ; worst at index ",
             IndexString(e.shape(), worst), ": expected ", e.ElementToString(worst), ", got ", a.ElementToString(worst),
             " (tolerance abs ", spec.abs, ", rel ", spec.rel, ")"));
}

}  // namespace

absl::Status CompareLiterals(const Literal& expected, const Literal& actual, const ErrorSpec& spec) {
  return Compare(expected, actual, spec, "");
}

}  // namespace passlab
