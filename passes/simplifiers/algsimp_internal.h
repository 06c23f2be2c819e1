// Internals of AlgebraicSimplifier shared by its rule files: the rule type,
// the context rules build replacements in, and matchers.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_ALGSIMP_INTERNAL_H_
#define PASSLAB_PASSES_SIMPLIFIERS_ALGSIMP_INTERNAL_H_

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "passes/simplifiers/algebraic_simplifier.h"

namespace passlab::algsimp {

// Builds replacement instructions next to the instruction being rewritten.
class RuleContext {
 public:
  RuleContext(HloInstruction* anchor, const AlgebraicSimplifierOptions& options)
      : anchor_(anchor), options_(options) {}
  HloInstruction* Add(std::unique_ptr<HloInstruction> inst) {
    if (inst->metadata().empty()) inst->set_metadata(anchor_->metadata());
    return anchor_->parent()->AddInstruction(std::move(inst));
  }
  // A scalar constant of `type` broadcast to `shape` (or the scalar itself).
  HloInstruction* Constant(const Shape& shape, double value);
  const AlgebraicSimplifierOptions& options() const { return options_; }

 private:
  HloInstruction* anchor_;
  const AlgebraicSimplifierOptions& options_;
};

// A rule returns the instruction to replace `inst` with, or nullptr.
struct Rule {
  HloOpcode opcode;
  std::string_view name;
  std::function<HloInstruction*(HloInstruction* inst, RuleContext& ctx)> apply;
};

// The scalar value of a constant, or of a broadcast of a scalar constant.
std::optional<double> ScalarConstantValue(const HloInstruction* inst);
bool IsConstantScalarValue(const HloInstruction* inst, double value);
bool IsConstantLike(const HloInstruction* inst);  // constant or broadcast(constant)
// True when every element is known to be >= 0 (or NaN), e.g. abs, exp, x*x.
bool IsNonNegative(const HloInstruction* inst);

std::vector<Rule> ArithmeticRules();
std::vector<Rule> ShapeRules();

}  // namespace passlab::algsimp

#endif  // PASSLAB_PASSES_SIMPLIFIERS_ALGSIMP_INTERNAL_H_
