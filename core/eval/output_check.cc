#include "core/eval/output_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/eval/literal_compare.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
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

bool IsConstant(const Literal& l, bool* all_zero) {
  *all_zero = false;
  if (!l.shape().IsArray() || l.element_count() < 2) return false;
  const bool is_float = IsFloatingPointType(l.shape().element_type());
  const double first = is_float ? l.GetDouble(0) : 0;
  const uint64_t first_bits = l.GetBits(0);
  for (int64_t i = 1; i < l.element_count(); ++i) {
    if (is_float ? l.GetDouble(i) != first : l.GetBits(i) != first_bits) return false;
  }
  *all_zero = is_float ? first == 0 : first_bits == 0;
  return true;
}

// Elements where `actual` is NaN or infinite and `expected` is finite.
int64_t NewNonFinite(const Literal& expected, const Literal& actual) {
  if (!actual.shape().IsArray() || !IsFloatingPointType(actual.shape().element_type()) ||
      !expected.shape().Compatible(actual.shape())) {
    return 0;
  }
  int64_t n = 0;
  for (int64_t i = 0; i < actual.element_count(); ++i) {
    n += !std::isfinite(actual.GetDouble(i)) && std::isfinite(expected.GetDouble(i));
  }
  return n;
}

std::string Degenerate(absl::Span<const Literal* const> expected, absl::Span<const Literal* const> actual,
                       const std::vector<int>& wrong) {
  int constant = 0, zero = 0, non_finite_leaves = 0, first_non_finite = -1;
  int64_t non_finite = 0;
  for (int i : wrong) {
    bool all_zero = false;
    if (IsConstant(*expected[i], &all_zero)) {
      ++constant;
      zero += all_zero;
    }
    if (int64_t n = NewNonFinite(*expected[i], *actual[i]); n > 0) {
      non_finite += n;
      if (non_finite_leaves++ == 0) first_non_finite = i;
    }
  }
  std::vector<std::string> why;
  if (constant > 0 && constant == static_cast<int>(wrong.size())) {
    why.push_back(StrCat("every differing output is constant in the reference (", constant, ", ", zero,
                         " all zero): the random inputs do not exercise the program (a scalar such as a ReLU6 bound "
                         "or a dropout rate drawn at random can make a whole step constant)"));
  } else if (constant > 0) {
    why.push_back(StrCat(constant, " of the ", wrong.size(), " differing outputs are constant in the reference (",
                         zero, " all zero)"));
  }
  if (non_finite_leaves > 0) {
    why.push_back(StrCat("the compiled run has NaN/Inf where the reference is finite (", non_finite, " elements in ",
                         non_finite_leaves, " outputs, first output ", first_non_finite,
                         "): a cancellation on these inputs, such as a variance computed as E[x^2]-E[x]^2 in the "
                         "element type going negative before rsqrt, where the evaluator computes in double"));
  }
  if (why.empty()) return "";
  return StrCat(Join(why, "; "), "; give the real arguments (--args DIR, or an HLO snapshot) to decide");
}

bool IsPassThrough(HloOpcode op) {
  return op == HloOpcode::kAdd || op == HloOpcode::kConvert || op == HloOpcode::kBroadcast ||
         op == HloOpcode::kReshape || op == HloOpcode::kBitcast || op == HloOpcode::kCopy ||
         op == HloOpcode::kMultiply;
}

// A subtract reaching `inst` through at most `depth` pass-through ops.
const HloInstruction* SubtractFeeding(const HloInstruction* inst, int depth) {
  for (const HloInstruction* op : inst->operands()) {
    if (op->opcode() == HloOpcode::kSubtract) return op;
    if (depth > 0 && IsPassThrough(op->opcode())) {
      if (const HloInstruction* s = SubtractFeeding(op, depth - 1)) return s;
    }
  }
  return nullptr;
}

}  // namespace

std::string OutputCheck::Verdict() const {
  if (ok) return StrCat("ok: ", message);
  if (!degenerate.empty()) return StrCat("FAILED, inconclusive (", degenerate, "): ", message);
  return StrCat("FAILED: ", message);
}

std::vector<std::string> FindCancellationSites(const HloModule& module, int limit) {
  std::vector<std::string> sites;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* inst : c->instructions()) {
      if (static_cast<int>(sites.size()) >= limit) return sites;
      const HloOpcode op = inst->opcode();
      if (op == HloOpcode::kBatchNormTraining || op == HloOpcode::kBatchNormGrad) {
        sites.push_back(StrCat(HloOpcodeString(op), " '", inst->name(),
                               "' (XLA's batchnorm_expander computes its variance as E[x^2]-E[x]^2)"));
        continue;
      }
      if (op != HloOpcode::kRsqrt && op != HloOpcode::kSqrt && op != HloOpcode::kLog) continue;
      if (const HloInstruction* sub = SubtractFeeding(inst, 3)) {
        sites.push_back(StrCat("subtract '", sub->name(), "' -> ", HloOpcodeString(op), " '", inst->name(), "' in ",
                               c->name()));
      }
    }
  }
  return sites;
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
    if (options.random_inputs) out.degenerate = Degenerate(expected, actual, out.wrong_leaves);
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
