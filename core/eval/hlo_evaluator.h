// HloEvaluator: the reference interpreter of HLO over host Literals, the
// oracle every pass and compiled variant is checked against (XLA's
// HloEvaluator plays this role). Values are logical: layouts never change
// them. Semantics follow XLA: integer division by zero gives -1 (all ones),
// INT_MIN / -1 = INT_MIN, x % 0 = x; shifts past the width give 0 (or the
// sign for arithmetic shifts); max/min propagate NaN; float -> int converts
// saturate and map NaN to 0; small floats compute in higher precision and
// round to nearest even on store.
//
// Not evaluated (they need several devices or the outside world): infeed,
// outfeed, send, recv and their -done forms, and custom calls other than the
// library calls passlab's rewriters create (none exist yet). Collectives run
// as on a single replica.
#ifndef PASSLAB_CORE_EVAL_HLO_EVALUATOR_H_
#define PASSLAB_CORE_EVAL_HLO_EVALUATOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"

namespace passlab {

struct EvaluatorOptions {
  // Seed of the `rng` op (rng-bit-generator is seeded by its operand).
  uint64_t rng_seed = 42;
  // While loops running longer than this fail instead of hanging.
  int64_t max_loop_iterations = 1 << 24;
};

class HloEvaluator {
 public:
  explicit HloEvaluator(EvaluatorOptions options = {}) : options_(options) {}

  absl::StatusOr<Literal> Evaluate(const HloModule& module, absl::Span<const Literal> args);
  absl::StatusOr<Literal> EvaluateComputation(const HloComputation& computation,
                                              absl::Span<const Literal* const> args);

 private:
  EvaluatorOptions options_;
  uint64_t rng_state_ = 0;
  friend class EvalVisitor;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_EVAL_HLO_EVALUATOR_H_
