// HloEvaluator: the reference interpreter of HLO over host Literals, the
// oracle every pass and compiled variant is checked against (XLA's
// HloEvaluator plays this role). Values are logical: layouts never change
// them (only `bitcast`, whose meaning is defined by the layouts, reads them).
//
// Semantics follow XLA: integer division by zero gives -1 (all ones),
// INT_MIN / -1 = INT_MIN, x % 0 = x, INT_MIN % -1 = 0; shifts past the width
// give 0 (or the sign for arithmetic shifts); max/min propagate NaN;
// float -> int converts saturate and map NaN to 0; bf16/f16/f8 compute in f32
// and round to nearest even on store; rng-bit-generator is bit-exact with
// XLA's three-fry and philox expansions (RNG_DEFAULT = philox).
// Convolution and dot accumulate in double (int64 for integers).
//
// Not evaluated (they need several devices or the outside world): infeed,
// outfeed, send, recv and their -done forms, collectives whose result shape
// implies more than one participant, and custom calls other than the targets
// listed in eval_control.cc. Dynamic dimension sizes are not tracked: a
// bounded dimension evaluates at its bound.
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
  // Threads for large dots and convolutions.
  int num_threads = 2;
};

class HloEvaluator {
 public:
  explicit HloEvaluator(EvaluatorOptions options = {}) : options_(options) {}

  // Evaluates the entry computation; arguments must match the parameters'
  // shapes (layouts ignored). Deterministic: the same arguments give the same
  // bits on every call.
  absl::StatusOr<Literal> Evaluate(const HloModule& module, absl::Span<const Literal> args);
  absl::StatusOr<Literal> EvaluateComputation(const HloComputation& computation,
                                              absl::Span<const Literal* const> args);

 private:
  EvaluatorOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_EVAL_HLO_EVALUATOR_H_
