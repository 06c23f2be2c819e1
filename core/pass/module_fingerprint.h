// ModuleFingerprint: a 64-bit xxhash of the module's canonical text — names,
// opcodes, shapes and layouts, operands, attributes, called computations,
// metadata, module configuration — in printing order (computations callees
// first, instructions in post order). The pipeline takes one per pass run
// (changed audit, snapshot identity, fixed-point cycles), so it must cost far
// less than a pass: each instruction's line and its hash are cached on the
// instruction and invalidated by its mutators, so a fingerprint after a pass
// prints only what the pass touched, and nothing at all when nothing in any
// module changed since the last one (IrGeneration). It equals the
// fingerprint of PrintModuleText's snapshot of the same module, which the
// pipeline takes instead when observers want the text: one walk for both.
// Unique ids do not matter: a rewrite that recreates an earlier state with
// new instructions is recognised, which fixed-point cycle detection needs.
#ifndef PASSLAB_CORE_PASS_MODULE_FINGERPRINT_H_
#define PASSLAB_CORE_PASS_MODULE_FINGERPRINT_H_

#include <cstdint>

#include "core/ir/hlo_module.h"

namespace passlab {

uint64_t ModuleFingerprint(const HloModule& module);

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_MODULE_FINGERPRINT_H_
