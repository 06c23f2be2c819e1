// Helpers shared by the while-loop passes (simplify-while-loops,
// while-loop-invariant-code-motion): who calls a computation, the loop-state
// element k of a value, and rewriting a loop to a new state shape.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_UTIL_H_
#define PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_UTIL_H_

#include <vector>

#include "core/ir/hlo_module.h"

namespace passlab {

// Number of instructions in the module that call `computation`.
int64_t CountCallers(const HloModule& module, const HloComputation* computation);

// True when `c` or anything it calls has a side-effecting instruction.
bool ComputationHasSideEffects(const HloComputation* c);

// The k-th element of the tuple-shaped `value`, in `c`: the tuple operand
// itself when `value` is a tuple instruction, else a new get-tuple-element.
HloInstruction* TupleElement(HloComputation* c, HloInstruction* value, int64_t k);

// gte(parameter 0 of `c`, index) -> index, else -1.
int64_t LoopStateIndex(const HloInstruction* inst, const HloComputation* c);

// A while loop we may rewrite in place: body and condition called only by
// it, body root a tuple, no side effects, no control dependencies, and the
// loop parameters used only through get-tuple-element.
bool IsRewritableWhile(const HloInstruction* w);

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_WHILE_LOOP_UTIL_H_
