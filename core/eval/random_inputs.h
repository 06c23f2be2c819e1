// Seeded random arguments for a computation's parameters, identical on every
// platform (raw mt19937_64 bits, no std distributions):
//   - floats: multiples of 1/64 in [-1, 1), rounded to the type (f8e8m0fnu,
//     which has no zero or sign: powers of two in [2^-4, 2^4]);
//   - integers: in [0, int_bound) and within the type's range;
//   - integers used as indices (dynamic-slice / dynamic-update-slice starts,
//     gather / scatter indices, also through convert, reshape, bitcast, copy
//     or get-tuple-element) stay where the whole slice or window fits, so no
//     clamping or skipping hides a bug;
//   - preds: fair coins; complex: both parts as floats;
//   - float parameters named like a training step's state (passlab's models:
//     "*.weight" scaled to variance 1/fan_in, "*.scale" near 1, "*.bias" /
//     "*.offset" / "*running_mean" small, "*running_var" and "*.adam_v"
//     positive, "*.momentum" / "*.adam_m" small, "labels" one-hot rows), so
//     a model's step is well-conditioned enough to check.
#ifndef PASSLAB_CORE_EVAL_RANDOM_INPUTS_H_
#define PASSLAB_CORE_EVAL_RANDOM_INPUTS_H_

#include <cstdint>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"

namespace passlab {

std::vector<Literal> MakeRandomArguments(const HloComputation& computation, uint64_t seed);
Literal MakeRandomLiteral(const Shape& shape, uint64_t seed, int64_t int_bound = 8);

}  // namespace passlab

#endif  // PASSLAB_CORE_EVAL_RANDOM_INPUTS_H_
