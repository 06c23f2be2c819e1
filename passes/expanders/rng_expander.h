// RngExpander ("rng-expander"): replaces `rng` (RNG_UNIFORM, RNG_NORMAL)
// with bits from the module's random state, as XLA does:
//   rng(a, b) => call(rng-get-and-update-state(), a, b) of a generated
//   computation (one per distribution and shapes) that concatenates the key
//   with the 128-bit state, draws the bits with a philox rng-bit-generator
//   (which RngBitGeneratorExpander turns into plain HLO after this pass)
//   and converts them as XLA's prng library does:
//   - uniform float in [a, b): the top mantissa-width bits as an integer
//     times 2^-mantissa_bits, scaled to b - a, plus a;
//   - normal: sqrt(2) erfinv(u) with u uniform in (-1, 1), erfinv by Giles'
//     single-precision polynomial (evaluated in the result type), times the
//     deviation b plus the mean a;
//   - uniform integer in [a, b): a + bits mod (b - a) (a when b <= a).
// f16/bf16 draw in f32 and convert (XLA's small-float rule). The state
// advances by the number of 128-bit philox blocks the draw consumes, so
// consecutive rngs never reuse bits.
//
// The values differ from the evaluator's own rng stream (a different but
// equally valid draw): tests compare distributions, not bits.
// Matches uniform f16/bf16/f32/f64 and 32/64-bit integers, normal floats,
// scalar bounds. Runs first among XLA:GPU's expanders, before the
// rng-bit-generator expander that expands what it creates.
#ifndef PASSLAB_PASSES_EXPANDERS_RNG_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_RNG_EXPANDER_H_

#include <cstdint>

#include "core/pass/op_expander_pass.h"

namespace passlab {

struct RngExpanderOptions {
  // The philox key (XLA derives it from the module's seed).
  uint64_t seed = 0x5eed;
};

class RngExpander : public OpExpanderPass {
 public:
  explicit RngExpander(RngExpanderOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "rng-expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;

 private:
  RngExpanderOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_RNG_EXPANDER_H_
