// ModuleFingerprint: a 64-bit xxhash of everything the canonical printer
// shows about a module — names, opcodes, shapes and layouts, operands,
// attributes, called computations, metadata, module configuration — computed
// from the IR instead of from printed text. The pipeline takes one per pass
// run (changed audit, snapshot identity, fixed-point cycles), so it must cost
// far less than a pass: each instruction's own hash is cached on the
// instruction and invalidated by its mutators, so a fingerprint after a pass
// rehashes only what the pass touched. Instructions are hashed in insertion
// order: two modules that print the same but were built in another order
// differ (unique ids do not matter: a rewrite that recreates an earlier state
// with new instructions is recognised, which fixed-point cycle detection
// needs).
#ifndef PASSLAB_CORE_PASS_MODULE_FINGERPRINT_H_
#define PASSLAB_CORE_PASS_MODULE_FINGERPRINT_H_

#include <cstdint>

#include "core/ir/hlo_module.h"

namespace passlab {

uint64_t ModuleFingerprint(const HloModule& module);

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_MODULE_FINGERPRINT_H_
