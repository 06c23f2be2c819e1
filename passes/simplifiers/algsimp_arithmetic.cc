// AlgebraicSimplifier rules over arithmetic and logic. Each rule is one
// early-exit block headed by its algebra; a rule builds nothing unless it
// fires (the changed audit would catch a stray constant).
#include <cmath>

#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

bool IsFloat(const HloInstruction* i) { return IsFloatingPointType(i->shape().element_type()); }
bool IsInt(const HloInstruction* i) { return IsIntegralType(i->shape().element_type()); }
bool IsPred(const HloInstruction* i) { return i->shape().element_type() == PrimitiveType::kPred; }

HloInstruction* Op(HloInstruction* i, int k) { return i->mutable_operand(k); }

// C op A => A op C for commutative ops (canonical form: constants right).
Rule ConstantsToTheRight(HloOpcode op, std::string_view name) {
  return {op, name, [op](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
            if (!IsConstantLike(Op(i, 0)) || IsConstantLike(Op(i, 1))) return nullptr;
            return ctx.Add(HloInstruction::CreateBinary(i->shape(), op, Op(i, 1), Op(i, 0)));
          }};
}

// (A op C1) op C2 => A op (C1 op C2), for associative add/multiply on
// integers (exact) or with fast math for floats.
Rule Reassociate(HloOpcode op, std::string_view name) {
  return {op, name, [op](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
            HloInstruction* inner = Op(i, 0);
            HloInstruction* c2 = Op(i, 1);
            if (inner->opcode() != op || !IsConstantLike(c2) || !IsConstantLike(Op(inner, 1)) ||
                IsConstantLike(Op(inner, 0)) || inner->user_count() != 1) {
              return nullptr;
            }
            if (!IsInt(i) && !ctx.options().enable_fast_math) return nullptr;
            HloInstruction* folded = ctx.Add(HloInstruction::CreateBinary(c2->shape(), op, Op(inner, 1), c2));
            return ctx.Add(HloInstruction::CreateBinary(i->shape(), op, Op(inner, 0), folded));
          }};
}

}  // namespace

std::vector<Rule> ArithmeticRules() {
  std::vector<Rule> rules;
  for (auto [op, name] : std::vector<std::pair<HloOpcode, std::string_view>>{
           {HloOpcode::kAdd, "C+A => A+C"}, {HloOpcode::kMultiply, "C*A => A*C"},
           {HloOpcode::kAnd, "C&A => A&C"}, {HloOpcode::kOr, "C|A => A|C"},
           {HloOpcode::kXor, "C^A => A^C"}, {HloOpcode::kMaximum, "max(C,A) => max(A,C)"},
           {HloOpcode::kMinimum, "min(C,A) => min(A,C)"}}) {
    rules.push_back(ConstantsToTheRight(op, name));
  }
  // A + 0 => A (as XLA does; -0 + +0 gives +0, which compares equal to -0)
  rules.push_back({HloOpcode::kAdd, "A+0 => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return IsConstantScalarValue(Op(i, 1), 0) ? Op(i, 0) : nullptr;
                   }});
  rules.push_back(Reassociate(HloOpcode::kAdd, "(A+C1)+C2 => A+(C1+C2)"));
  rules.push_back(Reassociate(HloOpcode::kMultiply, "(A*C1)*C2 => A*(C1*C2)"));
  // A - 0 => A
  rules.push_back({HloOpcode::kSubtract, "A-0 => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return IsConstantScalarValue(Op(i, 1), 0) ? Op(i, 0) : nullptr;
                   }});
  // 0 - A => -A
  rules.push_back({HloOpcode::kSubtract, "0-A => -A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (!IsConstantScalarValue(Op(i, 0), 0) || IsFloat(i)) return nullptr;  // 0 - 0 = +0, -0 = -0
                     return ctx.Add(HloInstruction::CreateUnary(i->shape(), HloOpcode::kNegate, Op(i, 1)));
                   }});
  // A - A => 0 (integers)
  rules.push_back({HloOpcode::kSubtract, "A-A => 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (Op(i, 0) != Op(i, 1) || !IsInt(i)) return nullptr;
                     return ctx.Constant(i->shape(), 0);
                   }});
  // A * 1 => A
  rules.push_back({HloOpcode::kMultiply, "A*1 => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     if (!IsConstantScalarValue(Op(i, 1), 1)) return nullptr;
                     return Op(i, 0);
                   }});
  // A * 0 => 0 (integers; floats need fast math: NaN*0 = NaN)
  rules.push_back({HloOpcode::kMultiply, "A*0 => 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (!IsConstantScalarValue(Op(i, 1), 0)) return nullptr;
                     if (!IsInt(i) && !(IsFloat(i) && ctx.options().enable_fast_math)) return nullptr;
                     return Op(i, 1)->opcode() == HloOpcode::kConstant || Op(i, 1)->shape() == i->shape()
                                ? Op(i, 1)
                                : ctx.Constant(i->shape(), 0);
                   }});
  // A * -1 => -A
  rules.push_back({HloOpcode::kMultiply, "A*-1 => -A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (!IsConstantScalarValue(Op(i, 1), -1) || IsPred(i) || IsUnsignedIntegralType(i->shape().element_type())) return nullptr;
                     return ctx.Add(HloInstruction::CreateUnary(i->shape(), HloOpcode::kNegate, Op(i, 0)));
                   }});
  // A / 1 => A
  rules.push_back({HloOpcode::kDivide, "A/1 => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     if (!IsConstantScalarValue(Op(i, 1), 1)) return nullptr;
                     return Op(i, 0);
                   }});
  // A / 2^k => A * 2^-k (floats: exact, since 2^-k is representable)
  rules.push_back({HloOpcode::kDivide, "A/2^k => A*2^-k", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (!IsFloat(i)) return nullptr;
                     std::optional<double> v = ScalarConstantValue(Op(i, 1));
                     if (!v || *v == 0 || *v == 1 || !std::isfinite(*v)) return nullptr;
                     int e;
                     double m = std::frexp(*v, &e);
                     if (std::fabs(m) != 0.5 || e - 1 > 60 || e - 1 < -60) return nullptr;
                     // The reciprocal must be representable in the type.
                     Literal probe(Shape::Scalar(i->shape().element_type()));
                     probe.SetDouble(0, 1.0 / *v);
                     if (probe.GetDouble(0) != 1.0 / *v) return nullptr;
                     return ctx.Add(HloInstruction::CreateBinary(i->shape(), HloOpcode::kMultiply, Op(i, 0),
                                                                 ctx.Constant(i->shape(), 1.0 / *v)));
                   }});
  // -(-A) => A
  rules.push_back({HloOpcode::kNegate, "-(-A) => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     if (Op(i, 0)->opcode() != HloOpcode::kNegate) return nullptr;
                     return Op(Op(i, 0), 0);
                   }});
  // not(not(A)) => A
  rules.push_back({HloOpcode::kNot, "not(not(A)) => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     if (Op(i, 0)->opcode() != HloOpcode::kNot) return nullptr;
                     return Op(Op(i, 0), 0);
                   }});
  // abs(A) => A when A is provably non-negative
  rules.push_back({HloOpcode::kAbs, "abs(A) => A for A >= 0", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     if (IsComplexType(Op(i, 0)->shape().element_type()) || !IsNonNegative(Op(i, 0))) return nullptr;
                     return Op(i, 0);
                   }});
  // max(A, A) => A, min(A, A) => A, A & A => A, A | A => A
  for (auto [op, name] : std::vector<std::pair<HloOpcode, std::string_view>>{
           {HloOpcode::kMaximum, "max(A,A) => A"}, {HloOpcode::kMinimum, "min(A,A) => A"},
           {HloOpcode::kAnd, "A&A => A"}, {HloOpcode::kOr, "A|A => A"}}) {
    rules.push_back({op, name, [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                       return Op(i, 0) == Op(i, 1) ? Op(i, 0) : nullptr;
                     }});
  }
  // A & true => A, A | false => A, A & false => false, A | true => true
  rules.push_back({HloOpcode::kAnd, "A&true => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return IsPred(i) && IsConstantScalarValue(Op(i, 1), 1) ? Op(i, 0) : nullptr;
                   }});
  rules.push_back({HloOpcode::kOr, "A|false => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return IsConstantScalarValue(Op(i, 1), 0) ? Op(i, 0) : nullptr;
                   }});
  rules.push_back({HloOpcode::kAnd, "A&false => false", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (!IsConstantScalarValue(Op(i, 1), 0)) return nullptr;
                     return Op(i, 1)->shape() == i->shape() ? Op(i, 1) : ctx.Constant(i->shape(), 0);
                   }});
  rules.push_back({HloOpcode::kOr, "A|true => true", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (!IsPred(i) || !IsConstantScalarValue(Op(i, 1), 1)) return nullptr;
                     return Op(i, 1)->shape() == i->shape() ? Op(i, 1) : ctx.Constant(i->shape(), 1);
                   }});
  // A ^ 0 => A
  rules.push_back({HloOpcode::kXor, "A^0 => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return IsConstantScalarValue(Op(i, 1), 0) ? Op(i, 0) : nullptr;
                   }});
  // select(true, A, B) => A; select(false, A, B) => B
  rules.push_back({HloOpcode::kSelect, "select(const, A, B) => A or B", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     std::optional<double> p = ScalarConstantValue(Op(i, 0));
                     if (!p) return nullptr;
                     return *p != 0 ? Op(i, 1) : Op(i, 2);
                   }});
  // select(P, A, A) => A
  rules.push_back({HloOpcode::kSelect, "select(P, A, A) => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return Op(i, 1) == Op(i, 2) ? Op(i, 1) : nullptr;
                   }});
  // convert(A) to A's own type => A
  rules.push_back({HloOpcode::kConvert, "convert(A) to its type => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return Op(i, 0)->shape().element_type() == i->shape().element_type() ? Op(i, 0) : nullptr;
                   }});
  // convert(convert(A)) => A when the inner convert widens exactly (f16->f32->f16, s8->s32->s8)
  rules.push_back({HloOpcode::kConvert, "convert(convert(A)) => A (exact round trip)",
                   [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     HloInstruction* inner = Op(i, 0);
                     if (inner->opcode() != HloOpcode::kConvert) return nullptr;
                     PrimitiveType a = Op(inner, 0)->shape().element_type(), b = inner->shape().element_type();
                     if (a != i->shape().element_type()) return nullptr;
                     bool exact = (IsFloatingPointType(a) && IsFloatingPointType(b) && ExponentBits(b) >= ExponentBits(a) &&
                                   MantissaBits(b) >= MantissaBits(a)) ||
                                  (IsSignedIntegralType(a) && IsSignedIntegralType(b) && PrimitiveBitWidth(b) >= PrimitiveBitWidth(a)) ||
                                  (IsUnsignedIntegralType(a) && IsIntegralType(b) && PrimitiveBitWidth(b) > PrimitiveBitWidth(a));
                     return exact ? Op(inner, 0) : nullptr;
                   }});
  // A ** 1 => A; A ** 0 => 1 (pow(x, 0) is 1 even for NaN)
  rules.push_back({HloOpcode::kPower, "A**1 => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return IsConstantScalarValue(Op(i, 1), 1) ? Op(i, 0) : nullptr;
                   }});
  rules.push_back({HloOpcode::kPower, "A**0 => 1", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (!IsFloat(i) || !IsConstantScalarValue(Op(i, 1), 0)) return nullptr;
                     return ctx.Constant(i->shape(), 1);
                   }});
  // A ** 2 => A * A
  rules.push_back({HloOpcode::kPower, "A**2 => A*A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (!IsFloat(i) || !IsConstantScalarValue(Op(i, 1), 2)) return nullptr;
                     return ctx.Add(HloInstruction::CreateBinary(i->shape(), HloOpcode::kMultiply, Op(i, 0), Op(i, 0)));
                   }});
  return rules;
}

}  // namespace passlab::algsimp
