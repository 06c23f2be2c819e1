// Seeded random arguments for a computation's parameters: floats in
// [-1, 1) (exactly representable in the type), integers small and, for
// operands used as indices (dynamic-slice/update starts, gather/scatter
// indices), within the dimension they index; preds fair coins.
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
