// BroadcastCanonicalizer ("broadcast_canonicalizer", after XLA's
// xla/hlo/transforms/simplifiers/broadcast_canonicalizer.cc): makes every
// broadcast's dimensions sorted, by transposing its operand first:
// broadcast(x), dimensions={2,0} => broadcast(transpose(x)),
// dimensions={0,2}. The transpose keeps the operand's layout (so it is a
// physical transposition, not a bitcast).
//
// Runs after LayoutNormalization (whose broadcasts may come out unsorted),
// in XLA:GPU's layout-normalization group.
#ifndef PASSLAB_PASSES_LAYOUT_BROADCAST_CANONICALIZER_H_
#define PASSLAB_PASSES_LAYOUT_BROADCAST_CANONICALIZER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class BroadcastCanonicalizer : public HloModulePass {
 public:
  std::string_view name() const override { return "broadcast_canonicalizer"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LAYOUT_BROADCAST_CANONICALIZER_H_
