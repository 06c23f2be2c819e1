// AlgebraicSimplifier rules over copies, bitcasts, bitcast-converts,
// custom calls and the other ops that only pass data on
// (get-tuple-element, optimization-barrier, reduce-precision), in the order
// XLA's AlgebraicSimplifierVisitor handlers try them
// (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc), and the layout
// predicates the rules share (ReshapeIsBitcast, TransposeIsBitcast).
#include <algorithm>
#include <numeric>

#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

using O = HloOpcode;

// Physical strides (in elements) of an untiled layout.
std::vector<int64_t> PhysicalStrides(const Shape& s) {
  std::vector<int64_t> strides(s.rank(), 0);
  int64_t stride = 1;
  for (int64_t d : s.layout().minor_to_major()) {
    strides[d] = stride;
    stride *= s.dimensions(d);
  }
  return strides;
}

bool PlainLayout(const Shape& s) {
  return s.IsArray() && s.has_layout() && s.layout().tiles().empty() &&
         static_cast<int64_t>(s.layout().minor_to_major().size()) == s.rank();
}

// Whether the unit indices of `a` (one 1, the rest 0) keep their physical
// offsets when mapped through the row-major reshape to `b`.
bool UnitIndicesKeepOffsets(const Shape& a, const Shape& b) {
  std::vector<int64_t> sa = PhysicalStrides(a), sb = PhysicalStrides(b);
  std::vector<int64_t> ra = RowMajorStrides(a.dimensions()), rb = RowMajorStrides(b.dimensions());
  for (int64_t d = 0; d < a.rank(); ++d) {
    if (a.dimensions(d) <= 1) continue;
    int64_t linear = ra[d];
    int64_t offset = 0;
    for (int64_t e = 0; e < b.rank(); ++e) {
      int64_t idx = linear / rb[e];
      linear %= rb[e];
      offset += idx * sb[e];
    }
    if (offset != sa[d]) return false;
  }
  return true;
}

}  // namespace

bool ReshapeIsBitcast(const Shape& from, const Shape& to) {
  if (from.element_type() != to.element_type() || from.element_count() != to.element_count()) return false;
  if (from.element_count() == 0) return true;
  if (!PlainLayout(from) || !PlainLayout(to)) return false;
  return UnitIndicesKeepOffsets(from, to) && UnitIndicesKeepOffsets(to, from);
}

bool TransposeIsBitcast(const Shape& from, const Shape& to, const std::vector<int64_t>& perm) {
  if (from.element_type() != to.element_type() || !from.has_layout() || !to.has_layout()) return false;
  if (from.layout().tiles() != to.layout().tiles()) return false;
  const std::vector<int64_t>& out = to.layout().minor_to_major();
  const std::vector<int64_t>& in = from.layout().minor_to_major();
  if (out.size() != in.size()) return false;
  for (size_t k = 0; k < out.size(); ++k) {
    if (perm[out[k]] != in[k]) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> TransposeDimsOfBitcast(const Shape& from, const Shape& to) {
  if (from.rank() != to.rank() || !from.has_layout() || !to.has_layout()) return std::nullopt;
  // XLA: ComposePermutations(LayoutPerm(from), InversePermutation(LayoutPerm(to)))
  // with LayoutPerm the major-to-minor dim order: output dim to_m2m[k] is
  // input dim from_m2m[k].
  const int64_t rank = from.rank();
  const std::vector<int64_t>& fm = from.layout().minor_to_major();
  const std::vector<int64_t>& tm = to.layout().minor_to_major();
  std::vector<int64_t> perm(rank);
  for (int64_t k = 0; k < rank; ++k) perm[tm[k]] = fm[k];
  for (int64_t d = 0; d < rank; ++d) {
    if (to.dimensions(d) != from.dimensions(perm[d])) return std::nullopt;
  }
  Shape same_type = to;
  same_type.set_element_type(from.element_type());
  if (!TransposeIsBitcast(from, same_type, perm)) return std::nullopt;
  return perm;
}

namespace {

// The shape of copy(A) whose memory matches copy(bitcast(A)) when the bitcast
// moves no element but permutes A's dims (perm[i]: the A dim of bitcast dim
// i): A's dims, laid out in the copy's dim order mapped back through perm.
std::optional<Shape> CopyShapeThroughBitcast(const Shape& a, const Shape& bitcast, const Shape& copy) {
  if (!PlainLayout(a) || !PlainLayout(bitcast) || !PlainLayout(copy) || a.rank() != bitcast.rank()) return std::nullopt;
  const std::vector<int64_t>& in = a.layout().minor_to_major();
  const std::vector<int64_t>& out = bitcast.layout().minor_to_major();
  std::vector<int64_t> perm(a.rank());
  for (size_t k = 0; k < out.size(); ++k) perm[out[k]] = in[k];
  for (int64_t d = 0; d < a.rank(); ++d) {
    if (bitcast.dimensions(d) != a.dimensions(perm[d])) return std::nullopt;
  }
  Shape shape = a;
  Layout layout = copy.layout();
  for (int64_t& d : layout.mutable_minor_to_major()) d = perm[d];
  shape.set_layout(layout);
  return shape;
}

// ---------------------------------------------------------------- copy, bitcast, misc
void CopyBitcastMiscRules(std::vector<Rule>& rules) {
  // copy(copy(A)) => copy(A), or A when the layouts agree
  rules.push_back(R(O::kCopy, "copy(copy(A)) => copy(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kCopy)) return nullptr;
    HloInstruction* a = Op(Op(i, 0), 0);
    if (a->shape() == i->shape()) return a;
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kCopy, a));
  }));
  // copy(A) => A (layouts compared only when layout sensitive; a sharded root copy stays)
  rules.push_back(R(O::kCopy, "copy(A) => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!i->control_predecessors().empty()) return nullptr;
    if (i->has_sharding() && i->parent()->IsEntryComputation() && i->IsRoot()) return nullptr;
    if (i->has_sharding() && Op(i, 0)->has_sharding() && !(i->sharding() == Op(i, 0)->sharding())) return nullptr;
    return ctx.SameShape(i->shape(), Op(i, 0)->shape()) ? Op(i, 0) : nullptr;
  }));
  // (layout sensitive) copy of a chain of copies and reshapes that moves no bytes => bitcast
  rules.push_back(R(O::kCopy, "copy of bitcast-equivalent chain => bitcast", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!ctx.options().is_layout_sensitive) return nullptr;
    const Shape& s = i->shape();
    const Shape& o = Op(i, 0)->shape();
    if (s.has_layout() && o.has_layout() && s.layout().memory_space() != o.layout().memory_space()) return nullptr;
    for (HloInstruction* x = Op(i, 0);; x = Op(x, 0)) {
      if (ReshapeIsBitcast(x->shape(), s)) return ctx.Add(HloInstruction::CreateBitcast(s, x));
      if (!Is(x, O::kReshape) && !Is(x, O::kCopy)) return nullptr;
    }
  }));
  // copy(reshape(A)) where the reshape to the copy's layout is a bitcast => reshape(A)
  rules.push_back(R(O::kCopy, "copy(reshape(A)) => reshape(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* r = Op(i, 0);
    if (!Is(r, O::kReshape) || r->user_count() != 1 || !ReshapeIsBitcast(r->shape(), i->shape())) return nullptr;
    return ctx.Add(r->CloneWithNewOperands(i->shape(), {Op(r, 0)}));
  }));
  // bitcast(unary(bitcast(A))) => bitcast(unary(A)) (same element types, untiled)
  rules.push_back(R(O::kBitcast, "bitcast(unary(bitcast(A))) => bitcast(unary(A))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!i->control_predecessors().empty()) return nullptr;
    HloInstruction* u = Op(i, 0);
    if (!u->IsElementwise() || u->operand_count() != 1 || u->user_count() != 1 || !Is(Op(u, 0), O::kBitcast)) {
      return nullptr;
    }
    HloInstruction* inner = Op(u, 0);
    HloInstruction* a = Op(inner, 0);
    PrimitiveType t = i->shape().element_type();
    if (u->shape().element_type() != t || inner->shape().element_type() != t || a->shape().element_type() != t) return nullptr;
    auto untiled = [](const HloInstruction* x) { return !x->shape().has_layout() || x->shape().layout().tiles().empty(); };
    if (!untiled(inner) || !untiled(a)) return nullptr;
    Shape shape = a->shape();
    // XLA clones a copy with A's layout too, which drops the copy's layout
    // change; passlab gives the new copy the layout that lays A's elements
    // out in the old copy's order, and skips copies it cannot.
    if (Is(u, O::kCopy)) {
      std::optional<Shape> s = CopyShapeThroughBitcast(a->shape(), inner->shape(), u->shape());
      if (!s.has_value()) return nullptr;
      shape = *s;
    }
    HloInstruction* nu = ctx.Add(u->CloneWithNewOperands(shape, {a}));
    return ctx.Add(HloInstruction::CreateBitcast(i->shape(), nu));
  }));
  // bitcast(bitcast(A)) => bitcast(A), or A when the shapes agree
  rules.push_back(R(O::kBitcast, "bitcast(bitcast(A)) => bitcast(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!i->control_predecessors().empty() || !Is(Op(i, 0), O::kBitcast)) return nullptr;
    HloInstruction* a = Op(Op(i, 0), 0);
    if (a->shape().element_type() == i->shape().element_type() && ctx.SameShape(a->shape(), i->shape())) return a;
    return ctx.Add(HloInstruction::CreateBitcast(i->shape(), a));
  }));
  // bitcast(A) to A's shape => A
  rules.push_back(R(O::kBitcast, "bitcast(A) to its shape => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!i->control_predecessors().empty()) return nullptr;
    return ctx.SameShape(Op(i, 0)->shape(), i->shape()) ? Op(i, 0) : nullptr;
  }));
  rules.push_back(ChainRule(O::kBitcast, "bitcast/transpose chain that undoes itself => source"));
  // XLA's HandleBitcast: a bitcast of a broadcast that is a transpose
  // (DeduceTransposeDimensionsForBitcast), same tiling and element type =>
  // SimplifyTransposeOfBroadcast, a new broadcast of A.
  rules.push_back(R(O::kBitcast, "bitcast(broadcast(A)) that transposes => broadcast(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* b = Op(i, 0);
    if (!i->control_predecessors().empty() || !Is(b, O::kBroadcast)) return nullptr;
    if (b->shape().element_type() != i->shape().element_type()) return nullptr;
    if (!b->shape().has_layout() || !i->shape().has_layout() ||
        b->shape().layout().tiles() != i->shape().layout().tiles()) {
      return nullptr;
    }
    std::optional<std::vector<int64_t>> perm = TransposeDimsOfBitcast(b->shape(), i->shape());
    if (!perm.has_value()) return nullptr;
    return TransposeOfBroadcast(i, *perm, ctx);
  }));
  // bitcast-convert(bitcast-convert(A)) => bitcast-convert(A)
  rules.push_back(R(O::kBitcastConvert, "bitcast-convert chain => one bitcast-convert", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* inner = Op(i, 0);
    if (!Is(inner, O::kBitcastConvert)) return nullptr;
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kBitcastConvert, Op(inner, 0)));
  }));
  // bitcast-convert(concatenate(bitcast-convert(A_i) ...)) back to A's type => concatenate(A_i ...)
  rules.push_back(R(O::kBitcastConvert, "bitcast-convert of concat of bitcast-converts => concat", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* concat = Op(i, 0);
    if (!Is(concat, O::kConcatenate)) return nullptr;
    std::vector<HloInstruction*> inputs;
    for (HloInstruction* in : concat->operands()) {
      if (!Is(in, O::kBitcastConvert) || in->operand(0)->shape().element_type() != i->shape().element_type()) return nullptr;
      inputs.push_back(Op(in, 0));
    }
    int64_t cd = concat->concatenate_dimension();
    Shape shape = inputs[0]->shape();
    int64_t size = 0;
    for (HloInstruction* in : inputs) size += in->shape().dimensions(cd);
    shape.set_dimensions(cd, size);
    return ctx.Add(HloInstruction::CreateConcatenate(Shape(shape.element_type(), shape.dimensions()), inputs, cd));
  }));
  // (layout sensitive) bitcast-convert that keeps the bytes in place => bitcast
  rules.push_back(R(O::kBitcastConvert, "no-op bitcast-convert => bitcast", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!ctx.options().is_layout_sensitive || !ctx.options().rewrite_no_op_bitcast_convert_to_bitcast) return nullptr;
    const Shape& in = Op(i, 0)->shape();
    const Shape& out = i->shape();
    auto bitcast = [&] { return ctx.Add(HloInstruction::CreateBitcast(out, Op(i, 0))); };
    if (in.SameDimensions(out) && in.has_layout() == out.has_layout() &&
        (!in.has_layout() || in.layout() == out.layout())) {
      return bitcast();
    }
    const Shape& wide = in.rank() > out.rank() ? in : out;
    if (wide.rank() == 0 || !wide.has_layout() || wide.layout().minor_to_major().empty() ||
        wide.layout().minor_to_major(0) != wide.rank() - 1) {
      return nullptr;
    }
    int bits = wide.element_type() == PrimitiveType::kPred ? 8 : PrimitiveBitWidth(wide.element_type());
    bool contiguous = wide.layout().element_size_in_bits() == 0 ? bits % 8 == 0 : wide.layout().element_size_in_bits() == bits;
    return contiguous ? bitcast() : nullptr;
  }));
  // bitcast-convert(A) to A's own shape => A
  rules.push_back(R(O::kBitcastConvert, "bitcast-convert(A) to its type => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!i->control_predecessors().empty()) return nullptr;
    return ctx.SameShape(Op(i, 0)->shape(), i->shape()) ? Op(i, 0) : nullptr;
  }));
  // reduce-precision to the operand type's own precision => A (option)
  rules.push_back(R(O::kReducePrecision, "reduce-precision to own precision => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    PrimitiveType t = i->shape().element_type();
    if (!ctx.options().enable_remove_no_op_reduce_precision || !IsFloatingPointType(t)) return nullptr;
    if (i->attrs().exponent_bits != ExponentBits(t) || i->attrs().mantissa_bits != MantissaBits(t)) return nullptr;
    return Op(i, 0);
  }));
  // get-tuple-element(tuple(..., A_i, ...), i) => A_i
  rules.push_back(R(O::kGetTupleElement, "gte(tuple) => element", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* t = Op(i, 0);
    if (!Is(t, O::kTuple) || !i->control_predecessors().empty()) return nullptr;
    HloInstruction* e = Op(t, i->tuple_index());
    if (i->has_sharding() && e->has_sharding() && !(i->sharding() == e->sharding())) return nullptr;
    return ctx.SameShape(e->shape(), i->shape()) ? e : nullptr;
  }));
  // opt-barrier(tuple(..., X, ...)) whose X output nobody reads => the
  // barrier of a tuple without X (so that X can die)
  rules.push_back(R(O::kOptimizationBarrier, "opt-barrier drops unread elements", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!i->shape().IsTuple() || i->IsRoot()) return nullptr;
    std::vector<bool> used(i->shape().tuple_shapes_size(), false);
    for (const HloInstruction* u : i->users()) {
      if (!Is(u, O::kGetTupleElement)) return nullptr;
      used[u->tuple_index()] = true;
    }
    HloInstruction* operand = Op(i, 0);
    bool is_tuple = Is(operand, O::kTuple);
    if (is_tuple) {
      for (int64_t k = 0; k < operand->operand_count(); ++k) {
        const HloInstruction* e = operand->operand(k);
        if (!used[k] && (e->user_count() > 1 || e->IsRoot() || e->HasSideEffect())) used[k] = true;
      }
    }
    if (std::all_of(used.begin(), used.end(), [](bool b) { return b; })) return nullptr;
    std::vector<int64_t> index_map(used.size(), -1);
    std::vector<HloInstruction*> elems;
    for (size_t k = 0; k < used.size(); ++k) {
      if (!used[k]) continue;
      index_map[k] = static_cast<int64_t>(elems.size());
      elems.push_back(is_tuple ? Op(operand, k) : ctx.Add(HloInstruction::CreateGetTupleElement(operand, k)));
    }
    HloInstruction* t = ctx.Add(HloInstruction::CreateTuple(elems));
    i->ReplaceOperandWith(0, t);
    *i->mutable_shape() = t->shape();
    for (HloInstruction* u : i->users()) u->set_index(index_map[u->tuple_index()]);
    if (operand->user_count() == 0 && !operand->IsRoot()) {
      absl::Status st = i->parent()->RemoveInstructionAndUnusedOperands(operand);
      (void)st;
    }
    return i;
  }));
  // SliceToDynamic(PadToStatic(A)) => A
  rules.push_back(R(O::kCustomCall, "SliceToDynamic(PadToStatic(A)) => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->custom_call_target() != "SliceToDynamic" || i->operand_count() != 2) return nullptr;
    const HloInstruction* g0 = i->operand(0);
    const HloInstruction* g1 = i->operand(1);
    if (!Is(g0, O::kGetTupleElement) || g0->tuple_index() != 0 || !Is(g1, O::kGetTupleElement) || g1->tuple_index() != 1) {
      return nullptr;
    }
    HloInstruction* pad = Op(Op(i, 0), 0);
    if (pad != g1->operand(0) || !Is(pad, O::kCustomCall) || pad->custom_call_target() != "PadToStatic" ||
        pad->operand_count() != 1) {
      return nullptr;
    }
    return ctx.SameShape(i->shape(), pad->operand(0)->shape()) ? Op(pad, 0) : nullptr;
  }));
  // LayoutConstraint custom call (layout-sensitive) => its operand or a copy
  rules.push_back(R(O::kCustomCall, "LayoutConstraint => copy or operand", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!ctx.options().is_layout_sensitive || i->custom_call_target() != "LayoutConstraint" || i->operand_count() != 1) {
      return nullptr;
    }
    if (ctx.SameShape(i->shape(), Op(i, 0)->shape())) return Op(i, 0);
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kCopy, Op(i, 0)));
  }));
}

}  // namespace

void AddCopyBitcastRules(std::vector<Rule>& rules) { CopyBitcastMiscRules(rules); }

}  // namespace passlab::algsimp
