#include "core/eval/output_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/eval/literal_compare.h"
#include "core/ir/primitive_type.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// ||a - e|| / ||e|| over every element (||e|| = 0: the absolute norm).
double NormRelativeError(const Literal& expected, const Literal& actual) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    const double e = expected.GetDouble(i), a = actual.GetDouble(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    diff += (a - e) * (a - e);
    norm += e * e;
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

std::string Percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g%%", 100 * x);
  return buf;
}

}  // namespace

void FlattenLeaves(const Literal& literal, std::vector<const Literal*>& leaves) {
  if (!literal.shape().IsTuple()) {
    leaves.push_back(&literal);
    return;
  }
  for (const Literal& e : literal.tuple_elements()) FlattenLeaves(e, leaves);
}

OutputCheck CheckOutputs(absl::Span<const Literal* const> expected, absl::Span<const Literal* const> actual,
                         const OutputCheckOptions& options) {
  OutputCheck out;
  if (expected.size() != actual.size()) {
    out.ok = false;
    out.message = StrCat("the program has ", actual.size(), " outputs, the reference ", expected.size());
    return out;
  }
  std::string first_wrong, first_close;
  double worst_close = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    absl::Status same = CompareLiterals(*expected[i], *actual[i], {.abs = options.tolerance, .rel = options.tolerance});
    if (same.ok()) continue;
    const Shape& shape = actual[i]->shape();
    const bool comparable = shape.IsArray() && IsFloatingPointType(shape.element_type()) &&
                            expected[i]->shape().Compatible(shape);
    const double norm_error = comparable ? NormRelativeError(*expected[i], *actual[i]) : INFINITY;
    if (options.norm_tolerance > 0 && norm_error <= options.norm_tolerance) {
      out.close_leaves.push_back(static_cast<int>(i));
      if (first_close.empty()) first_close = StrCat("output ", i, ": ", same.message());
      worst_close = std::max(worst_close, norm_error);
      continue;
    }
    out.wrong_leaves.push_back(static_cast<int>(i));
    out.wrong_norm_errors.push_back(norm_error);
    if (first_wrong.empty()) {
      first_wrong = StrCat("output ", i, ": ", same.message(),
                           comparable ? StrCat("; norm-wise error ", Percent(norm_error)) : std::string());
    }
  }
  auto list = [](const std::vector<int>& leaves) {
    std::vector<std::string> s;
    for (int i : leaves) s.push_back(StrCat(i));
    return Join(s, ",");
  };
  if (!out.wrong_leaves.empty()) {
    out.ok = false;
    out.message = StrCat(first_wrong, "; outputs that differ: ", out.wrong_leaves.size(), " of ", actual.size(), " (",
                         list(out.wrong_leaves), ")");
  } else if (!out.close_leaves.empty()) {
    out.message = StrCat("outputs match the reference in norm (worst ", Percent(worst_close), " <= ",
                         Percent(options.norm_tolerance), ") but not element by element in ", out.close_leaves.size(),
                         " output(s) (", list(out.close_leaves), "): ", first_close,
                         " -- typically rounding taking the other side of a discontinuity, such as which element of a max-pool window is the maximum");
  } else {
    out.message = "outputs match the reference";
  }
  return out;
}

}  // namespace passlab
