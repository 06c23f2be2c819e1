// BitcastDtypesExpander ("bitcast_dtypes_expander"): replaces a
// bitcast-convert between element types of different widths with integer
// arithmetic on same-width types (lower minor-dimension positions hold the
// less significant parts, as the evaluator and XLA define it):
//   wide [d...] -> narrow [d..., k]:
//     (bitcast<uW>(x) broadcast to [d..., k] >> iota * n) & mask, converted
//     to uN, then bitcast to the narrow type
//   narrow [d..., k] -> wide [d...]:
//     or-reduce over the last dimension of (convert<uW>(bitcast<uN>(x))
//     << iota * n), then bitcast to the wide type.
// Matches integer and real floating-point types of 8 to 64 bits (not pred
// or complex). Runs in XLA:GPU's simplification loop after algsimp.
// Optional: the runtime runs such bitcast-converts as they are.
#ifndef PASSLAB_PASSES_EXPANDERS_BITCAST_DTYPES_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_BITCAST_DTYPES_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class BitcastDtypesExpander : public OpExpanderPass {
 public:
  std::string_view name() const override { return "bitcast_dtypes_expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_BITCAST_DTYPES_EXPANDER_H_
