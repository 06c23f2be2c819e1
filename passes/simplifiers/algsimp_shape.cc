// AlgebraicSimplifier rules over data movement: reshapes, transposes,
// broadcasts, slices, concatenates, pads, reverses, reduces and dots.
#include <numeric>

#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

HloInstruction* Op(HloInstruction* i, int k) { return i->mutable_operand(k); }

bool IsIdentityPermutation(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The reducer computes a + b (or a*b, max, min, and, or) of its parameters;
// returns its identity element when recognised.
std::optional<double> ReducerIdentity(const HloComputation* c, PrimitiveType type) {
  if (c == nullptr || c->num_parameters() != 2) return std::nullopt;
  const HloInstruction* r = c->root_instruction();
  if (r->operand_count() != 2 ||
      !((r->operand(0) == c->parameter_instruction(0) && r->operand(1) == c->parameter_instruction(1)) ||
        (r->operand(0) == c->parameter_instruction(1) && r->operand(1) == c->parameter_instruction(0)))) {
    return std::nullopt;
  }
  double inf = std::numeric_limits<double>::infinity();
  switch (r->opcode()) {
    case HloOpcode::kAdd: case HloOpcode::kOr: case HloOpcode::kXor: return 0.0;
    case HloOpcode::kMultiply: return 1.0;
    case HloOpcode::kAnd: return type == PrimitiveType::kPred ? std::optional<double>(1.0) : std::nullopt;
    case HloOpcode::kMaximum: return IsFloatingPointType(type) ? std::optional<double>(-inf) : std::nullopt;
    case HloOpcode::kMinimum: return IsFloatingPointType(type) ? std::optional<double>(inf) : std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace

std::vector<Rule> ShapeRules() {
  std::vector<Rule> rules;
  // reshape(A) to A's shape => A
  rules.push_back({HloOpcode::kReshape, "reshape(A) to its shape => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return Op(i, 0)->shape().Compatible(i->shape()) ? Op(i, 0) : nullptr;
                   }});
  // reshape(reshape(A)) => reshape(A)
  rules.push_back({HloOpcode::kReshape, "reshape(reshape(A)) => reshape(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (Op(i, 0)->opcode() != HloOpcode::kReshape) return nullptr;
                     return ctx.Add(HloInstruction::CreateReshape(i->shape(), Op(Op(i, 0), 0)));
                   }});
  // transpose(A) with the identity permutation => A
  rules.push_back({HloOpcode::kTranspose, "transpose(A, identity) => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return IsIdentityPermutation(i->dimensions()) ? Op(i, 0) : nullptr;
                   }});
  // transpose(transpose(A, p1), p2) => transpose(A, p1 o p2)
  rules.push_back({HloOpcode::kTranspose, "transpose(transpose(A)) => transpose(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     HloInstruction* inner = Op(i, 0);
                     if (inner->opcode() != HloOpcode::kTranspose) return nullptr;
                     std::vector<int64_t> perm;
                     for (int64_t d : i->dimensions()) perm.push_back(inner->dimensions(d));
                     return ctx.Add(HloInstruction::CreateTranspose(i->shape(), Op(inner, 0), perm));
                   }});
  // broadcast(A) to A's own shape with identity dims => A
  rules.push_back({HloOpcode::kBroadcast, "broadcast(A) to its shape => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     if (!Op(i, 0)->shape().Compatible(i->shape()) || !IsIdentityPermutation(i->dimensions())) return nullptr;
                     return Op(i, 0);
                   }});
  // broadcast(broadcast(A)) => broadcast(A)
  rules.push_back({HloOpcode::kBroadcast, "broadcast(broadcast(A)) => broadcast(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     HloInstruction* inner = Op(i, 0);
                     if (inner->opcode() != HloOpcode::kBroadcast) return nullptr;
                     std::vector<int64_t> dims;
                     for (int64_t d : inner->dimensions()) dims.push_back(i->dimensions(d));
                     return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(inner, 0), dims));
                   }});
  // slice(A) covering all of A => A
  rules.push_back({HloOpcode::kSlice, "slice(A) of all of A => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     const Shape& s = Op(i, 0)->shape();
                     for (int64_t d = 0; d < s.rank(); ++d) {
                       const SliceDimension& sd = i->attrs().slice[d];
                       if (sd.start != 0 || sd.limit != s.dimensions(d) || sd.stride != 1) return nullptr;
                     }
                     return Op(i, 0);
                   }});
  // slice(slice(A)) => slice(A)
  rules.push_back({HloOpcode::kSlice, "slice(slice(A)) => slice(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     HloInstruction* inner = Op(i, 0);
                     if (inner->opcode() != HloOpcode::kSlice) return nullptr;
                     std::vector<SliceDimension> combined;
                     for (size_t d = 0; d < i->attrs().slice.size(); ++d) {
                       const SliceDimension& o = i->attrs().slice[d];
                       const SliceDimension& n = inner->attrs().slice[d];
                       SliceDimension c;
                       c.start = n.start + o.start * n.stride;
                       c.stride = n.stride * o.stride;
                       int64_t count = i->shape().dimensions(d);
                       c.limit = count == 0 ? c.start : c.start + (count - 1) * c.stride + 1;
                       combined.push_back(c);
                     }
                     return ctx.Add(HloInstruction::CreateSlice(i->shape(), Op(inner, 0), combined));
                   }});
  // concatenate(A) => A
  rules.push_back({HloOpcode::kConcatenate, "concatenate(A) => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return i->operand_count() == 1 ? Op(i, 0) : nullptr;
                   }});
  // concatenate drops empty operands
  rules.push_back({HloOpcode::kConcatenate, "concatenate drops empty operands", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     std::vector<HloInstruction*> kept;
                     for (HloInstruction* op : i->operands()) {
                       if (op->shape().dimensions(i->concatenate_dimension()) != 0) kept.push_back(op);
                     }
                     if (kept.size() == static_cast<size_t>(i->operand_count()) || kept.empty()) return nullptr;
                     if (kept.size() == 1) return kept[0];
                     return ctx.Add(HloInstruction::CreateConcatenate(i->shape(), kept, i->concatenate_dimension()));
                   }});
  // pad(A, v) with no padding => A
  rules.push_back({HloOpcode::kPad, "pad(A) with zero padding => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     for (const PaddingDimension& p : i->attrs().padding_config.dimensions) {
                       if (p.edge_padding_low != 0 || p.edge_padding_high != 0 || p.interior_padding != 0) return nullptr;
                     }
                     return Op(i, 0);
                   }});
  // reverse(reverse(A)) => A
  rules.push_back({HloOpcode::kReverse, "reverse(reverse(A)) => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     HloInstruction* inner = Op(i, 0);
                     if (inner->opcode() != HloOpcode::kReverse) return nullptr;
                     std::vector<int64_t> a = i->dimensions(), b = inner->dimensions();
                     std::sort(a.begin(), a.end());
                     std::sort(b.begin(), b.end());
                     return a == b ? Op(inner, 0) : nullptr;
                   }});
  // reverse(A) over dimensions of size <= 1 => A
  rules.push_back({HloOpcode::kReverse, "reverse over size-1 dims => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     for (int64_t d : i->dimensions()) {
                       if (Op(i, 0)->shape().dimensions(d) > 1) return nullptr;
                     }
                     return Op(i, 0);
                   }});
  // reduce(A, identity) over no dimensions => A
  rules.push_back({HloOpcode::kReduce, "reduce over no dims => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     if (!i->dimensions().empty() || i->operand_count() != 2) return nullptr;
                     std::optional<double> id = ReducerIdentity(i->to_apply(), i->shape().element_type());
                     if (!id || !IsConstantScalarValue(Op(i, 1), *id)) return nullptr;
                     return Op(i, 0)->shape().Compatible(i->shape()) ? Op(i, 0) : nullptr;
                   }});
  // copy(A) with A's layout => A
  rules.push_back({HloOpcode::kCopy, "copy(A) with the same layout => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return Op(i, 0)->shape() == i->shape() ? Op(i, 0) : nullptr;
                   }});
  // bitcast(bitcast(A)) => bitcast(A)
  rules.push_back({HloOpcode::kBitcast, "bitcast(bitcast(A)) => bitcast(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     if (Op(i, 0)->opcode() != HloOpcode::kBitcast) return nullptr;
                     if (Op(Op(i, 0), 0)->shape() == i->shape()) return Op(Op(i, 0), 0);
                     return ctx.Add(HloInstruction::CreateBitcast(i->shape(), Op(Op(i, 0), 0)));
                   }});
  // dynamic-slice(A, constants) => slice(A) (indices clamped as XLA does)
  rules.push_back({HloOpcode::kDynamicSlice, "dynamic-slice with constant starts => slice", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     const Shape& s = Op(i, 0)->shape();
                     std::vector<SliceDimension> slice;
                     for (int64_t d = 0; d < s.rank(); ++d) {
                       std::optional<double> start = ScalarConstantValue(Op(i, d + 1));
                       if (!start) return nullptr;
                       int64_t size = i->attrs().slice_sizes[d];
                       int64_t st = std::clamp<int64_t>(static_cast<int64_t>(*start), 0, s.dimensions(d) - size);
                       slice.push_back({st, st + size, 1});
                     }
                     return ctx.Add(HloInstruction::CreateSlice(i->shape(), Op(i, 0), slice));
                   }});
  // dynamic-update-slice(A, U, ...) where U covers all of A => U
  rules.push_back({HloOpcode::kDynamicUpdateSlice, "dynamic-update-slice of everything => update", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
                     return Op(i, 1)->shape().Compatible(i->shape()) ? Op(i, 1) : nullptr;
                   }});
  // dot with a single contracting dimension of size 1 and no batch dims:
  // an outer product => multiply(broadcast(lhs), broadcast(rhs)).
  rules.push_back({HloOpcode::kDot, "dot over a size-1 contraction => multiply", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                     const DotDimensionNumbers& d = i->attrs().dot_dnums;
                     const Shape& l = Op(i, 0)->shape();
                     const Shape& r = Op(i, 1)->shape();
                     if (!d.lhs_batch_dimensions.empty() || d.lhs_contracting_dimensions.size() != 1 ||
                         l.rank() != 2 || r.rank() != 2 || l.element_type() != i->shape().element_type() ||
                         r.element_type() != i->shape().element_type() ||
                         l.dimensions(d.lhs_contracting_dimensions[0]) != 1 || !i->attrs().sparsity.empty()) {
                       return nullptr;
                     }
                     int64_t lc = d.lhs_contracting_dimensions[0], rc = d.rhs_contracting_dimensions[0];
                     int64_t m = l.dimensions(1 - lc), n = r.dimensions(1 - rc);
                     Shape lv(l.element_type(), {m}), rv(r.element_type(), {n});
                     HloInstruction* lr = ctx.Add(HloInstruction::CreateReshape(lv, Op(i, 0)));
                     HloInstruction* rr = ctx.Add(HloInstruction::CreateReshape(rv, Op(i, 1)));
                     Shape out(i->shape().element_type(), {m, n});
                     HloInstruction* lb = ctx.Add(HloInstruction::CreateBroadcast(out, lr, {0}));
                     HloInstruction* rb = ctx.Add(HloInstruction::CreateBroadcast(out, rr, {1}));
                     return ctx.Add(HloInstruction::CreateBinary(out, HloOpcode::kMultiply, lb, rb));
                   }});
  return rules;
}

}  // namespace passlab::algsimp
