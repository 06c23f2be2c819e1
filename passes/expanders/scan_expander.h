// ScanExpander ("scan_expander", XLA's xla/service/scan_expander.cc): a scan
// becomes a while loop over the scan dimension whose state is (index,
// carries..., inputs..., outputs...); each step slices the inputs at the
// index (counting down when is_reverse), applies to_apply (inlined), and
// writes its outputs into the stacked arrays with dynamic-update-slice. A
// scan of length 1 becomes one application of to_apply, with no loop. With
// expand_associative_scans=false, scans marked is_associative=true are left
// for a tree rewrite. Runs in the optimization pipeline after CallInliner.
#ifndef PASSLAB_PASSES_EXPANDERS_SCAN_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_SCAN_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class ScanExpander : public OpExpanderPass {
 public:
  explicit ScanExpander(bool expand_associative_scans = true)
      : expand_associative_scans_(expand_associative_scans) {}
  std::string_view name() const override { return "scan_expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;

 private:
  bool expand_associative_scans_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_SCAN_EXPANDER_H_
