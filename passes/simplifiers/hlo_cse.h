// HloCSE ("cse"): common-subexpression elimination (XLA's
// xla/service/hlo_cse.cc). Per computation, equal constants are combined
// first (the first in instruction order stays); then, in post order, an
// instruction identical to an earlier one is replaced by it: same opcode,
// shape (with layout when is_layout_sensitive), operands (either order for
// commutative binary ops; iotas count as equal operands when they are
// equal), attributes, sharding and "xla.sdy.sharding" frontend attribute,
// and called computations that are equal or structurally identical. Like
// XLA it leaves alone instructions without operands (but partition-id,
// replica-id and those marked _xla_cse_safe_zero_operand), side-effecting
// ones, MUST_FUSE ones, parameters, and ones with control edges (unless
// ignore_control_dependencies).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_HLO_CSE_H_
#define PASSLAB_PASSES_SIMPLIFIERS_HLO_CSE_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct HloCseOptions {
  // XLA's is_layout_sensitive: shapes must agree in layout too.
  bool is_layout_sensitive = true;
  // Only fusion computations (XLA passes a should_eliminate_computation
  // predicate for this).
  bool only_fusion_computations = false;
  // XLA's ignore_control_dependencies.
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
