// RngBitGeneratorExpander ("rng-bit-generator-expander"): replaces
// rng-bit-generator with a call of a generated computation (one per
// algorithm, state shape and output shape) that computes the same bits in
// plain HLO: counters from iota, the THREE_FRY (Threefry-2x32, 20 rounds) or
// PHILOX (Philox-4x32, 10 rounds) block function unrolled on u32 arrays, and
// the new state. RNG_DEFAULT takes the algorithm given in the options
// (PHILOX, as XLA:GPU and XLA:CPU do).
//
// Bit layout (XLA's, and the reference evaluator's): state[0] is the key;
// three-fry counts from state[1] (64-bit outputs use one block each,
// narrower ones split the shape along its first even dimension, else its
// largest); philox counts 128-bit blocks from (state[1], state[2]) or, with
// a two-word state, (state[1], state[0]), four 32-bit (or two 64-bit)
// outputs per block. Outputs narrower than 32 bits keep the low bits.
//
// Matches outputs of 8, 16, 32 or 64 bits (integers and floats, not pred).
#ifndef PASSLAB_PASSES_EXPANDERS_RNG_BIT_GENERATOR_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_RNG_BIT_GENERATOR_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

struct RngBitGeneratorExpanderOptions {
  // What RNG_DEFAULT means (kThreeFry or kPhilox).
  RandomAlgorithm default_algorithm = RandomAlgorithm::kPhilox;
};

class RngBitGeneratorExpander : public OpExpanderPass {
 public:
  explicit RngBitGeneratorExpander(RngBitGeneratorExpanderOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "rng-bit-generator-expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;

 private:
  RngBitGeneratorExpanderOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_RNG_BIT_GENERATOR_EXPANDER_H_
