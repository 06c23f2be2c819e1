// HloConstantFolding ("constant_folding"): evaluates instructions whose
// operands are all constants (with the reference evaluator) and replaces them
// by the resulting constant. Skips side effects, rng, parameters, huge
// broadcasts of scalars (folding them would only grow the module) and ops the
// evaluator cannot run. Runs after algsimp, which leaves constant
// subexpressions like C1+C2 for it.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_HLO_CONSTANT_FOLDING_H_
#define PASSLAB_PASSES_SIMPLIFIERS_HLO_CONSTANT_FOLDING_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct HloConstantFoldingOptions {
  // Results larger than this many elements are not materialised.
  int64_t max_result_elements = 1 << 16;
};

class HloConstantFolding : public HloModulePass {
 public:
  explicit HloConstantFolding(HloConstantFoldingOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "constant_folding"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  HloConstantFoldingOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_HLO_CONSTANT_FOLDING_H_
