// The verdict on a program's outputs against reference outputs (the
// evaluator's, or a baseline's), leaf by leaf: what `passlab run --check`
// and the ablation workers report.
//
// Each leaf must match element by element within an absolute and relative
// tolerance. A float leaf that does not is still accepted when its
// norm-wise relative error ||actual - expected|| / ||expected|| is within
// `norm_tolerance`, with a note: a training step has discontinuities (which
// element of a max-pool window is the maximum, a ReLU at zero) where values
// one rounding apart take different branches, so a correct program whose
// sums run in another order moves a few elements of a gradient by percents
// while the leaf as a whole stays within a fraction of a percent. A wrong
// program (a bad index, a dropped term) misses by far more than that.
#ifndef PASSLAB_CORE_EVAL_OUTPUT_CHECK_H_
#define PASSLAB_CORE_EVAL_OUTPUT_CHECK_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/ir/literal_util.h"  // FlattenLeaves, for the callers comparing leaves

namespace passlab {

struct OutputCheckOptions {
  double tolerance = 1e-3;       // absolute and relative, per element
  double norm_tolerance = 1e-2;  // norm-wise relative, per float leaf; 0: off
  // The arguments were seeded random values, not the program's real ones:
  // a failure is then examined for a degenerate reference (below).
  bool random_inputs = false;
};

struct OutputCheck {
  bool ok = true;
  // Leaves accepted by the norm-wise criterion only (ok stays true).
  std::vector<int> close_leaves;
  std::vector<int> wrong_leaves;
  // The norm-wise relative error of every leaf in wrong_leaves, in order
  // (infinity where it cannot be computed: not a float array, or another
  // shape).
  std::vector<double> wrong_norm_errors;
  // "outputs match the reference", or what differs: the first failing leaf's
  // worst element and every failing leaf's number.
  std::string message;
  // With random inputs, a failure that says little about the program
  // (empty when none is seen): every differing output is constant in the
  // reference (all zero, or one value: the random inputs do not exercise
  // the program, e.g. a ReLU6 bound or a dropout rate drawn at random), or
  // the program has NaN/Inf where the reference is finite (a cancellation
  // on such inputs, e.g. a variance computed as E[x^2]-E[x]^2 in f32 going
  // negative before rsqrt where the evaluator computes in double).
  std::string degenerate;
  // "ok: <message>", "FAILED: <message>", or with `degenerate`
  // "FAILED, inconclusive (<degenerate>): <message>".
  std::string Verdict() const;
};

// `expected` and `actual` hold the leaves in the same order.
OutputCheck CheckOutputs(absl::Span<const Literal* const> expected, absl::Span<const Literal* const> actual,
                         const OutputCheckOptions& options);

// Where a cancellation can turn a near-zero value negative before a square
// root, reciprocal square root or logarithm: "subtract 'x' -> rsqrt 'y'"
// for each such subtract in `module` (fusion bodies included, through
// elementwise adds, converts, broadcasts and reshapes), and each
// batch-norm-training / batch-norm-grad (XLA's batchnorm_expander computes
// their variance as E[x^2]-E[x]^2 in the element type). At most `limit`.
std::vector<std::string> FindCancellationSites(const HloModule& module, int limit = 3);

}  // namespace passlab

#endif  // PASSLAB_CORE_EVAL_OUTPUT_CHECK_H_
