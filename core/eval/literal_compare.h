// Comparing evaluated values: an ErrorSpec (absolute/relative tolerance and
// ULP distance) and a comparison that names the worst element, its index and
// both values. NaN equals NaN; tuples compare element by element.
#ifndef PASSLAB_CORE_EVAL_LITERAL_COMPARE_H_
#define PASSLAB_CORE_EVAL_LITERAL_COMPARE_H_

#include "absl/status/status.h"
#include "core/ir/literal.h"

namespace passlab {

struct ErrorSpec {
  double abs = 0;
  double rel = 0;
  int64_t max_ulps = 0;  // also accept values this many ULPs apart (floats)
};

// OK when every element of `actual` is within the spec of `expected`.
absl::Status CompareLiterals(const Literal& expected, const Literal& actual, const ErrorSpec& spec);

}  // namespace passlab

#endif  // PASSLAB_CORE_EVAL_LITERAL_COMPARE_H_
