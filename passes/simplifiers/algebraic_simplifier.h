// AlgebraicSimplifier ("algsimp"): local algebraic rewrites, each a named rule
// ("A+0 => A") so the workbench can count which fired. Rules canonicalize
// (constants to the right of commutative ops) and never produce worse code.
// Constant sub-expressions it creates ((A+C1)+C2 => A+(C1+C2)) are left for
// constant folding. Run it in a fixed point; DCE cleans up after it.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_H_

#include <string_view>
#include <vector>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct AlgebraicSimplifierOptions {
  // Rewrites that are exact only when NaN/Inf cannot occur (A*0 => 0, A-A => 0
  // for floats) stay off unless this is set.
  bool enable_fast_math = false;
};

class AlgebraicSimplifier : public HloModulePass {
 public:
  explicit AlgebraicSimplifier(AlgebraicSimplifierOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "algsimp"; }

  // The names of every rule, in the order they are tried.
  static std::vector<std::string_view> RuleNames();

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  AlgebraicSimplifierOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_H_
