// HloVerifier: checks that a module is well formed. Every failure names the
// computation, the instruction and the rule:
//   verifier: instruction 'add.3' in computation 'main': [shape] inferred
//   f32[2,3] but the instruction has f32[3,2]
// Rules: [structure] (root, parameters, operand ownership, cycles, unique
// names), [arity], [shape] (shape inference, attributes and their ranges,
// called-computation signatures), [layout] (minor_to_major, tiles, element
// size), [fusion] (fusion computation links and signature), [async] (seed
// 001: single users, chain shapes, no wrapping of ops with their own
// -start/-done opcodes, one computation per chain), [entry] (entry layout).
#ifndef PASSLAB_CORE_VERIFY_HLO_VERIFIER_H_
#define PASSLAB_CORE_VERIFY_HLO_VERIFIER_H_

#include "absl/status/status.h"
#include "core/ir/hlo_module.h"

namespace passlab {

struct VerifierOptions {
  // Require layouts to agree where XLA's layout-sensitive verifier does
  // (elementwise ops, copies excepted) and compare shapes with layouts.
  bool layout_sensitive = false;
  // Allow dot/convolution results of another element type than their operands.
  bool allow_mixed_precision = true;
};

absl::Status VerifyModule(const HloModule& module, const VerifierOptions& options = {});
absl::Status VerifyInstruction(const HloInstruction& instruction, const VerifierOptions& options = {});

}  // namespace passlab

#endif  // PASSLAB_CORE_VERIFY_HLO_VERIFIER_H_
