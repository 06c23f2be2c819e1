// HloCSE ("cse"): common-subexpression elimination. Within each computation,
// an instruction identical to an earlier one (same opcode, shape with layout,
// operands, attributes and called computations) is replaced by it; equal
// constants are merged. Side-effecting instructions are never merged.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_HLO_CSE_H_
#define PASSLAB_PASSES_SIMPLIFIERS_HLO_CSE_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct HloCseOptions {
  bool only_fusion_computations = false;
  bool ignore_control_dependencies = false;
};

class HloCSE : public HloModulePass {
 public:
  explicit HloCSE(HloCseOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "cse"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  HloCseOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_HLO_CSE_H_
