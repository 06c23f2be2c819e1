// AlgebraicSimplifier rules over elementwise arithmetic and logic, in the
// order XLA's AlgebraicSimplifierVisitor handlers try them (Handle{Add,
// Subtract, Multiply, Divide, Remainder, Negate, Not, And, Or, Xor, Abs,
// Maximum, Minimum, Clamp, Log, Exp, Power, Sqrt, Rsqrt, Compare, Select,
// Convert, Real, Imag, Complex, Iota} in
// xla/hlo/transforms/simplifiers/algebraic_simplifier.cc). Each rule is one
// early-exit block headed by its algebra.
#include <bit>
#include <cmath>

#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

using O = HloOpcode;

bool IsConstant(const HloInstruction* i) { return i->opcode() == O::kConstant; }
// XLA's m::ConstantScalar(): a constant with one element.
bool IsConstantScalar(const HloInstruction* i) { return IsEffectiveScalarConstant(i); }
// broadcast(constant scalar).
bool IsBroadcastOfConstantScalar(const HloInstruction* i) {
  return Is(i, O::kBroadcast) && IsConstantScalar(i->operand(0));
}

// Replaces with `x` when the shapes agree (XLA's ReplaceInstructionIfCompatible).
HloInstruction* IfCompatible(HloInstruction* inst, HloInstruction* x, RuleContext& ctx) {
  if (!inst->control_predecessors().empty()) return nullptr;
  // The replacement must not lose the instruction's sharding.
  if (inst->has_sharding() && x->has_sharding() && !(inst->sharding() == x->sharding())) return nullptr;
  return ctx.SameShape(inst->shape(), x->shape()) ? x : nullptr;
}

// c1 op c2, broadcast to `like`'s shape when c1 is a scalar and `like` is not.
HloInstruction* CombineConstants(HloOpcode op, HloInstruction* c1, HloInstruction* c2, HloInstruction* like,
                                 RuleContext& ctx) {
  HloInstruction* combined = ctx.Add(HloInstruction::CreateBinary(c1->shape(), op, c1, c2));
  if (combined->shape().IsScalar() && !like->shape().IsScalar()) {
    combined = ctx.Add(HloInstruction::CreateBroadcast(like->shape(), combined, {}));
  }
  return combined;
}

Shape WithType(const Shape& s, PrimitiveType t) {
  Shape r = s;
  r.set_element_type(t);
  return r;
}

// ---------------------------------------------------------------- add
void AddRules(std::vector<Rule>& rules) {
  // A + 0 => A
  rules.push_back(R(O::kAdd, "A+0 => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsAll(Op(i, 1), 0)) return nullptr;
    return IfCompatible(i, Op(i, 0), ctx);
  }));
  // 0 + A => A
  rules.push_back(R(O::kAdd, "0+A => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsAll(Op(i, 0), 0)) return nullptr;
    return IfCompatible(i, Op(i, 1), ctx);
  }));
  // C + A => A + C
  rules.push_back(R(O::kAdd, "C+A => A+C", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsConstant(Op(i, 0)) || IsConstant(Op(i, 1))) return nullptr;
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kAdd, Op(i, 1), Op(i, 0)));
  }));
  // (A + C1) + C2 => A + (C1 + C2)
  rules.push_back(R(O::kAdd, "(A+C1)+C2 => A+(C1+C2)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* inner = Op(i, 0);
    HloInstruction* c2 = Op(i, 1);
    if (!Is(inner, O::kAdd) || IsConstant(Op(inner, 0))) return nullptr;
    HloInstruction* c1 = Op(inner, 1);
    bool plain = IsConstant(c1) && IsConstant(c2);
    bool broadcast = IsBroadcastOfConstantScalar(c1) && IsBroadcastOfConstantScalar(c2);
    if (!plain && !broadcast) return nullptr;
    if (broadcast) {
      c1 = Op(c1, 0);
      c2 = Op(c2, 0);
    }
    HloInstruction* sum = CombineConstants(O::kAdd, c1, c2, i, ctx);
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kAdd, Op(inner, 0), sum));
  }));
  // (C1 - A) + C2 => (C1 + C2) - A
  rules.push_back(R(O::kAdd, "(C1-A)+C2 => (C1+C2)-A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* inner = Op(i, 0);
    HloInstruction* c2 = Op(i, 1);
    if (!Is(inner, O::kSubtract) || IsConstant(Op(inner, 1))) return nullptr;
    HloInstruction* c1 = Op(inner, 0);
    bool plain = IsConstant(c1) && IsConstant(c2);
    bool broadcast = IsBroadcastOfConstantScalar(c1) && IsBroadcastOfConstantScalar(c2);
    if (!plain && !broadcast) return nullptr;
    if (broadcast) {
      c1 = Op(c1, 0);
      c2 = Op(c2, 0);
    }
    HloInstruction* sum = CombineConstants(O::kAdd, c1, c2, i, ctx);
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kSubtract, sum, Op(inner, 1)));
  }));
  // A + (B - A) => B, (B - A) + A => B (integers or fast math)
  rules.push_back(R(O::kAdd, "A+(B-A) => B", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsInt(i) && !ctx.options().enable_fast_math) return nullptr;
    for (int k = 0; k < 2; ++k) {
      HloInstruction* x = Op(i, k);
      HloInstruction* sub = Op(i, 1 - k);
      if (Is(sub, O::kSubtract) && Op(sub, 1) == x) return IfCompatible(i, Op(sub, 0), ctx);
    }
    return nullptr;
  }));
  // A + dynamic-update-slice(broadcast(0), U, I) => dynamic-update-slice(A, dynamic-slice(A, I) + U, I)
  rules.push_back(R(O::kAdd, "A+DUS(0,U,I) => DUS(A,DS(A,I)+U,I)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    for (int k = 0; k < 2; ++k) {
      HloInstruction* lhs = Op(i, 1 - k);
      HloInstruction* dus = Op(i, k);
      if (!Is(dus, O::kDynamicUpdateSlice) || !Is(Op(dus, 0), O::kBroadcast) ||
          !IsEffectiveScalarConstant(Op(dus, 0)->operand(0)) || !IsAll(Op(dus, 0), 0)) {
        continue;
      }
      const Shape& partial = Op(dus, 1)->shape();
      std::vector<HloInstruction*> starts(dus->operands().begin() + 2, dus->operands().end());
      HloInstruction* sliced = ctx.Add(HloInstruction::CreateDynamicSlice(partial, lhs, starts, partial.dimensions()));
      HloInstruction* sum = ctx.Add(HloInstruction::CreateBinary(partial, O::kAdd, sliced, Op(dus, 1)));
      return ctx.Add(HloInstruction::CreateDynamicUpdateSlice(lhs->shape(), lhs, sum, starts));
    }
    return nullptr;
  }));
  // A*C + B*C => (A+B)*C (integers, floats-are-real, or C = +-2^k)
  rules.push_back(R(O::kAdd, "A*C+B*C => (A+B)*C", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* lhs = Op(i, 0);
    HloInstruction* rhs = Op(i, 1);
    if (!Is(lhs, O::kMultiply) || !Is(rhs, O::kMultiply) || lhs->user_count() != 1 || rhs->user_count() != 1) {
      return nullptr;
    }
    HloInstruction *a = nullptr, *b = nullptr, *c = nullptr;
    for (int lc = 1; lc >= 0 && c == nullptr; --lc) {  // lhs = a*c first, then c*a
      HloInstruction* cand = Op(lhs, lc);
      if (Op(rhs, 0) == cand) {
        b = Op(rhs, 1);
      } else if (Op(rhs, 1) == cand) {
        b = Op(rhs, 0);
      } else {
        continue;
      }
      c = cand;
      a = Op(lhs, 1 - lc);
    }
    if (c == nullptr) return nullptr;
    if (!IsInt(i) && !ctx.options().enable_floats_are_real && !IsAllFpConstantPowerOf2(c)) return nullptr;
    HloInstruction* sum = ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kAdd, a, b));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, sum, c));
  }));
}

// ---------------------------------------------------------------- subtract
void SubtractRules(std::vector<Rule>& rules) {
  // A - A => 0 (integers or fast math)
  rules.push_back(R(O::kSubtract, "A-A => 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (Op(i, 0) != Op(i, 1) || (!IsInt(i) && !ctx.options().enable_fast_math)) return nullptr;
    return ctx.ScalarLike(i, 0);
  }));
  // A - 0 => A
  rules.push_back(R(O::kSubtract, "A-0 => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsAll(Op(i, 1), 0)) return nullptr;
    return IfCompatible(i, Op(i, 0), ctx);
  }));
  // A - C => A + (-C)
  rules.push_back(R(O::kSubtract, "A-C => A+(-C)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* lhs = Op(i, 0);
    HloInstruction* rhs = Op(i, 1);
    if (IsConstant(lhs)) return nullptr;
    HloInstruction* c = rhs;
    if (Is(rhs, O::kBroadcast)) c = Op(rhs, 0);
    if (!IsConstant(c)) return nullptr;
    HloInstruction* neg = ctx.Add(HloInstruction::CreateUnary(c->shape(), O::kNegate, c));
    if (Is(rhs, O::kBroadcast)) neg = ctx.Add(HloInstruction::CreateBroadcast(rhs->shape(), neg, rhs->dimensions()));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kAdd, lhs, neg));
  }));
  // A - (A - B) => B
  rules.push_back(R(O::kSubtract, "A-(A-B) => B", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* rhs = Op(i, 1);
    if (!Is(rhs, O::kSubtract) || Op(rhs, 0) != Op(i, 0)) return nullptr;
    if (!IsInt(i) && !ctx.options().enable_fast_math) return nullptr;
    return IfCompatible(i, Op(rhs, 1), ctx);
  }));
  // A - (A + B) => -B
  rules.push_back(R(O::kSubtract, "A-(A+B) => -B", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* rhs = Op(i, 1);
    if (!Is(rhs, O::kAdd) || (Op(rhs, 0) != Op(i, 0) && Op(rhs, 1) != Op(i, 0))) return nullptr;
    if (!IsInt(i) && !ctx.options().enable_fast_math) return nullptr;
    HloInstruction* b = Op(rhs, 0) == Op(i, 0) ? Op(rhs, 1) : Op(rhs, 0);
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kNegate, b));
  }));
  // (A + B) - A => B
  rules.push_back(R(O::kSubtract, "(A+B)-A => B", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* lhs = Op(i, 0);
    HloInstruction* a = Op(i, 1);
    if (!Is(lhs, O::kAdd) || (Op(lhs, 0) != a && Op(lhs, 1) != a)) return nullptr;
    if (!IsInt(i) && !ctx.options().enable_fast_math) return nullptr;
    return IfCompatible(i, Op(lhs, 1) == a ? Op(lhs, 0) : Op(lhs, 1), ctx);
  }));
}

// ---------------------------------------------------------------- multiply
// Matches multiply(x, c) in either order with x not a constant and c a
// constant; returns {x, c}.
std::optional<std::pair<HloInstruction*, HloInstruction*>> MatchMulByConstant(HloInstruction* m) {
  if (!Is(m, O::kMultiply)) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    if (!IsConstant(Op(m, k)) && IsConstant(Op(m, 1 - k))) return std::make_pair(Op(m, k), Op(m, 1 - k));
  }
  return std::nullopt;
}

void MultiplyRules(std::vector<Rule>& rules) {
  // A * 1 => A
  rules.push_back(R(O::kMultiply, "A*1 => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsAll(Op(i, 1), 1)) return nullptr;
    return IfCompatible(i, Op(i, 0), ctx);
  }));
  // 1 * A => A
  rules.push_back(R(O::kMultiply, "1*A => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsAll(Op(i, 0), 1)) return nullptr;
    return IfCompatible(i, Op(i, 1), ctx);
  }));
  // 0 * A => 0, A * 0 => 0 (integers; floats need fast math: NaN*0 = NaN)
  rules.push_back(R(O::kMultiply, "A*0 => 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsInt(i) && !ctx.options().enable_fast_math) return nullptr;
    for (int k = 0; k < 2; ++k) {
      if (IsAll(Op(i, k), 0)) {
        if (HloInstruction* r = IfCompatible(i, Op(i, k), ctx)) return r;
      }
    }
    return nullptr;
  }));
  // (-A) * (-B) => A * B
  rules.push_back(R(O::kMultiply, "(-A)*(-B) => A*B", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kNegate) || !Is(Op(i, 1), O::kNegate)) return nullptr;
    HloInstruction* a = Op(Op(i, 0), 0);
    HloInstruction* b = Op(Op(i, 1), 0);
    i->ReplaceOperandWith(0, a);
    i->ReplaceOperandWith(1, b);
    return i;
  }));
  // |A| * |A| => A * A (A real)
  rules.push_back(R(O::kMultiply, "|A|*|A| => A*A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    if (Op(i, 0) != Op(i, 1) || !Is(Op(i, 0), O::kAbs) || IsComplex(Op(i, 0)->operand(0))) return nullptr;
    HloInstruction* a = Op(Op(i, 0), 0);
    i->ReplaceOperandWith(0, a);
    i->ReplaceOperandWith(1, a);
    return i;
  }));
  // A * convert(P) => select(P, A, 0) for predicate P
  rules.push_back(R(O::kMultiply, "A*convert(pred) => select(pred,A,0)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    for (int k = 1; k >= 0; --k) {
      HloInstruction* conv = Op(i, k);
      if (!Is(conv, O::kConvert) || conv->operand(0)->shape().element_type() != PrimitiveType::kPred) continue;
      HloInstruction* zeros = ctx.ScalarLike(i, 0);
      return ctx.Add(HloInstruction::CreateTernary(i->shape(), O::kSelect, Op(conv, 0), Op(i, 1 - k), zeros));
    }
    return nullptr;
  }));
  // (A * C1) * (B * C2) => (A * B) * (C1 * C2)
  rules.push_back(R(O::kMultiply, "(A*C1)*(B*C2) => (A*B)*(C1*C2)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    auto l = MatchMulByConstant(Op(i, 0));
    auto r = MatchMulByConstant(Op(i, 1));
    if (!l || !r) return nullptr;
    HloInstruction* product = CombineConstants(O::kMultiply, l->second, r->second, i, ctx);
    HloInstruction* ab = ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, l->first, r->first));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, ab, product));
  }));
  // (A * C1) * C2 => A * (C1 * C2)
  rules.push_back(R(O::kMultiply, "(A*C1)*C2 => A*(C1*C2)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    for (int k = 0; k < 2; ++k) {
      auto inner = MatchMulByConstant(Op(i, k));
      if (!inner || !IsConstant(Op(i, 1 - k))) continue;
      HloInstruction* product = CombineConstants(O::kMultiply, inner->second, Op(i, 1 - k), i, ctx);
      return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, inner->first, product));
    }
    return nullptr;
  }));
  // (A * C) * broadcast(B) => A * broadcast(B * C) for scalar C
  rules.push_back(R(O::kMultiply, "(A*C)*broadcast(B) => A*broadcast(B*C)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    for (int k = 0; k < 2; ++k) {
      HloInstruction* inner = Op(i, k);
      HloInstruction* op = Op(i, 1 - k);
      if (!Is(inner, O::kMultiply)) continue;
      HloInstruction *a = nullptr, *constant = nullptr;
      for (int j = 0; j < 2 && constant == nullptr; ++j) {
        HloInstruction* c = Op(inner, 1 - j);
        if (IsConstant(Op(inner, j))) continue;
        if (IsConstant(c)) {
          constant = c;
        } else if (Is(c, O::kBroadcast) && IsConstant(Op(c, 0))) {
          constant = Op(c, 0);
        } else {
          continue;
        }
        a = Op(inner, j);
      }
      if (constant == nullptr) continue;
      // XLA matches the first shape that fits and then checks the other side.
      if (!constant->shape().IsScalar() || !Is(op, O::kBroadcast) || IsConstant(Op(op, 0))) return nullptr;
      HloInstruction* b = Op(op, 0);
      HloInstruction* c = constant;
      if (!b->shape().IsScalar()) c = ctx.Add(HloInstruction::CreateBroadcast(b->shape(), constant, {}));
      HloInstruction* bc = ctx.Add(HloInstruction::CreateBinary(b->shape(), O::kMultiply, b, c));
      HloInstruction* bcast = ctx.Add(HloInstruction::CreateBroadcast(i->shape(), bc, op->dimensions()));
      return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, a, bcast));
    }
    return nullptr;
  }));
  // (A * broadcast(C1)) * broadcast(C2) => A * broadcast(C1 * C2)
  rules.push_back(R(O::kMultiply, "(A*bcast(C1))*bcast(C2) => A*bcast(C1*C2)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* inner = Op(i, 0);
    if (!Is(inner, O::kMultiply) || !IsBroadcastOfConstantScalar(Op(inner, 1)) || !IsBroadcastOfConstantScalar(Op(i, 1))) {
      return nullptr;
    }
    HloInstruction* product = CombineConstants(O::kMultiply, Op(Op(inner, 1), 0), Op(Op(i, 1), 0), i, ctx);
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, Op(inner, 0), product));
  }));
  // exp(A) * exp(B) => exp(A + B)
  rules.push_back(R(O::kMultiply, "exp(A)*exp(B) => exp(A+B)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kExp) || !Is(Op(i, 1), O::kExp)) return nullptr;
    HloInstruction* sum = ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kAdd, Op(Op(i, 0), 0), Op(Op(i, 1), 0)));
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kExp, sum));
  }));
  // sqrt(A) * sqrt(A) => A for A >= 0
  rules.push_back(R(O::kMultiply, "sqrt(A)*sqrt(A) => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kSqrt) || !Is(Op(i, 1), O::kSqrt)) return nullptr;
    HloInstruction* a = Op(Op(i, 0), 0);
    if (Op(Op(i, 1), 0) != a || !IsNonNegative(a, ctx.options())) return nullptr;
    return a;
  }));
  // rsqrt(A) * rsqrt(A) => 1 / A for A >= 0
  rules.push_back(R(O::kMultiply, "rsqrt(A)*rsqrt(A) => 1/A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kRsqrt) || !Is(Op(i, 1), O::kRsqrt)) return nullptr;
    HloInstruction* a = Op(Op(i, 0), 0);
    if (Op(Op(i, 1), 0) != a || !IsNonNegative(a, ctx.options())) return nullptr;
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kDivide, ctx.ScalarLike(a, 1), a));
  }));
}

// ---------------------------------------------------------------- divide
// The constant C of `b` = C or broadcast(C) with one element, for integer
// division and remainder by powers of two.
HloInstruction* EffectiveScalarDivisor(HloInstruction* b) {
  if (IsEffectiveScalarConstant(b)) return b;
  if (Is(b, O::kBroadcast) && IsEffectiveScalarConstant(Op(b, 0))) return Op(b, 0);
  return nullptr;
}

// Builds select(A < 0, -(|A| op k), |A| op k) for signed A.
HloInstruction* SignedPowerOfTwo(HloInstruction* i, HloOpcode op, int64_t k, RuleContext& ctx) {
  HloInstruction* a = Op(i, 0);
  HloInstruction* negative = ctx.Add(HloInstruction::CreateCompare(WithType(a->shape(), PrimitiveType::kPred), a,
                                                                   ctx.ScalarLike(a, 0), ComparisonDirection::kLt));
  HloInstruction* negated = ctx.Add(HloInstruction::CreateUnary(a->shape(), O::kNegate, a));
  HloInstruction* abs = ctx.Add(HloInstruction::CreateTernary(a->shape(), O::kSelect, negative, negated, a));
  HloInstruction* q = ctx.Add(HloInstruction::CreateBinary(i->shape(), op, abs, ctx.ScalarLike(abs, static_cast<double>(k))));
  HloInstruction* nq = ctx.Add(HloInstruction::CreateUnary(q->shape(), O::kNegate, q));
  return ctx.Add(HloInstruction::CreateTernary(i->shape(), O::kSelect, negative, nq, q));
}

void DivideRules(std::vector<Rule>& rules) {
  // A / 1 => A
  rules.push_back(R(O::kDivide, "A/1 => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsAll(Op(i, 1), 1)) return nullptr;
    return IfCompatible(i, Op(i, 0), ctx);
  }));
  // A / 2^k => A >> k (integers; signed dividends through |A|)
  rules.push_back(R(O::kDivide, "A/2^k => A>>k", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsInt(i)) return nullptr;
    HloInstruction* c = EffectiveScalarDivisor(Op(i, 1));
    if (c == nullptr) return nullptr;
    if (IsSignedIntegralType(i->shape().element_type())) {
      int64_t b = c->literal().GetInt(0);
      if (b <= 0 || !std::has_single_bit(static_cast<uint64_t>(b))) return nullptr;
      return SignedPowerOfTwo(i, O::kShiftRightLogical, std::countr_zero(static_cast<uint64_t>(b)), ctx);
    }
    uint64_t b = c->literal().GetUint(0);
    if (!std::has_single_bit(b)) return nullptr;
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kShiftRightLogical, Op(i, 0),
                                                ctx.ScalarLike(Op(i, 0), std::countr_zero(b))));
  }));
  // exp(A) / exp(B) => exp(A - B)
  rules.push_back(R(O::kDivide, "exp(A)/exp(B) => exp(A-B)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kExp) || !Is(Op(i, 1), O::kExp)) return nullptr;
    HloInstruction* d = ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kSubtract, Op(Op(i, 0), 0), Op(Op(i, 1), 0)));
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kExp, d));
  }));
  // A / exp(B) => A * exp(-B)
  rules.push_back(R(O::kDivide, "A/exp(B) => A*exp(-B)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 1), O::kExp)) return nullptr;
    HloInstruction* neg = ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kNegate, Op(Op(i, 1), 0)));
    HloInstruction* e = ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kExp, neg));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, Op(i, 0), e));
  }));
  // A / pow(B, C) => A * pow(B, -C)
  rules.push_back(R(O::kDivide, "A/pow(B,C) => A*pow(B,-C)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* p = Op(i, 1);
    if (!Is(p, O::kPower)) return nullptr;
    HloInstruction* neg = ctx.Add(HloInstruction::CreateUnary(Op(p, 1)->shape(), O::kNegate, Op(p, 1)));
    HloInstruction* pw = ctx.Add(HloInstruction::CreateBinary(Op(p, 0)->shape(), O::kPower, Op(p, 0), neg));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, Op(i, 0), pw));
  }));
  // A / sqrt(B) => A * rsqrt(B)
  rules.push_back(R(O::kDivide, "A/sqrt(B) => A*rsqrt(B)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* s = Op(i, 1);
    if (!Is(s, O::kSqrt) || s->user_count() != 1) return nullptr;
    HloInstruction* r = ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kRsqrt, Op(s, 0)));
    return ctx.Add(HloInstruction::CreateBinary(r->shape(), O::kMultiply, Op(i, 0), r));
  }));
  // A / rsqrt(B) => A * sqrt(B)
  rules.push_back(R(O::kDivide, "A/rsqrt(B) => A*sqrt(B)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* s = Op(i, 1);
    if (!Is(s, O::kRsqrt) || s->user_count() != 1) return nullptr;
    HloInstruction* r = ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kSqrt, Op(s, 0)));
    return ctx.Add(HloInstruction::CreateBinary(r->shape(), O::kMultiply, Op(i, 0), r));
  }));
  // A / C => A * (1 / C) (floats and complex; C folded)
  rules.push_back(R(O::kDivide, "A/C => A*(1/C)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (IsInt(i) || IsPred(i)) return nullptr;
    HloInstruction* a = Op(i, 0);
    HloInstruction* b = Op(i, 1);
    if (IsConstant(a)) return nullptr;
    HloInstruction* c = Is(b, O::kBroadcast) ? Op(b, 0) : b;
    if (!IsConstant(c) || c->literal().elided()) return nullptr;
    PrimitiveType t = c->shape().element_type();
    if (!IsFloatingPointType(t) && !IsComplexType(t)) return nullptr;
    Literal inv(c->literal().shape());
    for (int64_t k = 0; k < inv.element_count(); ++k) {
      if (IsComplexType(t)) {
        inv.SetComplex(k, std::complex<double>(1.0) / c->literal().GetComplex(k));
      } else {
        // Computed in the element type's own precision where it is f32 or
        // narrower (1/x rounds once either way).
        inv.SetDouble(k, t == PrimitiveType::kF64 ? 1.0 / c->literal().GetDouble(k)
                                                  : static_cast<double>(1.0f / static_cast<float>(c->literal().GetDouble(k))));
      }
    }
    HloInstruction* inverse = ctx.Add(HloInstruction::CreateConstant(std::move(inv)));
    if (b != c) inverse = ctx.Add(HloInstruction::CreateBroadcast(b->shape(), inverse, b->dimensions()));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, a, inverse));
  }));
  // A / broadcast(B) => A * broadcast(1 / B) (CPU; complex only with fast math)
  rules.push_back(R(O::kDivide, "A/bcast(B) => A*bcast(1/B)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (IsInt(i) || !ctx.options().executing_on_cpu || !ctx.options().enable_sink_broadcast) return nullptr;
    if (IsComplex(i) && !ctx.options().enable_fast_math) return nullptr;
    HloInstruction* bc = Op(i, 1);
    if (!Is(bc, O::kBroadcast) || Op(bc, 0)->user_count() != 1) return nullptr;
    HloInstruction* b = Op(bc, 0);
    HloInstruction* recip = ctx.Add(HloInstruction::CreateBinary(b->shape(), O::kDivide, ctx.ScalarLike(b, 1), b));
    HloInstruction* rb = ctx.Add(HloInstruction::CreateBroadcast(i->shape(), recip, bc->dimensions()));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, Op(i, 0), rb));
  }));
  // (A / B) / (C / D) => (A * D) / (B * C)
  rules.push_back(R(O::kDivide, "(A/B)/(C/D) => (A*D)/(B*C)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (IsInt(i) || !Is(Op(i, 0), O::kDivide) || !Is(Op(i, 1), O::kDivide)) return nullptr;
    HloInstruction* ad = ctx.Binary(O::kMultiply, Op(Op(i, 0), 0), Op(Op(i, 1), 1));
    HloInstruction* bc = ctx.Binary(O::kMultiply, Op(Op(i, 0), 1), Op(Op(i, 1), 0));
    return ctx.Binary(O::kDivide, ad, bc);
  }));
  // (A / B) / C => A / (B * C)
  rules.push_back(R(O::kDivide, "(A/B)/C => A/(B*C)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (IsInt(i) || !Is(Op(i, 0), O::kDivide)) return nullptr;
    HloInstruction* bc = ctx.Binary(O::kMultiply, Op(Op(i, 0), 1), Op(i, 1));
    return ctx.Binary(O::kDivide, Op(Op(i, 0), 0), bc);
  }));
  // A / (B / C) => (A * C) / B
  rules.push_back(R(O::kDivide, "A/(B/C) => (A*C)/B", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (IsInt(i) || !Is(Op(i, 1), O::kDivide)) return nullptr;
    HloInstruction* ac = ctx.Binary(O::kMultiply, Op(i, 0), Op(Op(i, 1), 1));
    return ctx.Binary(O::kDivide, ac, Op(Op(i, 1), 0));
  }));
  // convert(P) / broadcast(B) => broadcast(1 / B) * convert(P) for predicate P
  rules.push_back(R(O::kDivide, "convert(pred)/bcast(B) => bcast(1/B)*convert(pred)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* a = Op(i, 0);
    HloInstruction* bc = Op(i, 1);
    if (IsInt(i) || !Is(a, O::kConvert) || a->operand(0)->shape().element_type() != PrimitiveType::kPred ||
        !Is(bc, O::kBroadcast) || !bc->operand(0)->shape().IsScalar()) {
      return nullptr;
    }
    HloInstruction* b = Op(bc, 0);
    HloInstruction* recip = ctx.Binary(O::kDivide, ctx.ScalarLike(b, 1), b);
    HloInstruction* recip_b = ctx.Add(HloInstruction::CreateBroadcast(i->shape(), recip, {}));
    return ctx.Binary(O::kMultiply, recip_b, a);
  }));
}

// ---------------------------------------------------------------- remainder
void RemainderRules(std::vector<Rule>& rules) {
  // (A % B) % B => A % B
  rules.push_back(R(O::kRemainder, "(A%B)%B => A%B", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    HloInstruction* a = Op(i, 0);
    if (!Is(a, O::kRemainder) || Op(a, 1) != Op(i, 1)) return nullptr;
    return a;
  }));
  // A % 2^k => A & (2^k - 1) (integers; signed dividends through |A|)
  rules.push_back(R(O::kRemainder, "A%2^k => A&(2^k-1)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsInt(i)) return nullptr;
    HloInstruction* c = EffectiveScalarDivisor(Op(i, 1));
    if (c == nullptr) return nullptr;
    if (IsSignedIntegralType(i->shape().element_type())) {
      int64_t b = c->literal().GetInt(0);
      if (b <= 0 || !std::has_single_bit(static_cast<uint64_t>(b))) return nullptr;
      return SignedPowerOfTwo(i, O::kAnd, b - 1, ctx);
    }
    uint64_t b = c->literal().GetUint(0);
    if (!std::has_single_bit(b)) return nullptr;
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kAnd, Op(i, 0),
                                                ctx.ScalarLike(Op(i, 0), static_cast<double>(b - 1))));
  }));
  // iota % N => iota when N >= the iota's extent
  rules.push_back(R(O::kRemainder, "iota%N => iota (N >= extent)", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    HloInstruction* iota = Op(i, 0);
    HloInstruction* b = Op(i, 1);
    if (!Is(iota, O::kIota) || !Is(b, O::kBroadcast) || !IsEffectiveScalarConstant(b->operand(0)) || !IsInt(b)) return nullptr;
    int64_t n = b->operand(0)->literal().GetInt(0);
    if (IsUnsignedIntegralType(b->shape().element_type()) && b->operand(0)->literal().GetUint(0) > uint64_t{1} << 62) {
      n = int64_t{1} << 62;
    }
    return n >= iota->shape().dimensions(iota->iota_dimension()) ? iota : nullptr;
  }));
  // (iota + N) % N => iota % N when iota + N cannot overflow
  rules.push_back(R(O::kRemainder, "(iota+N)%N => iota%N", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* add = Op(i, 0);
    HloInstruction* bcast = Op(i, 1);
    if (!Is(add, O::kAdd) || !Is(bcast, O::kBroadcast) || !IsEffectiveScalarConstant(bcast->operand(0)) || !IsInt(i)) {
      return nullptr;
    }
    HloInstruction* divisor = Op(bcast, 0);
    for (int k = 0; k < 2; ++k) {
      HloInstruction* iota = Op(add, k);
      HloInstruction* addend = Op(add, 1 - k);
      if (!Is(iota, O::kIota) || !Is(addend, O::kBroadcast) || Op(addend, 0) != divisor) continue;
      int64_t n = divisor->literal().GetInt(0);
      int64_t bound = iota->shape().dimensions(iota->iota_dimension());
      int bits = PrimitiveBitWidth(i->shape().element_type());
      if (n > std::numeric_limits<int64_t>::max() - bound) return nullptr;
      int64_t max_val = n + bound;
      bool fits = IsUnsignedIntegralType(i->shape().element_type())
                      ? (bits >= 64 || (max_val >= 0 && static_cast<uint64_t>(max_val) < (uint64_t{1} << bits)))
                      : (bits >= 64 || max_val < (int64_t{1} << (bits - 1)));
      if (!fits) return nullptr;
      return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kRemainder, iota, bcast));
    }
    return nullptr;
  }));
}

// ---------------------------------------------------------------- unary, logic
void UnaryAndLogicRules(std::vector<Rule>& rules) {
  // -(-A) => A
  rules.push_back(R(O::kNegate, "-(-A) => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kNegate)) return nullptr;
    return IfCompatible(i, Op(Op(i, 0), 0), ctx);
  }));
  // not(not(A)) => A
  rules.push_back(R(O::kNot, "not(not(A)) => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kNot)) return nullptr;
    return IfCompatible(i, Op(Op(i, 0), 0), ctx);
  }));
  // abs(A) => A for A >= 0
  rules.push_back(R(O::kAbs, "abs(A) => A for A >= 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    return IsNonNegative(i->operand(0), ctx.options()) ? Op(i, 0) : nullptr;
  }));
  // A & true => A, true & A => A (predicates)
  rules.push_back(R(O::kAnd, "A&true => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsPred(Op(i, 0)) || !IsPred(Op(i, 1))) return nullptr;
    for (int k = 1; k >= 0; --k) {
      if (IsAll(Op(i, k), 1)) {
        if (HloInstruction* r = IfCompatible(i, Op(i, 1 - k), ctx)) return r;
      }
    }
    return nullptr;
  }));
  // A & 0 => 0, 0 & A => 0
  rules.push_back(R(O::kAnd, "A&0 => 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    for (int k = 1; k >= 0; --k) {
      if (IsAll(Op(i, k), 0)) {
        if (HloInstruction* r = IfCompatible(i, Op(i, k), ctx)) return r;
      }
    }
    return nullptr;
  }));
  // (X < C1) & (X < C2) => X < min(C1, C2) (s32 scalar constants; C > X counts as X < C)
  rules.push_back(R(O::kAnd, "(X<C1)&(X<C2) => X<min(C1,C2)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    auto info = [](HloInstruction* cmp) -> std::optional<std::pair<HloInstruction*, int64_t>> {
      if (!Is(cmp, O::kCompare)) return std::nullopt;
      auto s32_scalar = [](const HloInstruction* c) {
        return IsEffectiveScalarConstant(c) && c->shape().element_type() == PrimitiveType::kS32;
      };
      if (cmp->comparison_direction() == ComparisonDirection::kLt && s32_scalar(cmp->operand(1))) {
        return std::make_pair(Op(cmp, 0), cmp->operand(1)->literal().GetInt(0));
      }
      if (cmp->comparison_direction() == ComparisonDirection::kGt && s32_scalar(cmp->operand(0))) {
        return std::make_pair(Op(cmp, 1), cmp->operand(0)->literal().GetInt(0));
      }
      return std::nullopt;
    };
    auto l = info(Op(i, 0));
    auto r = info(Op(i, 1));
    if (!l || !r || l->first != r->first) return nullptr;
    HloInstruction* bound = ctx.ScalarLike(l->first, static_cast<double>(std::min(l->second, r->second)));
    return ctx.Add(HloInstruction::CreateCompare(Op(i, 0)->shape(), l->first, bound, ComparisonDirection::kLt));
  }));
  // A | true => true, true | A => true (predicates)
  rules.push_back(R(O::kOr, "A|true => true", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsPred(Op(i, 0)) || !IsPred(Op(i, 1))) return nullptr;
    for (int k = 1; k >= 0; --k) {
      if (IsAll(Op(i, k), 1)) {
        if (HloInstruction* r = IfCompatible(i, Op(i, k), ctx)) return r;
      }
    }
    return nullptr;
  }));
  // A | 0 => A, 0 | A => A
  rules.push_back(R(O::kOr, "A|0 => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    for (int k = 1; k >= 0; --k) {
      if (IsAll(Op(i, k), 0)) {
        if (HloInstruction* r = IfCompatible(i, Op(i, 1 - k), ctx)) return r;
      }
    }
    return nullptr;
  }));
  // A ^ A => 0 (also identical side-effect-free operands)
  rules.push_back(R(O::kXor, "A^A => 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* a = Op(i, 0);
    HloInstruction* b = Op(i, 1);
    bool same = a == b;
    if (!same && !a->HasSideEffect() && a->opcode() == b->opcode() && a->operands() == b->operands() &&
        a->shape() == b->shape() && a->IdenticalSlowPath(*b) &&
        (a->has_sharding() == b->has_sharding()) && (!a->has_sharding() || a->sharding() == b->sharding())) {
      same = true;
    }
    if (!same) return nullptr;
    return ctx.ScalarLike(i, 0);
  }));
  // A ^ 0 => A, 0 ^ A => A
  rules.push_back(R(O::kXor, "A^0 => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    for (int k = 1; k >= 0; --k) {
      if (IsAll(Op(i, k), 0)) {
        if (HloInstruction* r = IfCompatible(i, Op(i, 1 - k), ctx)) return r;
      }
    }
    return nullptr;
  }));
  // ln(exp(A)) => A (fast math)
  rules.push_back(R(O::kLog, "ln(exp(A)) => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!ctx.options().enable_fast_math || !Is(Op(i, 0), O::kExp)) return nullptr;
    return IfCompatible(i, Op(Op(i, 0), 0), ctx);
  }));
  // ln(pow(A, B)) => select(B == 0, 0, ln(|A|) * B)
  rules.push_back(R(O::kLog, "ln(pow(A,B)) => B*ln(|A|)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* p = Op(i, 0);
    if (!Is(p, O::kPower)) return nullptr;
    HloInstruction* a = Op(p, 0);
    HloInstruction* b = Op(p, 1);
    HloInstruction* abs_a = IsComplex(a) ? a : ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kAbs, a));
    HloInstruction* log = ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kLog, abs_a));
    HloInstruction* prod = ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, log, b));
    HloInstruction* b_zero = ctx.Add(HloInstruction::CreateCompare(WithType(b->shape(), PrimitiveType::kPred), b,
                                                                  ctx.ScalarLike(b, 0), ComparisonDirection::kEq));
    return ctx.Add(HloInstruction::CreateTernary(i->shape(), O::kSelect, b_zero, ctx.ScalarLike(i, 0), prod));
  }));
  // ln(sqrt(A)) => ln(A) * 0.5; ln(rsqrt(A)) => ln(A) * -0.5
  rules.push_back(R(O::kLog, "ln(sqrt(A)) => ln(A)*0.5", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* s = Op(i, 0);
    if (!Is(s, O::kSqrt) && !Is(s, O::kRsqrt)) return nullptr;
    HloInstruction* log = ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kLog, Op(s, 0)));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, log,
                                                ctx.ScalarLike(i, Is(s, O::kSqrt) ? 0.5 : -0.5)));
  }));
  // exp(0) => 1
  rules.push_back(R(O::kExp, "exp(0) => 1", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* x = Op(i, 0);
    if (Is(x, O::kBroadcast)) x = Op(x, 0);
    if (!IsConstantScalar(x) || !IsAll(x, 0)) return nullptr;
    return ctx.ScalarLike(i, 1);
  }));
  // pow(A, 0) => 1
  rules.push_back(R(O::kPower, "A**0 => 1", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    return IsAll(Op(i, 1), 0) ? ctx.ScalarLike(i, 1) : nullptr;
  }));
  // pow(A, 1) => A
  rules.push_back(R(O::kPower, "A**1 => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    return IsAll(Op(i, 1), 1) ? IfCompatible(i, Op(i, 0), ctx) : nullptr;
  }));
  // pow(exp(A), B) => exp(A * B)
  rules.push_back(R(O::kPower, "exp(A)**B => exp(A*B)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kExp)) return nullptr;
    HloInstruction* ab = ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, Op(Op(i, 0), 0), Op(i, 1)));
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kExp, ab));
  }));
  // pow(A, 2) => A * A
  rules.push_back(R(O::kPower, "A**2 => A*A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsAll(Op(i, 1), 2)) return nullptr;
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, Op(i, 0), Op(i, 0)));
  }));
  // pow(A, 3) => A * (A * A)
  rules.push_back(R(O::kPower, "A**3 => A*(A*A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsAll(Op(i, 1), 3)) return nullptr;
    HloInstruction* sq = ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, Op(i, 0), Op(i, 0)));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, Op(i, 0), sq));
  }));
  // pow(A, -1) => 1 / A
  rules.push_back(R(O::kPower, "A**-1 => 1/A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsAll(Op(i, 1), -1)) return nullptr;
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kDivide, ctx.ScalarLike(Op(i, 0), 1), Op(i, 0)));
  }));
  // pow(A, 0.5) => sqrt(A) for A >= 0
  rules.push_back(R(O::kPower, "A**0.5 => sqrt(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsFloat(Op(i, 1)) || !IsAll(Op(i, 1), 0.5) || !IsNonNegative(Op(i, 0), ctx.options())) return nullptr;
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kSqrt, Op(i, 0)));
  }));
  // sqrt(A * A) => |A| (fast math)
  rules.push_back(R(O::kSqrt, "sqrt(A*A) => |A|", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* m = Op(i, 0);
    if (!ctx.options().enable_fast_math || !Is(m, O::kMultiply) || Op(m, 0) != Op(m, 1)) return nullptr;
    PrimitiveType t = m->shape().element_type();
    if (IsComplexType(t)) {
      PrimitiveType real = t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
      HloInstruction* abs = ctx.Add(HloInstruction::CreateUnary(WithType(m->shape(), real), O::kAbs, Op(m, 0)));
      return ctx.Add(HloInstruction::CreateConvert(m->shape(), abs));
    }
    return ctx.Add(HloInstruction::CreateUnary(Op(m, 0)->shape(), O::kAbs, Op(m, 0)));
  }));
  // rsqrt(pow(A, -2)) => A for A >= 0
  rules.push_back(R(O::kRsqrt, "rsqrt(A**-2) => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* p = Op(i, 0);
    if (!Is(p, O::kPower) || !IsAll(p->operand(1), -2) || !IsNonNegative(p->operand(0), ctx.options())) return nullptr;
    return Op(p, 0);
  }));
  // rsqrt(1 / A) => sqrt(A) for A >= 0
  rules.push_back(R(O::kRsqrt, "rsqrt(1/A) => sqrt(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* d = Op(i, 0);
    if (!Is(d, O::kDivide) || !IsAll(d->operand(0), 1) || !IsNonNegative(d->operand(1), ctx.options())) return nullptr;
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kSqrt, Op(d, 1)));
  }));
  // complex(real(C), imag(C)) => C
  rules.push_back(R(O::kComplex, "complex(real(C),imag(C)) => C", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kReal) || !Is(Op(i, 1), O::kImag) || Op(Op(i, 0), 0) != Op(Op(i, 1), 0)) return nullptr;
    return Op(Op(i, 0), 0);
  }));
  // real(complex(R, I)) => R; real(X) => X for real X
  rules.push_back(R(O::kReal, "real(complex(R,I)) => R", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    if (Is(Op(i, 0), O::kComplex)) return Op(Op(i, 0), 0);
    return IsComplex(Op(i, 0)) ? nullptr : Op(i, 0);
  }));
  // imag(complex(R, I)) => I; imag(X) => 0 for real X
  rules.push_back(R(O::kImag, "imag(complex(R,I)) => I", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (Is(Op(i, 0), O::kComplex)) return Op(Op(i, 0), 1);
    return IsComplex(Op(i, 0)) ? nullptr : ctx.ScalarLike(i, 0);
  }));
  // iota over a dimension of size <= 1 => 0
  rules.push_back(R(O::kIota, "iota of extent <= 1 => 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->shape().dimensions(i->iota_dimension()) > 1) return nullptr;
    return ctx.ScalarLike(i, 0);
  }));
}

// ---------------------------------------------------------------- min, max, clamp
// max(C1 broadcast, min(X, C2 broadcast)) and the like => clamp(C1, X, C2)
// when C1 < C2.
HloInstruction* MinMaxToClamp(HloInstruction* inst, HloOpcode outer, RuleContext& ctx) {
  HloOpcode inner = outer == O::kMaximum ? O::kMinimum : O::kMaximum;
  auto bcast_scalar = [](HloInstruction* b) {
    return Is(b, O::kBroadcast) && IsEffectiveScalarConstant(b->operand(0)) && !IsComplex(b);
  };
  for (int k = 0; k < 2; ++k) {
    HloInstruction* bound = Op(inst, k);
    HloInstruction* other = Op(inst, 1 - k);
    if (!bcast_scalar(bound) || !Is(other, inner)) continue;
    for (int j = 0; j < 2; ++j) {
      HloInstruction* x = Op(other, j);
      HloInstruction* bound2 = Op(other, 1 - j);
      if (!bcast_scalar(bound2)) continue;
      HloInstruction* lower = outer == O::kMaximum ? bound : bound2;
      HloInstruction* upper = outer == O::kMaximum ? bound2 : bound;
      double lo = lower->operand(0)->literal().GetDouble(0);
      double hi = upper->operand(0)->literal().GetDouble(0);
      if (IsInt(lower)) {
        if (!(lower->operand(0)->literal().GetInt(0) < upper->operand(0)->literal().GetInt(0))) return nullptr;
      } else if (!(lo < hi)) {
        return nullptr;
      }
      return ctx.Add(HloInstruction::CreateTernary(x->shape(), O::kClamp, lower, x, upper));
    }
  }
  return nullptr;
}

void MinMaxRules(std::vector<Rule>& rules) {
  for (HloOpcode op : {O::kMaximum, O::kMinimum}) {
    bool is_max = op == O::kMaximum;
    // max(A, A) => A
    rules.push_back(R(op, is_max ? "max(A,A) => A" : "min(A,A) => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
      return Op(i, 0) == Op(i, 1) ? Op(i, 0) : nullptr;
    }));
    // max(A, -inf) => A, min(A, inf) => A (the bound in its own type)
    rules.push_back(R(op, is_max ? "max(A,-inf) => A" : "min(A,inf) => A", [is_max](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
      PrimitiveType t = i->shape().element_type();
      if (!IsIntegralType(t) && !(IsFloatingPointType(t) && ctx.options().minmax_propagate_nan)) return nullptr;
      HloInstruction* lhs = Op(i, 0);
      HloInstruction* rhs = Op(i, 1);
      PrimitiveType lt = lhs->shape().element_type(), rt = rhs->shape().element_type();
      auto extreme = [is_max](HloInstruction* x, PrimitiveType xt) {
        return is_max ? IsAllMinValue(x, xt) : IsAllMaxValue(x, xt);
      };
      if (rt == t && extreme(lhs, lt)) return rhs;
      if (lt == t && extreme(rhs, rt)) return lhs;
      return nullptr;
    }));
    // max(max(A, B), B) => max(A, B), max(max(A, B), A) => max(A, B)
    rules.push_back(R(op, is_max ? "max(max(A,B),B) => max(A,B)" : "min(min(A,B),B) => min(A,B)", [op](HloInstruction* i, RuleContext&) -> HloInstruction* {
      HloInstruction* lhs = Op(i, 0);
      if (!Is(lhs, op) || (Op(lhs, 0) != Op(i, 1) && Op(lhs, 1) != Op(i, 1))) return nullptr;
      return lhs;
    }));
    // max(A, max(A, B)) => max(A, B)
    rules.push_back(R(op, is_max ? "max(A,max(A,B)) => max(A,B)" : "min(A,min(A,B)) => min(A,B)", [op](HloInstruction* i, RuleContext&) -> HloInstruction* {
      HloInstruction* rhs = Op(i, 1);
      if (!Is(rhs, op) || Op(rhs, 0) != Op(i, 0)) return nullptr;
      return rhs;
    }));
    // max(B, max(A, B)) => max(B, A) (not max(A, B): NaNs of different signs)
    rules.push_back(R(op, is_max ? "max(B,max(A,B)) => max(B,A)" : "min(B,min(A,B)) => min(B,A)", [op](HloInstruction* i, RuleContext&) -> HloInstruction* {
      HloInstruction* rhs = Op(i, 1);
      if (!Is(rhs, op) || Op(rhs, 1) != Op(i, 0)) return nullptr;
      i->ReplaceOperandWith(1, Op(rhs, 0));
      return i;
    }));
    // max(C1, min(A, C2)) => clamp(C1, A, C2) for C1 < C2 (and the mirror)
    rules.push_back(R(op, is_max ? "max(C1,min(A,C2)) => clamp(C1,A,C2)" : "min(C2,max(A,C1)) => clamp(C1,A,C2)", [op](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
      return MinMaxToClamp(i, op, ctx);
    }));
  }
  // max(L, clamp(L, A, H)) => clamp(L, A, H)
  rules.push_back(R(O::kMaximum, "max(L,clamp(L,A,H)) => clamp(L,A,H)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    for (int k = 0; k < 2; ++k) {
      HloInstruction* c = Op(i, 1 - k);
      if (!Is(c, O::kClamp)) continue;
      if (Op(c, 0) != Op(i, k)) return nullptr;
      return IfCompatible(i, c, ctx);
    }
    return nullptr;
  }));
  // max(f(A), f(B)) => f(max(A, B)) for nondecreasing sublinear f
  rules.push_back(R(O::kMaximum, "max(f(A),f(B)) => f(max(A,B))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* lhs = Op(i, 0);
    HloInstruction* rhs = Op(i, 1);
    if (lhs->opcode() != rhs->opcode()) return nullptr;
    switch (lhs->opcode()) {
      case O::kCbrt: case O::kErf: case O::kLogistic: case O::kTanh: break;
      default: return nullptr;
    }
    HloInstruction* m = ctx.Binary(O::kMaximum, Op(lhs, 0), Op(rhs, 0));
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), lhs->opcode(), m));
  }));
  // clamp(L, clamp(L, A, H), H) => clamp(L, A, H)
  rules.push_back(R(O::kClamp, "clamp(L,clamp(L,A,H),H) => clamp(L,A,H)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* inner = Op(i, 1);
    if (!Is(inner, O::kClamp) || Op(inner, 0) != Op(i, 0) || Op(inner, 2) != Op(i, 2)) return nullptr;
    return IfCompatible(i, inner, ctx);
  }));
  // clamp(0, partition-id, H) => partition-id when partitions <= H + 1
  rules.push_back(R(O::kClamp, "clamp(0,id,H) => id", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* id = Op(i, 1);
    if (!Is(id, O::kPartitionId) && !Is(id, O::kReplicaId)) return nullptr;
    if (!IsConstantScalar(Op(i, 0)) || !IsAll(Op(i, 0), 0) || !IsConstantScalar(Op(i, 2))) return nullptr;
    int64_t upper = static_cast<int64_t>(static_cast<uint32_t>(Op(i, 2)->literal().GetUint(0)));
    HloModule* m = ctx.module();
    if (m == nullptr) return nullptr;
    int64_t bound = Is(id, O::kPartitionId) ? m->config().num_partitions : m->config().replica_count;
    if (bound == 1 || bound > upper + 1) return nullptr;
    return id;
  }));
}

// ---------------------------------------------------------------- compare
void CompareRules(std::vector<Rule>& rules) {
  using D = ComparisonDirection;
  // Unsigned: X < 0 => false, X >= 0 => true, 0 > X => false, 0 <= X => true
  rules.push_back(R(O::kCompare, "unsigned X<0 => false", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    ComparisonType t = i->attrs().comparison_type;
    PrimitiveType et = i->operand(0)->shape().element_type();
    bool is_unsigned = t == ComparisonType::kUnsigned ||
                       (t == ComparisonType::kDefault && (IsUnsignedIntegralType(et) || et == PrimitiveType::kPred));
    if (!is_unsigned) return nullptr;
    D d = i->comparison_direction();
    if (d == D::kLt && IsAll(Op(i, 1), 0)) return ctx.ScalarLike(i, 0);
    if (d == D::kGe && IsAll(Op(i, 1), 0)) return ctx.ScalarLike(i, 1);
    if (d == D::kGt && IsAll(Op(i, 0), 0)) return ctx.ScalarLike(i, 0);
    if (d == D::kLe && IsAll(Op(i, 0), 0)) return ctx.ScalarLike(i, 1);
    return nullptr;
  }));
  // X < 0 => false, X >= 0 => true for X >= 0 (and mirrored)
  rules.push_back(R(O::kCompare, "nonneg X<0 => false", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    D d = i->comparison_direction();
    HloInstruction* lhs = Op(i, 0);
    HloInstruction* rhs = Op(i, 1);
    if (d == D::kLt && IsNonNegative(lhs, ctx.options()) && IsAll(rhs, 0)) return ctx.ScalarLike(i, 0);
    if (d == D::kGt && IsAll(lhs, 0) && IsNonNegative(rhs, ctx.options())) return ctx.ScalarLike(i, 0);
    if (d == D::kGe && IsNonNegative(lhs, ctx.options()) && IsAll(rhs, 0)) return ctx.ScalarLike(i, 1);
    if (d == D::kLe && IsAll(lhs, 0) && IsNonNegative(rhs, ctx.options())) return ctx.ScalarLike(i, 1);
    return nullptr;
  }));
  // X op X => true/false for integers
  rules.push_back(R(O::kCompare, "X op X => const (integers)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (Op(i, 0) != Op(i, 1) || !IsIntegralType(i->operand(0)->shape().element_type())) return nullptr;
    switch (i->comparison_direction()) {
      case D::kGt: case D::kLt: case D::kNe: return ctx.ScalarLike(i, 0);
      case D::kEq: case D::kGe: case D::kLe: return ctx.ScalarLike(i, 1);
    }
    return nullptr;
  }));
  // A != false => A, A == true => A (predicates, either side)
  rules.push_back(R(O::kCompare, "A!=false => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    if (!IsPred(Op(i, 0)) || !IsPred(Op(i, 1))) return nullptr;
    D d = i->comparison_direction();
    if (d == D::kNe) {
      if (IsAll(Op(i, 1), 0)) return Op(i, 0);
      if (IsAll(Op(i, 0), 0)) return Op(i, 1);
    } else if (d == D::kEq) {
      if (IsAll(Op(i, 1), 1)) return Op(i, 0);
      if (IsAll(Op(i, 0), 1)) return Op(i, 1);
    }
    return nullptr;
  }));
  // select(A >= B, 1, 0) != 0 => A >= B
  rules.push_back(R(O::kCompare, "select(A>=B,1,0)!=0 => A>=B", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->comparison_direction() != D::kNe || !IsAll(Op(i, 1), 0)) return nullptr;
    HloInstruction* sel = Op(i, 0);
    if (!Is(sel, O::kSelect) || !Is(Op(sel, 0), O::kCompare) || Op(sel, 0)->comparison_direction() != D::kGe) return nullptr;
    if (!IsAll(Op(sel, 1), 1) || !IsAll(Op(sel, 2), 0) || !ctx.SameShape(i->shape(), Op(sel, 0)->shape())) return nullptr;
    return Op(sel, 0);
  }));
  // max(A, B) > A => B > A; A > min(A, B) => A > B (and the mirrors)
  rules.push_back(R(O::kCompare, "max(A,B)>A => B>A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    if (i->comparison_direction() != D::kGt) return nullptr;
    HloInstruction* lhs = Op(i, 0);
    HloInstruction* rhs = Op(i, 1);
    if (Is(lhs, O::kMaximum)) {
      if (rhs == Op(lhs, 0)) {
        i->ReplaceOperandWith(0, Op(lhs, 1));
        return i;
      }
      if (rhs == Op(lhs, 1)) {
        i->ReplaceOperandWith(0, Op(lhs, 0));
        return i;
      }
      return nullptr;
    }
    if (Is(rhs, O::kMinimum)) {
      if (lhs == Op(rhs, 0)) {
        i->ReplaceOperandWith(1, Op(rhs, 1));
        return i;
      }
      if (lhs == Op(rhs, 1)) {
        i->ReplaceOperandWith(1, Op(rhs, 0));
        return i;
      }
    }
    return nullptr;
  }));
}

// ---------------------------------------------------------------- select
void SelectRules(std::vector<Rule>& rules) {
  // select(P, A, A) => A
  rules.push_back(R(O::kSelect, "select(P,A,A) => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    return Op(i, 1) == Op(i, 2) ? IfCompatible(i, Op(i, 1), ctx) : nullptr;
  }));
  // select(true, A, B) => A; select(false, A, B) => B
  rules.push_back(R(O::kSelect, "select(const,A,B) => A or B", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (IsAll(Op(i, 0), 1)) {
      if (HloInstruction* r = IfCompatible(i, Op(i, 1), ctx)) return r;
    }
    if (IsAll(Op(i, 0), 0)) return IfCompatible(i, Op(i, 2), ctx);
    return nullptr;
  }));
  // select(not(P), A, B) => select(P, B, A)
  rules.push_back(R(O::kSelect, "select(not(P),A,B) => select(P,B,A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kNot)) return nullptr;
    return ctx.Add(HloInstruction::CreateTernary(i->shape(), O::kSelect, Op(Op(i, 0), 0), Op(i, 2), Op(i, 1)));
  }));
  // Predicate selects: select(P, true, false) => P, select(P, false, true) =>
  // not(P), select(A op B, A, B) => A|B, A&B, B or A.
  rules.push_back(R(O::kSelect, "select of predicates => logic", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!IsPred(i)) return nullptr;
    if (IsAll(Op(i, 1), 1) && IsAll(Op(i, 2), 0)) return Op(i, 0);
    if (IsAll(Op(i, 1), 0) && IsAll(Op(i, 2), 1)) {
      return ctx.Add(HloInstruction::CreateUnary(Op(i, 0)->shape(), O::kNot, Op(i, 0)));
    }
    HloInstruction* cmp = Op(i, 0);
    if (!Is(cmp, O::kCompare) || Op(cmp, 0) != Op(i, 1) || Op(cmp, 1) != Op(i, 2)) return nullptr;
    switch (cmp->comparison_direction()) {
      case ComparisonDirection::kGt: case ComparisonDirection::kGe:
        return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kOr, Op(i, 1), Op(i, 2)));
      case ComparisonDirection::kLt: case ComparisonDirection::kLe:
        return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kAnd, Op(i, 1), Op(i, 2)));
      case ComparisonDirection::kEq: return Op(i, 2);
      case ComparisonDirection::kNe: return Op(i, 1);
    }
    return nullptr;
  }));
  // select(P, X, DUS(X, U, I)) => DUS(X, select(DS(P, I), DS(X, I), U), I) (and mirrored)
  rules.push_back(R(O::kSelect, "select(P,X,DUS(X,U,I)) => DUS(X,select(..),I)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    for (int k = 2; k >= 1; --k) {
      HloInstruction* dus = Op(i, k);
      HloInstruction* xs = Op(i, 3 - k);
      if (!Is(dus, O::kDynamicUpdateSlice) || dus->user_count() != 1 || Op(dus, 0) != xs) continue;
      bool left = k == 2;  // select(P, X, DUS)
      HloInstruction* pred = Op(i, 0);
      HloInstruction* x = Op(dus, 1);
      std::vector<HloInstruction*> starts(dus->operands().begin() + 2, dus->operands().end());
      HloInstruction* new_pred = pred;
      if (!pred->shape().IsScalar()) {
        new_pred = ctx.Add(HloInstruction::CreateDynamicSlice(WithType(x->shape(), PrimitiveType::kPred), pred, starts,
                                                              x->shape().dimensions()));
      }
      HloInstruction* new_x = ctx.Add(HloInstruction::CreateDynamicSlice(x->shape(), xs, starts, x->shape().dimensions()));
      HloInstruction* sel = ctx.Add(HloInstruction::CreateTernary(x->shape(), O::kSelect, new_pred, left ? new_x : x,
                                                                  left ? x : new_x));
      return ctx.Add(HloInstruction::CreateDynamicUpdateSlice(i->shape(), xs, sel, starts));
    }
    return nullptr;
  }));
}

// ---------------------------------------------------------------- convert
// Whether every value of `from` is exactly representable in `to`
// (XLA's primitive_util::CastPreservesValues).
bool CastPreservesValues(PrimitiveType from, PrimitiveType to) {
  if (from == to) return true;
  if (from == PrimitiveType::kPred) return true;
  if (to == PrimitiveType::kPred) return false;
  if (IsComplexType(from)) {
    if (!IsComplexType(to)) return false;
    return PrimitiveBitWidth(to) >= PrimitiveBitWidth(from);
  }
  if (IsComplexType(to)) {
    PrimitiveType comp = to == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    return CastPreservesValues(from, comp);
  }
  if (IsFloatingPointType(from)) {
    if (!IsFloatingPointType(to)) return false;
    return ExponentBits(to) >= ExponentBits(from) && MantissaBits(to) >= MantissaBits(from);
  }
  if (IsFloatingPointType(to)) {
    // An integer fits when its magnitude bits fit in the mantissa (plus the
    // implicit bit).
    int value_bits = PrimitiveBitWidth(from) - (IsSignedIntegralType(from) ? 1 : 0);
    return MantissaBits(to) + 1 >= value_bits;
  }
  if (IsUnsignedIntegralType(from)) {
    if (IsUnsignedIntegralType(to)) return PrimitiveBitWidth(to) >= PrimitiveBitWidth(from);
    return PrimitiveBitWidth(to) > PrimitiveBitWidth(from);
  }
  if (IsSignedIntegralType(from)) {
    return IsSignedIntegralType(to) && PrimitiveBitWidth(to) >= PrimitiveBitWidth(from);
  }
  return false;
}

void ConvertRules(std::vector<Rule>& rules) {
  // convert(A) to A's own type => A
  rules.push_back(R(O::kConvert, "convert(A) to its type => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    return Op(i, 0)->shape().element_type() == i->shape().element_type() ? Op(i, 0) : nullptr;
  }));
  // convert(convert(A)) => A when the inner convert keeps every value
  rules.push_back(R(O::kConvert, "convert(convert(A)) => A (exact round trip)", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    HloInstruction* inner = Op(i, 0);
    if (!Is(inner, O::kConvert)) return nullptr;
    PrimitiveType src = inner->operand(0)->shape().element_type();
    if (src != i->shape().element_type() || !CastPreservesValues(src, inner->shape().element_type())) return nullptr;
    return Op(inner, 0);
  }));
  // convert(C) => C' (narrowing, single-use constants, at least 8 bits)
  rules.push_back(R(O::kConvert, "convert(C) => C'", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* c = Op(i, 0);
    PrimitiveType src = c->shape().element_type(), dst = i->shape().element_type();
    if (!ctx.options().use_convert_constant_folding || !IsConstant(c) || c->literal().elided() || c->user_count() != 1 ||
        PrimitiveBitWidth(dst) > PrimitiveBitWidth(src) || PrimitiveBitWidth(dst) < 8) {
      return nullptr;
    }
    absl::StatusOr<Literal> converted = c->literal().Convert(dst);
    if (!converted.ok()) return nullptr;
    return ctx.Add(HloInstruction::CreateConstant(std::move(*converted)));
  }));
}

}  // namespace

std::vector<Rule> ArithmeticRules() {
  std::vector<Rule> rules;
  AddRules(rules);
  SubtractRules(rules);
  MultiplyRules(rules);
  DivideRules(rules);
  RemainderRules(rules);
  UnaryAndLogicRules(rules);
  MinMaxRules(rules);
  CompareRules(rules);
  SelectRules(rules);
  ConvertRules(rules);
  return rules;
}

}  // namespace passlab::algsimp
