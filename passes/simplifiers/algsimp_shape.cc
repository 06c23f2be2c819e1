// AlgebraicSimplifier rules over data movement: constants, broadcasts,
// reshapes, transposes, slices, dynamic slices, concatenates, pads,
// reverses, copies, bitcasts and custom calls, in the order XLA's
// AlgebraicSimplifierVisitor handlers try them
// (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc).
#include <algorithm>
#include <numeric>

#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

using O = HloOpcode;

bool Is(const HloInstruction* i, HloOpcode op) { return i->opcode() == op; }

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

struct InsertedOrDeleted {
  std::vector<int64_t> deleted;
  std::vector<int64_t> inserted;
};

// XLA's ShapeUtil::InsertedOrDeleted1SizedDimensions for reshape pre -> post.
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

bool IsUnstridedSlice(const HloInstruction* slice) {
  for (const SliceDimension& d : slice->attrs().slice) {
    if (d.stride != 1) return false;
  }
  return true;
}

Shape WithDims(const Shape& like, std::vector<int64_t> dims) {
  return Shape(like.element_type(), std::move(dims));
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

Rule ChainRule(HloOpcode op, std::string_view name) {
  return R(op, name, [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (Is(i, O::kBitcast) && !i->control_predecessors().empty()) return nullptr;
    return RemoveReshapeTransposeChain(i, ctx);
  });
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
    HloInstruction* b = Op(i, 0);
    if (!Is(b, O::kBroadcast) || !std::is_sorted(b->dimensions().begin(), b->dimensions().end())) return nullptr;
    std::vector<int64_t> inv = InversePermutation(i->dimensions());
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
  }));
}

// ---------------------------------------------------------------- slice
void SliceRules(std::vector<Rule>& rules) {
  // slice(A) of all of A => A
  rules.push_back(R(O::kSlice, "slice(A) of all of A => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!i->control_predecessors().empty()) return nullptr;
    return ctx.SameShape(i->shape(), Op(i, 0)->shape()) ? Op(i, 0) : nullptr;
  }));
  // slice(pad(A, v)): in the padding => broadcast(v); undoing the pad => A;
  // inside A => slice(A)
  rules.push_back(R(O::kSlice, "slice(pad(A)) => A, slice(A) or broadcast(v)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* pad = Op(i, 0);
    if (!Is(pad, O::kPad)) return nullptr;
    bool undoes = true, inside = true, in_padding = false;
    std::vector<SliceDimension> s = i->attrs().slice;
    for (int64_t d = 0; d < i->shape().rank(); ++d) {
      const SliceDimension& sd = i->attrs().slice[d];
      const PaddingDimension& p = pad->attrs().padding_config.dimensions[d];
      int64_t edge = pad->shape().dimensions(d) - p.edge_padding_high;
      if (sd.limit <= p.edge_padding_low || sd.start >= edge) {
        in_padding = true;
        break;
      }
      if (sd.start != p.edge_padding_low || sd.stride - 1 != p.interior_padding) undoes = false;
      if (sd.start < p.edge_padding_low || sd.limit > edge || p.interior_padding != 0 || sd.stride != 1) inside = false;
      s[d].start -= p.edge_padding_low;
      s[d].limit -= p.edge_padding_low;
    }
    if (in_padding) {
      HloInstruction* b = ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(pad, 1), {}));
      return b;
    }
    if (undoes && ctx.SameShape(i->shape(), Op(pad, 0)->shape())) return Op(pad, 0);
    if (inside) return ctx.Add(HloInstruction::CreateSlice(i->shape(), Op(pad, 0), s));
    return nullptr;
  }));
  // slice(slice(A)) => slice(A) (unstrided)
  rules.push_back(R(O::kSlice, "slice(slice(A)) => slice(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* inner = Op(i, 0);
    if (!Is(inner, O::kSlice) || !IsUnstridedSlice(i) || !IsUnstridedSlice(inner)) return nullptr;
    std::vector<SliceDimension> s = i->attrs().slice;
    for (size_t d = 0; d < s.size(); ++d) {
      s[d].start += inner->attrs().slice[d].start;
      s[d].limit += inner->attrs().slice[d].start;
    }
    return ctx.Add(HloInstruction::CreateSlice(i->shape(), Op(inner, 0), s));
  }));
  // slice(broadcast(A)) slicing only broadcast dims => broadcast(A)
  rules.push_back(R(O::kSlice, "slice of broadcast dims => broadcast", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* b = Op(i, 0);
    if (!Is(b, O::kBroadcast)) return nullptr;
    for (int64_t d : b->dimensions()) {
      const SliceDimension& sd = i->attrs().slice[d];
      if (sd.start != 0 || sd.stride != 1 || sd.limit != b->shape().dimensions(d)) return nullptr;
    }
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(b, 0), b->dimensions()));
  }));
  // slice(broadcast(A)) => broadcast(slice(A))
  rules.push_back(R(O::kSlice, "slice(broadcast(A)) => broadcast(slice(A))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* b = Op(i, 0);
    if (!Is(b, O::kBroadcast)) return nullptr;
    HloInstruction* a = Op(b, 0);
    std::vector<SliceDimension> s;
    std::vector<int64_t> dims;
    for (int64_t d : b->dimensions()) {
      const SliceDimension& sd = i->attrs().slice[d];
      s.push_back(sd);
      dims.push_back((sd.limit - sd.start + sd.stride - 1) / sd.stride);
    }
    Shape shape = a->shape();
    for (size_t d = 0; d < dims.size(); ++d) shape.set_dimensions(static_cast<int64_t>(d), dims[d]);
    HloInstruction* sl = ctx.Add(HloInstruction::CreateSlice(shape, a, s));
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), sl, b->dimensions()));
  }));
  // slice(concatenate(...)) => the operand it covers, or a slice of fewer operands
  rules.push_back(R(O::kSlice, "slice(concatenate) => operand or smaller slice", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* concat = Op(i, 0);
    if (!Is(concat, O::kConcatenate) || !IsUnstridedSlice(i)) return nullptr;
    int64_t cd = concat->concatenate_dimension();
    int64_t piece_start = 0, concat_start = 0;
    std::optional<int64_t> start_op, limit_op;
    int64_t s0 = i->attrs().slice[cd].start, l0 = i->attrs().slice[cd].limit;
    for (int64_t k = 0; k < concat->operand_count(); ++k) {
      int64_t size = concat->operand(k)->shape().dimensions(cd);
      if (!start_op && piece_start <= s0 && size + piece_start > s0) {
        start_op = k;
        concat_start = piece_start;
      }
      piece_start += size;
      if (!limit_op && piece_start >= l0) {
        limit_op = k + 1;
        break;
      }
    }
    if (!start_op || !limit_op) return nullptr;
    if (*start_op + 1 == *limit_op && ctx.SameShape(concat->operand(*start_op)->shape(), i->shape())) {
      return Op(concat, *start_op);
    }
    if (*limit_op - *start_op >= concat->operand_count()) return nullptr;
    std::vector<SliceDimension> s = i->attrs().slice;
    s[cd].start -= concat_start;
    s[cd].limit = s[cd].start + i->shape().dimensions(cd);
    HloInstruction* operand = Op(concat, *start_op);
    if (*start_op + 1 != *limit_op) {
      std::vector<HloInstruction*> ops(concat->operands().begin() + *start_op, concat->operands().begin() + *limit_op);
      Shape shape = concat->shape();
      int64_t size = 0;
      for (HloInstruction* op : ops) size += op->shape().dimensions(cd);
      shape.set_dimensions(cd, size);
      operand = ctx.Add(HloInstruction::CreateConcatenate(shape, ops, cd));
    }
    return ctx.Add(HloInstruction::CreateSlice(i->shape(), operand, s));
  }));
  // slice(reduce-window(A)) picking whole windows => reshape(reduce(A))
  rules.push_back(R(O::kSlice, "slice(reduce-window) => reshape(reduce)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* rw = Op(i, 0);
    if (!ctx.options().enable_window_reduce_to_reduce_replacement || !IsUnstridedSlice(i) || !Is(rw, O::kReduceWindow) ||
        rw->user_count() != 1 || rw->operand_count() != 2) {
      return nullptr;
    }
    const Window& w = rw->window();
    bool padded = false;
    for (const WindowDimension& wd : w.dimensions) {
      if (wd.stride != 1 || wd.window_dilation != 1 || wd.base_dilation != 1) return nullptr;
      padded |= wd.padding_low != 0 || wd.padding_high != 0;
    }
    if (!padded) return nullptr;
    std::vector<int64_t> reduce_dims, kept;
    for (int64_t d = 0; d < rw->shape().rank(); ++d) {
      const WindowDimension& wd = w.dimensions[d];
      const SliceDimension& sd = i->attrs().slice[d];
      int64_t rw_size = rw->shape().dimensions(d), slice_size = i->shape().dimensions(d);
      if (rw_size != sd.limit || wd.padding_low != sd.start || wd.padding_high != 0) return nullptr;
      if (wd.size == 1 && rw_size == slice_size && sd.start == 0) {
        kept.push_back(rw_size);
        continue;
      }
      if (slice_size == 1 && rw_size == wd.size && sd.limit - sd.start == 1) {
        reduce_dims.push_back(d);
      } else {
        return nullptr;
      }
    }
    if (reduce_dims.empty()) return nullptr;
    HloInstruction* reduce = ctx.Add(HloInstruction::CreateReduce(WithDims(rw->shape(), kept), {Op(rw, 0)}, {Op(rw, 1)},
                                                                  reduce_dims, rw->to_apply()));
    return ctx.Add(HloInstruction::CreateReshape(i->shape(), reduce));
  }));
  // slice(reverse(A)) => reverse(slice(A))
  rules.push_back(R(O::kSlice, "slice(reverse(A)) => reverse(slice(A))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* rev = Op(i, 0);
    if (!Is(rev, O::kReverse)) return nullptr;
    std::vector<SliceDimension> s = i->attrs().slice;
    for (int64_t d : rev->dimensions()) {
      const SliceDimension& sd = i->attrs().slice[d];
      int64_t last = sd.start + ((sd.limit - sd.start - 1) / sd.stride) * sd.stride;
      int64_t limit = last + 1;
      int64_t n = rev->shape().dimensions(d);
      s[d].start = (n - sd.start) - (limit - sd.start);
      s[d].limit = n - sd.start;
    }
    HloInstruction* sl = ctx.Add(HloInstruction::CreateSlice(i->shape(), Op(rev, 0), s));
    return ctx.Add(HloInstruction::CreateReverse(i->shape(), sl, rev->dimensions()));
  }));
  // slice with a stride that takes one element => stride 1
  rules.push_back(R(O::kSlice, "slice drops redundant strides", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    std::vector<SliceDimension> s = i->attrs().slice;
    bool any = false;
    for (SliceDimension& sd : s) {
      if (sd.stride == 1) continue;
      if (sd.stride >= sd.limit || sd.start + sd.stride >= sd.limit) {
        sd.limit = sd.start + 1;
        sd.stride = 1;
        any = true;
      }
    }
    if (!any) return nullptr;
    return ctx.Add(HloInstruction::CreateSlice(i->shape(), Op(i, 0), s));
  }));
}

// ---------------------------------------------------------------- dynamic slice
void DynamicSliceRules(std::vector<Rule>& rules) {
  // dynamic-slice to a scalar or to the whole operand => operand
  rules.push_back(R(O::kDynamicSlice, "dynamic-slice of everything => operand", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->shape().IsScalar() || ctx.SameShape(Op(i, 0)->shape(), i->shape())) return Op(i, 0);
    return nullptr;
  }));
  // start index of a full-size dim => 0
  rules.push_back(R(O::kDynamicSlice, "dynamic-slice full dims start at 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    const Shape& s = Op(i, 0)->shape();
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < s.rank(); ++d) {
      HloInstruction* start = Op(i, d + 1);
      if (!(Is(start, O::kConstant) && IsAll(start, 0)) && s.dimensions(d) == i->shape().dimensions(d)) dims.push_back(d);
    }
    if (dims.empty()) return nullptr;
    HloInstruction* zero = ctx.ScalarLike(Op(i, 1), 0);
    std::vector<HloInstruction*> ops = i->operands();
    for (int64_t d : dims) ops[d + 1] = zero;
    return ctx.Add(i->CloneWithNewOperands(i->shape(), ops));
  }));
  // dynamic-slice(broadcast(A)) => broadcast(dynamic-slice(A))
  rules.push_back(R(O::kDynamicSlice, "dynamic-slice(broadcast(A)) => broadcast(dynamic-slice(A))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* b = Op(i, 0);
    if (!Is(b, O::kBroadcast)) return nullptr;
    HloInstruction* a = Op(b, 0);
    std::vector<HloInstruction*> starts;
    std::vector<int64_t> sizes;
    for (int64_t d : b->dimensions()) {
      starts.push_back(Op(i, 1 + d));
      sizes.push_back(i->attrs().slice_sizes[d]);
    }
    HloInstruction* ds = a;
    if (!sizes.empty()) {
      Shape shape = a->shape();
      for (size_t d = 0; d < sizes.size(); ++d) shape.set_dimensions(static_cast<int64_t>(d), sizes[d]);
      ds = ctx.Add(HloInstruction::CreateDynamicSlice(shape, a, starts, sizes));
    }
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), ds, b->dimensions()));
  }));
  // dynamic-slice(reshape(A)) where the reshape only adds or drops 1-sized
  // dims => reshape(dynamic-slice(A))
  rules.push_back(R(O::kDynamicSlice, "dynamic-slice(trivial reshape) => reshape(dynamic-slice)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* r = Op(i, 0);
    if (!Is(r, O::kReshape) || ctx.options().is_layout_sensitive) return nullptr;
    HloInstruction* a = Op(r, 0);
    if (!InsertedOrDeleted1SizedDimensions(a->shape(), r->shape())) return nullptr;
    HloInstruction* zero = ctx.ScalarLike(Op(i, 1), 0);
    std::vector<HloInstruction*> starts(a->shape().rank(), zero);
    std::vector<int64_t> sizes(a->shape().rank(), 1);
    for (auto [in, out] : DimensionsUnmodifiedByReshape(a->shape(), r->shape())) {
      if (a->shape().dimensions(in) == 1) continue;
      starts[in] = Op(i, 1 + out);
      sizes[in] = i->attrs().slice_sizes[out];
    }
    HloInstruction* ds = ctx.Add(HloInstruction::CreateDynamicSlice(Shape(i->shape().element_type(), sizes), a, starts, sizes));
    return ctx.Add(HloInstruction::CreateReshape(i->shape(), ds));
  }));
  // dynamic-slice(transpose(A)) => transpose(dynamic-slice(A))
  rules.push_back(R(O::kDynamicSlice, "dynamic-slice(transpose(A)) => transpose(dynamic-slice(A))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* t = Op(i, 0);
    if (!Is(t, O::kTranspose) || ctx.options().is_layout_sensitive) return nullptr;
    std::vector<int64_t> inv = InversePermutation(t->dimensions());
    std::vector<HloInstruction*> starts;
    std::vector<int64_t> sizes, dims;
    for (size_t k = 0; k < inv.size(); ++k) {
      starts.push_back(Op(i, 1 + inv[k]));
      sizes.push_back(i->attrs().slice_sizes[inv[k]]);
      dims.push_back(i->shape().dimensions(inv[k]));
    }
    HloInstruction* ds = ctx.Add(HloInstruction::CreateDynamicSlice(WithDims(i->shape(), dims), Op(t, 0), starts, sizes));
    return ctx.Add(HloInstruction::CreateTranspose(i->shape(), ds, t->dimensions()));
  }));
  // dynamic-slice with constant starts => slice (starts clamped)
  rules.push_back(R(O::kDynamicSlice, "dynamic-slice with constant starts => slice", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (ctx.options().disable_dynamic_slice_to_slice_conversion || Is(Op(i, 0), O::kConstant)) return nullptr;
    if (ctx.options().is_layout_sensitive) {
      const Shape& a = i->shape();
      const Shape& b = Op(i, 0)->shape();
      if (!a.has_layout() || !b.has_layout() || a.layout().memory_space() != b.layout().memory_space()) return nullptr;
    }
    const Shape& s = Op(i, 0)->shape();
    std::vector<SliceDimension> slice;
    for (int64_t d = 0; d < s.rank(); ++d) {
      HloInstruction* st = Op(i, d + 1);
      if (!Is(st, O::kConstant) || !IsIntegralType(st->shape().element_type()) || st->literal().element_count() == 0) return nullptr;
      int64_t offset = IsUnsignedIntegralType(st->shape().element_type())
                           ? static_cast<int64_t>(std::min<uint64_t>(st->literal().GetUint(0), uint64_t{1} << 62))
                           : st->literal().GetInt(0);
      if (offset < 0) return nullptr;
      int64_t max_offset = s.dimensions(d) - i->shape().dimensions(d);
      int64_t start = std::min(max_offset, offset);
      slice.push_back({start, start + i->shape().dimensions(d), 1});
    }
    return ctx.Add(HloInstruction::CreateSlice(i->shape(), Op(i, 0), slice));
  }));
  // dynamic-slice(iota, i) of one element => reshape(clamp(0, i, n-1)) (s32/u32)
  rules.push_back(R(O::kDynamicSlice, "dynamic-slice(iota, i) => clamp(i)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    PrimitiveType et = i->shape().element_type();
    HloInstruction* operand = Op(i, 0);
    if (operand->shape().rank() != 1 || i->shape().rank() != 1 || i->shape().dimensions(0) != 1 ||
        (et != PrimitiveType::kS32 && et != PrimitiveType::kU32)) {
      return nullptr;
    }
    HloInstruction* multiplier = nullptr;
    if (Is(operand, O::kMultiply)) {
      HloInstruction* b = Op(operand, 1);
      if (Is(b, O::kBroadcast) && b->dimensions().empty() && b->operand(0)->shape().IsScalar()) {
        multiplier = Op(b, 0);
        operand = Op(operand, 0);
      }
    }
    if (!Is(operand, O::kIota)) return nullptr;
    HloInstruction* index = Op(i, 1);
    PrimitiveType it = index->shape().element_type();
    if (it != PrimitiveType::kS32 && it != PrimitiveType::kU32) return nullptr;
    int64_t n = operand->shape().dimensions(0);
    HloInstruction* clamped = ctx.Add(HloInstruction::CreateTernary(index->shape(), O::kClamp, ctx.ScalarLike(index, 0), index,
                                                                    ctx.ScalarLike(index, static_cast<double>(n - 1))));
    HloInstruction* result = clamped;
    if (it != et) {
      Shape shape = clamped->shape();
      shape.set_element_type(et);
      result = ctx.Add(HloInstruction::CreateConvert(shape, clamped));
    }
    if (multiplier != nullptr) result = ctx.Add(HloInstruction::CreateBinary(result->shape(), O::kMultiply, result, multiplier));
    return ctx.Add(HloInstruction::CreateReshape(i->shape(), result));
  }));
}

// ---------------------------------------------------------------- dynamic update slice
void DynamicUpdateSliceRules(std::vector<Rule>& rules) {
  // dynamic-update-slice(broadcast(v), U, constant starts) => pad(U, v)
  rules.push_back(R(O::kDynamicUpdateSlice, "DUS(broadcast(v),U,C) => pad(U,v)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* b = Op(i, 0);
    HloInstruction* u = Op(i, 1);
    if (!ctx.options().enable_dynamic_update_slice_to_pad_replacement || !Is(b, O::kBroadcast) ||
        !b->operand(0)->shape().IsScalar()) {
      return nullptr;
    }
    // Updates moved to host memory stay where they are.
    for (HloInstruction* h = u;; h = Op(h, 0)) {
      if (Is(h, O::kCustomCall) && h->custom_call_target() == "MoveToHost") return nullptr;
      if (!Is(h, O::kReshape) && !Is(h, O::kBitcast) && !Is(h, O::kCopy)) break;
    }
    PaddingConfig config;
    for (int64_t d = 0; d < b->shape().rank(); ++d) {
      HloInstruction* st = Op(i, d + 2);
      if (!IsEffectiveScalarConstant(st) || !IsIntegralType(st->shape().element_type())) return nullptr;
      int64_t start = st->literal().GetInt(0);
      int64_t uw = u->shape().dimensions(d), bw = b->shape().dimensions(d);
      start = std::min<int64_t>(bw - uw, std::max<int64_t>(0, start));
      config.dimensions.push_back({start, bw - (start + uw), 0});
    }
    return ctx.Add(HloInstruction::CreatePad(b->shape(), u, Op(b, 0), config));
  }));
  // dynamic-update-slice(A, U, ...) where U covers all of A => U
  rules.push_back(R(O::kDynamicUpdateSlice, "DUS of everything => update", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    return ctx.SameShape(i->shape(), Op(i, 1)->shape()) ? Op(i, 1) : nullptr;
  }));
  // start index of a full-size dim => 0
  rules.push_back(R(O::kDynamicUpdateSlice, "DUS full dims start at 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    const Shape& u = Op(i, 1)->shape();
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < u.rank(); ++d) {
      HloInstruction* start = Op(i, d + 2);
      if (!(Is(start, O::kConstant) && IsAll(start, 0)) && u.dimensions(d) == i->shape().dimensions(d)) dims.push_back(d);
    }
    if (dims.empty()) return nullptr;
    HloInstruction* zero = ctx.ScalarLike(Op(i, 2), 0);
    std::vector<HloInstruction*> ops = i->operands();
    for (int64_t d : dims) ops[d + 2] = zero;
    return ctx.Add(i->CloneWithNewOperands(i->shape(), ops));
  }));
}

// ---------------------------------------------------------------- reverse, concat, pad
void ReverseConcatPadRules(std::vector<Rule>& rules) {
  // reverse over dimensions of size 1 => A
  rules.push_back(R(O::kReverse, "reverse over size-1 dims => A", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    for (int64_t d : i->dimensions()) {
      if (i->shape().dimensions(d) != 1) return nullptr;
    }
    return Op(i, 0);
  }));
  // reverse(reverse(A)) => A, or one reverse over the symmetric difference
  rules.push_back(R(O::kReverse, "reverse(reverse(A)) => reverse(A) or A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* inner = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !Is(inner, O::kReverse)) return nullptr;
    std::vector<int64_t> a = i->dimensions(), b = inner->dimensions(), diff;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(diff));
    if (diff.empty()) return Op(inner, 0);
    return ctx.Add(HloInstruction::CreateReverse(i->shape(), Op(inner, 0), diff));
  }));
  // reverse(A op broadcast(s)) => reverse(A) op broadcast(s)
  rules.push_back(R(O::kReverse, "reverse(A op scalar) => reverse(A) op scalar", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* inner = Op(i, 0);
    if (ctx.options().is_layout_sensitive || inner->operand_count() != 2 || !inner->IsElementwise() ||
        Is(inner, O::kCompare) || Is(inner, O::kRng)) {
      return nullptr;
    }
    auto scalar_bcast = [](const HloInstruction* b) {
      return Is(b, O::kBroadcast) && b->dimensions().empty() && b->operand(0)->shape().IsScalar();
    };
    for (int k = 0; k < 2; ++k) {
      if (!scalar_bcast(inner->operand(k))) continue;
      HloInstruction* other = Op(inner, 1 - k);
      HloInstruction* rev = ctx.Add(HloInstruction::CreateReverse(other->shape(), other, i->dimensions()));
      HloInstruction* a = k == 0 ? Op(inner, 0) : rev;
      HloInstruction* b = k == 0 ? rev : Op(inner, 1);
      return ctx.Add(HloInstruction::CreateBinary(inner->shape(), inner->opcode(), a, b));
    }
    return nullptr;
  }));
  // concatenate(A) => A
  rules.push_back(R(O::kConcatenate, "concatenate(A) => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->operand_count() != 1) return nullptr;
    return ctx.SameShape(i->shape(), Op(i, 0)->shape()) ? Op(i, 0) : nullptr;
  }));
  // concatenate drops empty operands
  rules.push_back(R(O::kConcatenate, "concatenate drops empty operands", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->operand_count() == 1) return nullptr;
    std::vector<HloInstruction*> kept;
    for (HloInstruction* op : i->operands()) {
      if (op->shape().element_count() != 0) kept.push_back(op);
    }
    if (kept.size() == static_cast<size_t>(i->operand_count())) return nullptr;
    HloInstruction* r = kept.empty() ? Op(i, 0) : kept.size() == 1 ? kept[0] : ctx.Add(i->CloneWithNewOperands(i->shape(), kept));
    return ctx.SameShape(i->shape(), r->shape()) ? r : nullptr;
  }));
  // concatenate(concatenate(A, B), C) on the same dim => concatenate(A, B, C)
  rules.push_back(R(O::kConcatenate, "concatenate unnests concatenates", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->operand_count() == 1 || ctx.options().is_layout_sensitive) return nullptr;
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : i->operands()) {
      if (Is(op, O::kConcatenate) && op->concatenate_dimension() == i->concatenate_dimension()) {
        ops.insert(ops.end(), op->operands().begin(), op->operands().end());
      } else {
        ops.push_back(op);
      }
    }
    if (ops.size() == static_cast<size_t>(i->operand_count())) return nullptr;
    return ctx.Add(HloInstruction::CreateConcatenate(i->shape(), ops, i->concatenate_dimension()));
  }));
  // concatenate of adjacent slices of one operand => one slice
  rules.push_back(R(O::kConcatenate, "concatenate merges adjacent slices", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->operand_count() == 1 || ctx.options().is_layout_sensitive) return nullptr;
    const std::vector<HloInstruction*>& ops = i->operands();
    int64_t cd = i->concatenate_dimension();
    std::vector<HloInstruction*> out;
    size_t k = 0;
    while (k < ops.size()) {
      if (!Is(ops[k], O::kSlice) || !IsUnstridedSlice(ops[k])) {
        out.push_back(ops[k++]);
        continue;
      }
      int64_t end = ops[k]->attrs().slice[cd].limit;
      HloInstruction* src = Op(ops[k], 0);
      size_t j = k + 1;
      while (j < ops.size()) {
        if (!Is(ops[j], O::kSlice) || !IsUnstridedSlice(ops[j]) || ops[j]->operand(0) != src ||
            ops[j]->attrs().slice[cd].start != end) {
          break;
        }
        bool same = true;
        for (size_t d = 0; d < ops[j]->attrs().slice.size(); ++d) {
          if (static_cast<int64_t>(d) != cd && ops[k]->attrs().slice[d].start != ops[j]->attrs().slice[d].start) same = false;
        }
        if (!same) break;
        end = ops[j]->attrs().slice[cd].limit;
        ++j;
      }
      if (j - k > 1) {
        Shape shape = ops[k]->shape();
        shape.set_dimensions(cd, end - ops[k]->attrs().slice[cd].start);
        std::vector<SliceDimension> sl = ops[k]->attrs().slice;
        sl[cd].limit = end;
        out.push_back(ctx.Add(HloInstruction::CreateSlice(shape, src, sl)));
      } else {
        out.push_back(ops[k]);
      }
      k = j;
    }
    if (out.size() == ops.size()) return nullptr;
    HloInstruction* r = out.size() == 1 ? out[0] : ctx.Add(i->CloneWithNewOperands(i->shape(), out));
    return ctx.SameShape(r->shape(), i->shape()) ? r : nullptr;
  }));
  // concatenate(broadcast(v), A) => pad(A, v) (and the mirror)
  rules.push_back(R(O::kConcatenate, "concatenate with a broadcast scalar => pad", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->operand_count() != 2 || ctx.options().is_layout_sensitive) return nullptr;
    auto scalar_bcast = [](const HloInstruction* b) { return Is(b, O::kBroadcast) && b->operand(0)->shape().IsScalar(); };
    bool low = scalar_bcast(i->operand(0));
    bool high = scalar_bcast(i->operand(1));
    if (!low && !high) return nullptr;
    int64_t cd = i->concatenate_dimension();
    PaddingConfig config;
    for (int64_t d = 0; d < i->shape().rank(); ++d) {
      PaddingDimension p;
      if (d == cd) {
        if (low) {
          p.edge_padding_low = i->operand(0)->shape().dimensions(d);
        } else {
          p.edge_padding_high = i->operand(1)->shape().dimensions(d);
        }
      }
      config.dimensions.push_back(p);
    }
    HloInstruction* operand = Op(i, low ? 1 : 0);
    HloInstruction* value = Op(Op(i, low ? 0 : 1), 0);
    return ctx.Add(HloInstruction::CreatePad(i->shape(), operand, value, config));
  }));
  // concatenate(A, A, ..., A) of a 1-sized dim => broadcast(reshape(A))
  rules.push_back(R(O::kConcatenate, "concatenate of one 1-sized operand => broadcast", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->operand_count() <= 2 || ctx.options().is_layout_sensitive) return nullptr;
    int64_t cd = i->concatenate_dimension();
    HloInstruction* a = Op(i, 0);
    for (HloInstruction* op : i->operands()) {
      if (op != a) return nullptr;
    }
    if (a->shape().dimensions(cd) != 1) return nullptr;
    std::vector<int64_t> dims, bdims;
    for (int64_t d = 0; d < a->shape().rank(); ++d) {
      if (d == cd) continue;
      dims.push_back(a->shape().dimensions(d));
      bdims.push_back(d);
    }
    HloInstruction* r = ctx.Add(HloInstruction::CreateReshape(Shape(a->shape().element_type(), dims), a));
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), r, bdims));
  }));
  // pad of a zero-element array => broadcast(v)
  rules.push_back(R(O::kPad, "pad of nothing => broadcast(v)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (Op(i, 0)->shape().element_count() != 0) return nullptr;
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(i, 1), {}));
  }));
  // interior padding of 1-sized dims => none
  rules.push_back(R(O::kPad, "pad drops interior padding of 1-sized dims", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    PaddingConfig config = i->attrs().padding_config;
    bool cleared = false;
    for (int64_t d = 0; d < i->shape().rank(); ++d) {
      if (config.dimensions[d].interior_padding > 0 && Op(i, 0)->shape().dimensions(d) == 1) {
        config.dimensions[d].interior_padding = 0;
        cleared = true;
      }
    }
    if (!cleared) return nullptr;
    return ctx.Add(HloInstruction::CreatePad(i->shape(), Op(i, 0), Op(i, 1), config));
  }));
  // pad(A, v) with no edge padding => A
  rules.push_back(R(O::kPad, "pad(A) with zero padding => A", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    for (const PaddingDimension& p : i->attrs().padding_config.dimensions) {
      if (p.edge_padding_low != 0 || p.edge_padding_high != 0) return nullptr;
    }
    if (!i->control_predecessors().empty()) return nullptr;
    return ctx.SameShape(i->shape(), Op(i, 0)->shape()) ? Op(i, 0) : nullptr;
  }));
  // pad(broadcast(A)) padding only dims A fills => broadcast(pad(broadcast(A)))
  // over the padded dims only
  rules.push_back(R(O::kPad, "pad(broadcast) => broadcast(pad)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    const PaddingConfig& pc = i->attrs().padding_config;
    std::vector<int64_t> padded;
    for (int64_t d = 0; d < static_cast<int64_t>(pc.dimensions.size()); ++d) {
      const PaddingDimension& p = pc.dimensions[d];
      if (p.edge_padding_low != 0 || p.edge_padding_high != 0 || p.interior_padding != 0) padded.push_back(d);
    }
    HloInstruction* b = Op(i, 0);
    if (padded.size() >= pc.dimensions.size() || !Is(b, O::kBroadcast) || b->user_count() != 1 ||
        b->operand(0)->shape().rank() > static_cast<int64_t>(padded.size())) {
      return nullptr;
    }
    std::vector<int64_t> bdims;
    for (int64_t bd : b->dimensions()) {
      auto it = std::find(padded.begin(), padded.end(), bd);
      if (it == padded.end()) return nullptr;
      bdims.push_back(it - padded.begin());
    }
    std::vector<int64_t> bshape, pshape;
    PaddingConfig config;
    for (int64_t d : padded) {
      bshape.push_back(b->shape().dimensions(d));
      pshape.push_back(i->shape().dimensions(d));
      config.dimensions.push_back(pc.dimensions[d]);
    }
    HloInstruction* nb = ctx.Add(HloInstruction::CreateBroadcast(Shape(b->shape().element_type(), bshape), Op(b, 0), bdims));
    HloInstruction* np = ctx.Add(HloInstruction::CreatePad(Shape(i->shape().element_type(), pshape), nb, Op(i, 1), config));
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), np, padded));
  }));
  // pad with negative edges => slice(pad with the non-negative edges)
  rules.push_back(R(O::kPad, "negative pad => slice(pad)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    PaddingConfig config = i->attrs().padding_config;
    bool negative = false;
    for (PaddingDimension& p : config.dimensions) {
      if (p.edge_padding_low < 0 || p.edge_padding_high < 0) negative = true;
      p.edge_padding_low = std::max<int64_t>(p.edge_padding_low, 0);
      p.edge_padding_high = std::max<int64_t>(p.edge_padding_high, 0);
    }
    if (!negative) return nullptr;
    const Shape& in = Op(i, 0)->shape();
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < in.rank(); ++d) {
      const PaddingDimension& p = config.dimensions[d];
      int64_t n = in.dimensions(d);
      dims.push_back(n == 0 ? p.edge_padding_low + p.edge_padding_high
                            : p.edge_padding_low + p.edge_padding_high + n + (n - 1) * p.interior_padding);
    }
    Shape padded_shape(i->shape().element_type(), dims);
    if (i->shape().has_layout()) padded_shape.set_layout(i->shape().layout());
    HloInstruction* pad = ctx.Add(HloInstruction::CreatePad(padded_shape, Op(i, 0), Op(i, 1), config));
    std::vector<SliceDimension> sl;
    for (int64_t d = 0; d < in.rank(); ++d) {
      const PaddingDimension& p = i->attrs().padding_config.dimensions[d];
      int64_t start = p.edge_padding_low < 0 ? -p.edge_padding_low : 0;
      int64_t end = dims[d] + (p.edge_padding_high < 0 ? p.edge_padding_high : 0);
      sl.push_back({start, end, 1});
    }
    return ctx.Add(HloInstruction::CreateSlice(i->shape(), pad, sl));
  }));
}

bool PlainLayout(const Shape& s);

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

// XLA's ShapeUtil::DimensionsUnmodifiedByReshape.
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

namespace {

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

std::vector<Rule> ShapeRules() {
  std::vector<Rule> rules;
  ConstantRules(rules);
  BroadcastRules(rules);
  ReshapeRules(rules);
  ReshapeBitcastRule(rules);
  TransposeRules(rules);
  TransposeReshapeToConcatRule(rules);
  TransposeOfBroadcastRule(rules);
  SliceRules(rules);
  DynamicSliceRules(rules);
  DynamicUpdateSliceRules(rules);
  ReverseConcatPadRules(rules);
  CopyBitcastMiscRules(rules);
  return rules;
}

}  // namespace passlab::algsimp
