// Helpers over Literal values that several layers share (the evaluator's
// output checks, the CPU and CUDA runtimes, the CLI, the ablation worker).
#ifndef PASSLAB_CORE_IR_LITERAL_UTIL_H_
#define PASSLAB_CORE_IR_LITERAL_UTIL_H_

#include <vector>

#include "core/ir/literal.h"

namespace passlab {

// Appends the non-tuple leaves of `literal` to `leaves`, depth first (a
// tuple's elements in order): the order of a shape's buffers (LeafShapes).
// A non-tuple literal is its own only leaf; an empty tuple has none.
void FlattenLeaves(const Literal& literal, std::vector<const Literal*>& leaves);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_LITERAL_UTIL_H_
