// Structural equality of modules: the same computations (matched in post
// order, by name) holding the same instructions (in post order) with the same
// names, opcodes, shapes with layouts, operands, control edges, called
// computations and attributes. This is the "parse(print(m)) equals m"
// contract of the text format.
#ifndef PASSLAB_CORE_IR_HLO_EQUAL_H_
#define PASSLAB_CORE_IR_HLO_EQUAL_H_

#include <string>

#include "core/ir/hlo_module.h"

namespace passlab {

// Returns true when equal; otherwise false and, if `difference` is given, a
// sentence naming the first difference found.
bool StructurallyEqual(const HloModule& a, const HloModule& b, std::string* difference = nullptr);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_HLO_EQUAL_H_
