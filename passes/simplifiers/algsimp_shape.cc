// AlgebraicSimplifier rules over data movement: constants, broadcasts,
// reshapes and transposes here, in the order XLA's
// AlgebraicSimplifierVisitor handlers try them
// (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc); ShapeRules()
// adds the other data-movement families after them: slices
// (algsimp_slice.cc), reverse/concatenate/pad (algsimp_concat_pad.cc) and
// copies, bitcasts and custom calls (algsimp_copy.cc).
#include <algorithm>
#include <numeric>

#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

using O = HloOpcode;

// XLA's CommonFactors (xla/util.cc): the (i, j) bounds where the products of
// a[0:i] and b[0:j] agree, from (0, 0) to (|a|, |b|).
std::vector<std::pair<int64_t, int64_t>> CommonFactors(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  auto product = [](const std::vector<int64_t>& v, size_t from) {
    int64_t p = 1;
    for (size_t k = from; k < v.size(); ++k) p *= v[k];
    return p;
  };
  std::vector<std::pair<int64_t, int64_t>> bounds;
  int64_t na = static_cast<int64_t>(a.size()), nb = static_cast<int64_t>(b.size());
  if (a == b) {
    for (int64_t k = 0; k <= na; ++k) bounds.emplace_back(k, k);
    return bounds;
  }
  int64_t i = 0, j = 0, prior_i = -1, prior_j = -1;
  while (i < na && j < nb && a[i] == b[j]) {
    prior_i = i;
    prior_j = j;
    bounds.emplace_back(i, j);
    ++i;
    ++j;
  }
  if (product(a, i) != product(b, j)) return {{0, 0}, {na, nb}};
  if (product(a, i) == 0) {
    bounds.emplace_back(i, j);
    bounds.emplace_back(na, nb);
    return bounds;
  }
  for (int64_t pa = 1, pb = 1;;) {
    if (pa == pb && (i > prior_i || j > prior_j)) {
      prior_i = i;
      prior_j = j;
      bounds.emplace_back(i, j);
      continue;
    }
    bool in_i = i < na, in_j = j < nb;
    if (!in_i && !in_j) break;
    bool next_a = pa < pb || (in_i && (!in_j || (pa == pb && a[i] <= b[j])));
    bool next_b = pb < pa || (in_j && (!in_i || (pb == pa && b[j] <= a[i])));
    if (next_a) pa *= a[i++];
    if (next_b) pb *= b[j++];
  }
  return bounds;
}

// XLA's ShapeUtil::ReshapeLeavesDimensionsUnmodified.
std::optional<std::vector<int64_t>> ReshapeLeavesDimensionsUnmodified(const Shape& from, const Shape& to,
                                                                      const std::vector<int64_t>& dims) {
  if (!std::is_sorted(dims.begin(), dims.end())) return std::nullopt;
  auto unmodified = DimensionsUnmodifiedByReshape(from, to);
  std::vector<int64_t> out;
  size_t k = 0;
  for (int64_t d : dims) {
    while (k < unmodified.size() && unmodified[k].first < d) ++k;
    if (k >= unmodified.size() || unmodified[k].first != d) return std::nullopt;
    out.push_back(unmodified[k].second);
  }
  return out;
}

// XLA's TryRemovingBitcastOrReshapeTransposeChain: a chain of transposes
// and reshapes (or, layout sensitive, bitcasts) that only add or drop one
// 1-sized dim and whose transposes compose to the identity => its source.
HloInstruction* RemoveReshapeTransposeChain(HloInstruction* inst, RuleContext& ctx) {
  auto degenerate_count = [](const Shape& s) {
    int64_t n = 0;
    for (int64_t d : s.dimensions()) n += d == 1 ? 1 : 0;
    return n;
  };
  auto valid_reshape = [&](const HloInstruction* x) {
    if (!Is(x, O::kReshape) && !Is(x, O::kBitcast)) return false;
    if (Is(x, O::kBitcast) && !(ctx.options().is_layout_sensitive && ReshapeIsBitcast(x->operand(0)->shape(), x->shape()))) {
      return false;
    }
    return degenerate_count(x->shape()) <= 1 && degenerate_count(x->operand(0)->shape()) <= 1 &&
           InsertedOrDeleted1SizedDimensions(x->operand(0)->shape(), x->shape()).has_value();
  };
  auto effective_perm = [&](const std::vector<int64_t>& perm, const Shape& from) {
    if (degenerate_count(from) != 1) return perm;
    int64_t deg = 0;
    while (from.dimensions(deg) != 1) ++deg;
    std::vector<int64_t> out;
    for (int64_t p : perm) {
      if (p == deg) continue;
      out.push_back(p > deg ? p - 1 : p);
    }
    return out;
  };
  bool valid_start = Is(inst, O::kTranspose) ? !IsIdentityPermutation(inst->dimensions()) : valid_reshape(inst);
  if (!valid_start) return nullptr;
  int64_t true_rank = inst->shape().rank() - degenerate_count(inst->shape());
  std::vector<int64_t> perm(true_rank);
  std::iota(perm.begin(), perm.end(), 0);
  if (Is(inst, O::kTranspose)) perm = effective_perm(inst->dimensions(), Op(inst, 0)->shape());
  HloInstruction* start = nullptr;
  HloInstruction* cur = Op(inst, 0);
  while (Is(cur, O::kReshape) || Is(cur, O::kTranspose) || Is(cur, O::kBitcast)) {
    if (!Is(cur, O::kTranspose) && !valid_reshape(cur)) return nullptr;
    if (Is(cur, O::kTranspose)) {
      if (IsIdentityPermutation(cur->dimensions())) return nullptr;
      std::vector<int64_t> p1 = effective_perm(cur->dimensions(), Op(cur, 0)->shape());
      if (p1.size() != perm.size()) return nullptr;
      std::vector<int64_t> composed;
      for (int64_t k : perm) composed.push_back(p1[k]);
      perm = composed;
    }
    start = cur;
    cur = Op(cur, 0);
  }
  if (start == nullptr || !IsIdentityPermutation(perm)) return nullptr;
  HloInstruction* src = Op(start, 0);
  if (ctx.options().is_layout_sensitive) {
    if (src->shape() == inst->shape()) return src;
    if (ReshapeIsBitcast(src->shape(), inst->shape())) return ctx.Add(HloInstruction::CreateBitcast(inst->shape(), src));
    return nullptr;
  }
  return src->shape().Compatible(inst->shape()) ? src : nullptr;
}

// ---------------------------------------------------------------- constant
void ConstantRules(std::vector<Rule>& rules) {
  // constant {c, c, ..., c} => broadcast(c)
  rules.push_back(R(O::kConstant, "constant of one value => broadcast", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!i->shape().IsArray() || i->shape().element_count() <= 1 || i->literal().elided()) return nullptr;
    const Literal& l = i->literal();
    uint64_t first = l.GetBits(0);
    for (int64_t k = 1; k < l.element_count(); ++k) {
      if (IsComplexType(i->shape().element_type())) {
        if (l.GetComplex(k) != l.GetComplex(0)) return nullptr;
      } else if (l.GetBits(k) != first) {
        return nullptr;
      }
    }
    Literal scalar(Shape::Scalar(i->shape().element_type()));
    if (IsComplexType(i->shape().element_type())) {
      scalar.SetComplex(0, l.GetComplex(0));
    } else {
      scalar.SetBits(0, first);
    }
    HloInstruction* c = ctx.Add(HloInstruction::CreateConstant(std::move(scalar)));
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), c, {}));
  }));
  // constant {0, 1, 2, ...} => iota; {0, s, 2s, ...} => iota * s
  rules.push_back(R(O::kConstant, "constant iota => iota", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!i->shape().IsArray() || i->shape().rank() != 1 || i->shape().element_count() <= 1 || i->literal().elided()) {
      return nullptr;
    }
    PrimitiveType t = i->shape().element_type();
    const Literal& l = i->literal();
    int64_t n = l.element_count();
    bool is_iota = t != PrimitiveType::kPred;
    for (int64_t k = 0; k < n && is_iota; ++k) {
      if (IsIntegralType(t)) {
        is_iota = l.GetInt(k) == k;
      } else if (IsComplexType(t)) {
        is_iota = l.GetComplex(k) == std::complex<double>(static_cast<double>(k), 0);
      } else {
        Literal probe(Shape::Scalar(t));
        probe.SetDouble(0, static_cast<double>(k));
        is_iota = l.GetDouble(k) == probe.GetDouble(0);
      }
    }
    if (is_iota) return ctx.Add(HloInstruction::CreateIota(i->shape(), 0));
    if (!IsIntegralType(t)) return nullptr;
    int64_t stride = l.GetInt(1);
    if (stride == 0) return nullptr;
    for (int64_t k = 0; k < n; ++k) {
      if (l.GetInt(k) != k * stride) return nullptr;
    }
    HloInstruction* iota = ctx.Add(HloInstruction::CreateIota(i->shape(), 0));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, iota, ctx.ScalarLike(i, static_cast<double>(stride))));
  }));
}

// ---------------------------------------------------------------- broadcast
void BroadcastRules(std::vector<Rule>& rules) {
  // broadcast that keeps the element count and dimension order => reshape
  rules.push_back(R(O::kBroadcast, "broadcast adding only 1-sized dims => reshape", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    const std::vector<int64_t>& dims = i->dimensions();
    if (!std::is_sorted(dims.begin(), dims.end()) || i->shape().element_count() != Op(i, 0)->shape().element_count()) {
      return nullptr;
    }
    return ctx.Add(HloInstruction::CreateReshape(i->shape(), Op(i, 0)));
  }));
  // broadcast of the same rank and size => transpose
  rules.push_back(R(O::kBroadcast, "broadcast permuting dims => transpose", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->shape().rank() != Op(i, 0)->shape().rank() || i->shape().element_count() != Op(i, 0)->shape().element_count()) {
      return nullptr;
    }
    return ctx.Add(HloInstruction::CreateTranspose(i->shape(), Op(i, 0), InversePermutation(i->dimensions())));
  }));
  // broadcast(reshape(A)) where the reshape only inserts 1-sized dims => broadcast(A)
  rules.push_back(R(O::kBroadcast, "broadcast(reshape adding 1s) => broadcast", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* r = Op(i, 0);
    if (!Is(r, O::kReshape)) return nullptr;
    auto d = InsertedOrDeleted1SizedDimensions(r->operand(0)->shape(), r->shape());
    if (!d || !d->deleted.empty()) return nullptr;
    std::vector<int64_t> dims = i->dimensions();
    for (auto it = d->inserted.rbegin(); it != d->inserted.rend(); ++it) dims.erase(dims.begin() + *it);
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(r, 0), dims));
  }));
  // op(broadcast(A), broadcast(B), broadcast(s)) elementwise, with equal
  // broadcasts or scalar ones => broadcast(op(A, B, s))
  rules.push_back(R(O::kBroadcast, "elementwise of broadcasts => broadcast of elementwise", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!ctx.options().enable_sink_broadcast || i->shape().IsScalar()) return nullptr;
    HloInstruction* a = Op(i, 0);
    auto scalar_bcast = [](const HloInstruction* x) { return Is(x, O::kBroadcast) && x->operand(0)->shape().IsScalar(); };
    auto equal_bcast = [&](const HloInstruction* x) {
      return Is(x, O::kBroadcast) && x->operand(0)->shape() == a->shape() && x->dimensions() == i->dimensions();
    };
    bool changed = false;
    std::vector<HloInstruction*> users = i->users();
    for (HloInstruction* user : users) {
      if (user->user_count() == 0 && !user->IsRoot()) continue;
      if (Is(user, O::kCopy) || !user->IsElementwise()) continue;
      bool all = true;
      for (const HloInstruction* op : user->operands()) all &= scalar_bcast(op) || equal_bcast(op);
      if (!all) continue;
      std::vector<HloInstruction*> ops;
      for (HloInstruction* op : user->operands()) {
        if (scalar_bcast(op)) {
          Shape s = a->shape();
          s.set_element_type(op->shape().element_type());
          ops.push_back(ctx.Add(HloInstruction::CreateBroadcast(s, Op(op, 0), {})));
        } else {
          ops.push_back(Op(op, 0));
        }
      }
      Shape s = a->shape();
      s.set_element_type(user->shape().element_type());
      HloInstruction* nu = ctx.Add(user->CloneWithNewOperands(s, ops));
      HloInstruction* nb = ctx.Add(HloInstruction::CreateBroadcast(user->shape(), nu, i->dimensions()));
      if (!user->ReplaceAllUsesWith(nb).ok()) continue;
      changed = true;
    }
    if (!changed) return nullptr;
    for (HloInstruction* user : users) {
      if (user->parent() != nullptr && user->user_count() == 0 && !user->IsRoot() && !user->HasSideEffect()) {
        absl::Status st = user->parent()->RemoveInstructionAndUnusedOperands(user);
        (void)st;
      }
    }
    return i;
  }));
  // A scalar broadcast feeding a reshape, transpose, reverse, (single-result)
  // sort, slice or dynamic-slice: the user becomes a broadcast.
  rules.push_back(R(O::kBroadcast, "user of scalar broadcast => broadcast", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Op(i, 0)->shape().IsScalar()) return nullptr;
    for (HloInstruction* user : i->users()) {
      if (user->user_count() == 0 && !user->IsRoot()) continue;
      bool permutes = Is(user, O::kReshape) || Is(user, O::kReverse) || Is(user, O::kTranspose) ||
                      (Is(user, O::kSort) && !user->shape().IsTuple());
      bool subset = (Is(user, O::kSlice) || Is(user, O::kDynamicSlice)) && user->operand(0) == i;
      if (Is(user, O::kSlice) || Is(user, O::kDynamicSlice)) {
        int uses = 0;
        for (const HloInstruction* op : user->operands()) uses += op == i;
        subset = subset && uses == 1;
      }
      if (!permutes && !subset) continue;
      Shape shape = user->shape();
      for (int64_t d = 0; d < shape.rank(); ++d) shape.set_dynamic_dimension(d, false);
      HloInstruction* b = ctx.Add(HloInstruction::CreateBroadcast(shape, Op(i, 0), {}));
      absl::Status s = user->ReplaceAllUsesWith(b);
      if (!s.ok()) return nullptr;
      if (user->user_count() == 0 && !user->IsRoot()) {
        s = user->parent()->RemoveInstructionAndUnusedOperands(user);
        (void)s;
      }
      return i;
    }
    return nullptr;
  }));
  // broadcast(iota) => iota
  rules.push_back(R(O::kBroadcast, "broadcast(iota) => iota", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* iota = Op(i, 0);
    if (iota->shape().IsScalar() || !Is(iota, O::kIota)) return nullptr;
    return ctx.Add(HloInstruction::CreateIota(i->shape(), i->dimensions(iota->iota_dimension())));
  }));
  // broadcast(broadcast(A)) => broadcast(A)
  rules.push_back(R(O::kBroadcast, "broadcast(broadcast(A)) => broadcast(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* inner = Op(i, 0);
    if (inner->shape().IsScalar() || !Is(inner, O::kBroadcast)) return nullptr;
    std::vector<int64_t> dims;
    for (int64_t d : inner->dimensions()) dims.push_back(i->dimensions(d));
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(inner, 0), dims));
  }));
  // broadcast(A) with 1-sized dims in A => broadcast(reshape(A) without them)
  rules.push_back(R(O::kBroadcast, "broadcast drops degenerate operand dims", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* a = Op(i, 0);
    if (a->shape().IsScalar() || ctx.options().is_layout_sensitive || !ctx.options().enable_broadcast_degenerate_dimension) {
      return nullptr;
    }
    std::vector<int64_t> kept, dims;
    for (int64_t d = 0; d < a->shape().rank(); ++d) {
      if (a->shape().dimensions(d) == 1) continue;
      kept.push_back(a->shape().dimensions(d));
      dims.push_back(i->dimensions(d));
    }
    if (static_cast<int64_t>(kept.size()) == a->shape().rank()) return nullptr;
    HloInstruction* r = ctx.Add(HloInstruction::CreateReshape(WithDims(a->shape(), kept), a));
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), r, dims));
  }));
}

// ---------------------------------------------------------------- reshape
// XLA's FindContiguousChunks for reshape(transpose(...)): each output dim of
// the reshape collapses a run of consecutive transpose operand dims.
struct Chunk {
  int64_t start_dim;
  int64_t size;
  int64_t result_dim;
};
std::optional<std::vector<Chunk>> FindContiguousChunks(const HloInstruction* reshape, const HloInstruction* transpose) {
  auto f = CommonFactors(reshape->shape().dimensions(), transpose->shape().dimensions());
  std::vector<Chunk> chunks;
  for (size_t k = 0; k + 1 < f.size(); ++k) {
    auto [rs, ts] = f[k];
    auto [re, te] = f[k + 1];
    if (re - rs != 1) return std::nullopt;
    int64_t n = te - ts;
    if (n == 0) return std::nullopt;
    for (int64_t m = 1; m < n; ++m) {
      if (transpose->dimensions(ts + m) != transpose->dimensions(ts + m - 1) + 1) return std::nullopt;
    }
    chunks.push_back({transpose->dimensions(ts), reshape->shape().dimensions(rs), rs});
  }
  return chunks;
}

void ReshapeRules(std::vector<Rule>& rules) {
  // reshape to a zero-element shape => empty constant
  rules.push_back(R(O::kReshape, "zero-element reshape => constant", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->shape().element_count() != 0) return nullptr;
    return ctx.Add(HloInstruction::CreateConstant(Literal(i->shape())));
  }));
  // reshape(A) to A's shape => A
  rules.push_back(R(O::kReshape, "reshape(A) to its shape => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    return ctx.SameShape(i->shape(), Op(i, 0)->shape()) ? Op(i, 0) : nullptr;
  }));
  // reshape(reshape(A)) => reshape(A)
  rules.push_back(R(O::kReshape, "reshape(reshape(A)) => reshape(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!Is(Op(i, 0), O::kReshape)) return nullptr;
    return ctx.Add(HloInstruction::CreateReshape(i->shape(), Op(Op(i, 0), 0)));
  }));
  rules.push_back(ChainRule(O::kReshape, "reshape/transpose chain that undoes itself => source"));
  // reshape(transpose(reshape(A))) => transpose(reshape(A)) when each output
  // dim is a contiguous run of transposed dims
  rules.push_back(R(O::kReshape, "reshape(transpose(reshape(A))) => transpose(reshape(A))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (ctx.options().is_layout_sensitive || !ctx.options().enable_hoist_transpose_of_reshape) return nullptr;
    HloInstruction* t = Op(i, 0);
    if (!Is(t, O::kTranspose) || !Is(Op(t, 0), O::kReshape)) return nullptr;
    auto chunks = FindContiguousChunks(i, t);
    if (!chunks) return nullptr;
    std::sort(chunks->begin(), chunks->end(), [](const Chunk& a, const Chunk& b) { return a.start_dim < b.start_dim; });
    std::vector<int64_t> dims, perm(chunks->size());
    for (size_t k = 0; k < chunks->size(); ++k) {
      dims.push_back((*chunks)[k].size);
      perm[(*chunks)[k].result_dim] = static_cast<int64_t>(k);
    }
    HloInstruction* r = ctx.Add(HloInstruction::CreateReshape(WithDims(i->shape(), dims), Op(Op(t, 0), 0)));
    return ctx.Add(HloInstruction::CreateTranspose(i->shape(), r, perm));
  }));
  // reshape(broadcast(A)) => broadcast(A) when the broadcast dims survive the reshape
  rules.push_back(R(O::kReshape, "reshape(broadcast(A)) => broadcast(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* b = Op(i, 0);
    if (!Is(b, O::kBroadcast)) return nullptr;
    auto dims = ReshapeLeavesDimensionsUnmodified(b->shape(), i->shape(), b->dimensions());
    if (!dims) return nullptr;
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(b, 0), *dims));
  }));
}

void ReshapeBitcastRule(std::vector<Rule>& rules) {
  // (layout sensitive) reshape of a chain of copies and reshapes that moves no bytes => bitcast
  rules.push_back(R(O::kReshape, "reshape of bitcast-equivalent chain => bitcast", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!ctx.options().is_layout_sensitive) return nullptr;
    for (HloInstruction* x = Op(i, 0);; x = Op(x, 0)) {
      if (ReshapeIsBitcast(x->shape(), i->shape())) return ctx.Add(HloInstruction::CreateBitcast(i->shape(), x));
      if (!Is(x, O::kReshape) && !Is(x, O::kCopy)) return nullptr;
    }
  }));
}

// ---------------------------------------------------------------- transpose
bool OnlyPermutesDegenerateDims(const Shape& shape, const std::vector<int64_t>& perm) {
  std::vector<int64_t> kept;
  int64_t degenerate = 0;
  for (size_t k = 0; k < perm.size(); ++k) {
    if (shape.dimensions(k) != 1) {
      kept.push_back(perm[k]);
    } else {
      ++degenerate;
    }
  }
  return degenerate > 0 && std::is_sorted(kept.begin(), kept.end());
}

void TransposeRules(std::vector<Rule>& rules) {
  // transpose(A) with the identity permutation => A
  rules.push_back(R(O::kTranspose, "transpose(A, identity) => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    return std::is_sorted(i->dimensions().begin(), i->dimensions().end()) ? Op(i, 0) : nullptr;
  }));
  // transpose(transpose(A, p1), p2) => transpose(A, p1 o p2)
  rules.push_back(R(O::kTranspose, "transpose(transpose(A)) => transpose(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* inner = Op(i, 0);
    if (!Is(inner, O::kTranspose)) return nullptr;
    std::vector<int64_t> perm;
    for (int64_t d : i->dimensions()) perm.push_back(inner->dimensions(d));
    return ctx.Add(HloInstruction::CreateTranspose(i->shape(), Op(inner, 0), perm));
  }));
  rules.push_back(ChainRule(O::kTranspose, "transpose/reshape chain that undoes itself => source"));
  // transpose(dot(A, B)) => dot(B, A) when it only swaps the outer dims
  rules.push_back(R(O::kTranspose, "transpose(dot(A,B)) => dot(B,A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* dot = Op(i, 0);
    if (!ctx.options().supports_non_canonical_dots) return nullptr;
    if (!Is(dot, O::kDot) || dot->user_count() != 1 || !dot->attrs().sparsity.empty()) return nullptr;
    // Would undo moving a parameter-like lhs to the right.
    if (ctx.options().enable_move_dot_param_to_rhs && !IsParameterLike(dot->operand(0)) &&
        IsParameterLike(dot->operand(1))) {
      return nullptr;
    }
    const DotDimensionNumbers& d = dot->attrs().dot_dnums;
    HloInstruction* lhs = Op(dot, 0);
    HloInstruction* rhs = Op(dot, 1);
    int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());
    for (int64_t k = 0; k < nb; ++k) {
      if (i->dimensions(k) >= nb) return nullptr;
    }
    int64_t rhs_outer = rhs->shape().rank() - static_cast<int64_t>(d.rhs_contracting_dimensions.size() + d.rhs_batch_dimensions.size());
    int64_t lhs_outer = lhs->shape().rank() - static_cast<int64_t>(d.lhs_contracting_dimensions.size() + d.lhs_batch_dimensions.size());
    for (int64_t k = 0; k < rhs_outer; ++k) {
      if (i->dimensions(k + nb) != k + nb + lhs_outer) return nullptr;
    }
    for (int64_t k = 0; k < lhs_outer; ++k) {
      if (i->dimensions(k + nb + rhs_outer) != k + nb) return nullptr;
    }
    DotDimensionNumbers nd;
    nd.lhs_contracting_dimensions = d.rhs_contracting_dimensions;
    nd.rhs_contracting_dimensions = d.lhs_contracting_dimensions;
    for (int64_t k = 0; k < nb; ++k) {
      nd.lhs_batch_dimensions.push_back(d.rhs_batch_dimensions[i->dimensions(k)]);
      nd.rhs_batch_dimensions.push_back(d.lhs_batch_dimensions[i->dimensions(k)]);
    }
    PrecisionConfig pc = dot->attrs().precision_config;
    if (pc.operand_precision.size() == 2) std::swap(pc.operand_precision[0], pc.operand_precision[1]);
    auto nd_inst = HloInstruction::CreateDot(i->shape(), rhs, lhs, nd, pc);
    return ctx.Add(std::move(nd_inst));
  }));
  // transpose that only moves 1-sized dims => reshape
  rules.push_back(R(O::kTranspose, "transpose of degenerate dims => reshape", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!OnlyPermutesDegenerateDims(i->shape(), i->dimensions())) return nullptr;
    return ctx.Add(HloInstruction::CreateReshape(i->shape(), Op(i, 0)));
  }));
  // (layout sensitive) transpose that moves no bytes => bitcast
  rules.push_back(R(O::kTranspose, "transpose that moves no bytes => bitcast", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!ctx.options().is_layout_sensitive || OnlyPermutesDegenerateDims(i->shape(), i->dimensions())) return nullptr;
    if (!TransposeIsBitcast(Op(i, 0)->shape(), i->shape(), i->dimensions())) return nullptr;
    return ctx.Add(HloInstruction::CreateBitcast(i->shape(), Op(i, 0)));
  }));
}

void TransposeReshapeToConcatRule(std::vector<Rule>& rules) {
  // reshape(transpose(reshape(A))) that moves a split-off chunk dim (<= 5
  // chunks) next to another dim => reshape(concatenate(slices of A))
  rules.push_back(R(O::kTranspose, "reshape(transpose(reshape)) depth-to-space => concat of slices", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* operand = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !ctx.options().rewrite_reshape_transpose_as_slice_concatenate ||
        !Is(operand, O::kReshape) || i->user_count() != 1 || !Is(i->users()[0], O::kReshape)) {
      return nullptr;
    }
    HloInstruction* src = Op(operand, 0);
    HloInstruction* outer = i->users()[0];
    const Shape& os = operand->shape();
    const Shape& ss = src->shape();
    if (os.rank() != ss.rank() + 1) return nullptr;
    int64_t split = 0;
    bool found = false;
    for (int64_t d = 0; d < ss.rank(); ++d) {
      if (os.dimensions(d) != ss.dimensions(d)) {
        if (ss.dimensions(d) != os.dimensions(d) * os.dimensions(d + 1)) return nullptr;
        split = d;
        found = true;
        break;
      }
    }
    if (!found) return nullptr;
    for (int64_t d = split + 1; d < ss.rank(); ++d) {
      if (os.dimensions(d + 1) != ss.dimensions(d)) return nullptr;
    }
    int64_t chunks = os.dimensions(split);
    int64_t chunk_size = os.dimensions(split + 1);
    if (chunks > 5) return nullptr;
    int64_t tdim = 0;
    found = false;
    for (int64_t d = 0; d < os.rank(); ++d) {
      if (i->dimensions(d) == split) {
        tdim = d;
        found = true;
        break;
      }
    }
    if (!found || tdim == split || tdim == split + 1) return nullptr;
    for (int64_t d = 0; d < os.rank(); ++d) {
      int64_t offset = (d > tdim ? -1 : 0) + (d > split ? 1 : 0);
      if (d != tdim && i->dimensions(d) != d + offset) return nullptr;
    }
    const Shape& out = outer->shape();
    if (out.rank() != ss.rank()) return nullptr;
    for (int64_t d = 0; d < ss.rank(); ++d) {
      if (d == tdim - 1) {
        if (out.dimensions(d) != ss.dimensions(d) * chunks) return nullptr;
      } else if (d == split) {
        if (out.dimensions(d) != ss.dimensions(d) / chunks) return nullptr;
      } else if (out.dimensions(d) != ss.dimensions(d)) {
        return nullptr;
      }
    }
    std::vector<HloInstruction*> slices;
    for (int64_t c = 0; c < chunks; ++c) {
      std::vector<SliceDimension> sl;
      std::vector<int64_t> dims;
      for (int64_t d = 0; d < ss.rank(); ++d) {
        if (d == split) {
          sl.push_back({c * chunk_size, c * chunk_size + chunk_size, 1});
          dims.push_back(chunk_size);
        } else {
          sl.push_back({0, ss.dimensions(d), 1});
          dims.push_back(ss.dimensions(d));
        }
      }
      slices.push_back(ctx.Add(HloInstruction::CreateSlice(Shape(ss.element_type(), dims), src, sl)));
    }
    Shape cshape = slices[0]->shape();
    cshape.set_dimensions(tdim, cshape.dimensions(tdim) * chunks);
    HloInstruction* concat = ctx.Add(HloInstruction::CreateConcatenate(cshape, slices, tdim));
    outer->ReplaceOperandWith(0, concat);
    if (i->user_count() == 0 && !i->IsRoot()) {
      absl::Status st = i->parent()->RemoveInstructionAndUnusedOperands(i);
      (void)st;
    }
    return i;
  }));
}

void TransposeOfBroadcastRule(std::vector<Rule>& rules) {
  // transpose(broadcast(A)) keeping A's dims in order => broadcast(A)
  rules.push_back(R(O::kTranspose, "transpose(broadcast(A)) => broadcast(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    return TransposeOfBroadcast(i, i->dimensions(), ctx);
  }));
}

}  // namespace

// XLA's SimplifyTransposeOfBroadcast for `i` = transpose(broadcast(A)) by
// `perm` (a transpose, or a bitcast that is one): broadcast(A) when A's dims
// keep their order (and, layout sensitive, their layout order).
HloInstruction* TransposeOfBroadcast(HloInstruction* i, const std::vector<int64_t>& perm, RuleContext& ctx) {
  HloInstruction* b = Op(i, 0);
  if (!Is(b, O::kBroadcast) || !std::is_sorted(b->dimensions().begin(), b->dimensions().end())) return nullptr;
  std::vector<int64_t> inv = InversePermutation(perm);
  std::vector<int64_t> dims;
  for (int64_t d : b->dimensions()) dims.push_back(inv[d]);
  if (!std::is_sorted(dims.begin(), dims.end())) return nullptr;
  if (ctx.options().is_layout_sensitive) {
    // The operand's layout must order its dims as the transpose's layout does.
    const Shape& a = b->operand(0)->shape();
    if (!a.has_layout() || !i->shape().has_layout()) return nullptr;
    std::vector<int64_t> p1(dims.size()), p2(dims.size());
    std::iota(p1.begin(), p1.end(), 0);
    std::iota(p2.begin(), p2.end(), 0);
    const std::vector<int64_t>& aml = a.layout().minor_to_major();
    std::sort(p1.begin(), p1.end(), [&](int64_t x, int64_t y) { return aml[x] < aml[y]; });
    std::vector<int64_t> extracted;
    for (int64_t d : i->shape().layout().minor_to_major()) {
      if (std::binary_search(dims.begin(), dims.end(), d)) extracted.push_back(d);
    }
    std::sort(p2.begin(), p2.end(), [&](int64_t x, int64_t y) { return extracted[x] < extracted[y]; });
    if (p1 != p2) return nullptr;
  }
  return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(b, 0), dims));
}

std::optional<InsertedOrDeleted> InsertedOrDeleted1SizedDimensions(const Shape& pre, const Shape& post) {
  InsertedOrDeleted r;
  auto unmodified = DimensionsUnmodifiedByReshape(pre, post);
  for (size_t k = 0; k <= unmodified.size(); ++k) {
    std::pair<int64_t, int64_t> prior = k > 0 ? unmodified[k - 1] : std::pair<int64_t, int64_t>(-1, -1);
    std::pair<int64_t, int64_t> cur = k < unmodified.size() ? unmodified[k] : std::make_pair(pre.rank(), post.rank());
    for (int64_t d = prior.first + 1; d < cur.first; ++d) {
      if (pre.dimensions(d) > 1) return std::nullopt;
      r.deleted.push_back(d);
    }
    for (int64_t d = prior.second + 1; d < cur.second; ++d) {
      if (post.dimensions(d) > 1) return std::nullopt;
      r.inserted.push_back(d);
    }
  }
  return r;
}

Rule ChainRule(HloOpcode op, std::string_view name) {
  return R(op, name, [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (Is(i, O::kBitcast) && !i->control_predecessors().empty()) return nullptr;
    return RemoveReshapeTransposeChain(i, ctx);
  });
}

std::vector<std::pair<int64_t, int64_t>> DimensionsUnmodifiedByReshape(const Shape& in, const Shape& out) {
  auto f = CommonFactors(in.dimensions(), out.dimensions());
  for (size_t k = 0; k + 1 < f.size();) {
    if (f[k + 1].first - f[k].first != 1 || f[k + 1].second - f[k].second != 1) {
      f.erase(f.begin() + k);
    } else {
      ++k;
    }
  }
  f.pop_back();
  return f;
}

std::vector<Rule> ShapeRules() {
  std::vector<Rule> rules;
  ConstantRules(rules);
  BroadcastRules(rules);
  ReshapeRules(rules);
  ReshapeBitcastRule(rules);
  TransposeRules(rules);
  TransposeReshapeToConcatRule(rules);
  TransposeOfBroadcastRule(rules);
  AddSliceRules(rules);
  AddConcatPadRules(rules);
  AddCopyBitcastRules(rules);
  return rules;
}

}  // namespace passlab::algsimp
