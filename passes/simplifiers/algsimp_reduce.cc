// AlgebraicSimplifier rules over reductions: reduce, reduce-window and the
// reducing collectives of broadcast constants, in the order XLA's
// HandleReduce, HandleReduceWindow, HandleAllGather, HandleAllToAll and
// HandleAllReduceOrReduceScatter try them
// (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc).
#include <algorithm>
#include <numeric>

#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

using O = HloOpcode;

// The reducer applies `op` to its two parameters (either order).
bool ReducerIs(const HloInstruction* reduce, HloOpcode op) {
  std::optional<HloOpcode> r = ScalarReducerOpcode(reduce->to_apply());
  return r.has_value() && *r == op;
}

Shape DeleteDimensions(const Shape& s, const std::vector<int64_t>& dims) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < s.rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(s.dimensions(d));
  }
  return Shape(s.element_type(), kept);
}

// Single-input reduce: operand 0 the input, operand 1 the init value.
bool IsSingleReduce(const HloInstruction* r) { return r->operand_count() == 2 && !r->shape().IsTuple(); }

// A two-input (value, iota index) reduce whose reducer keeps the larger (or
// smaller) value and its index: XLA's MatchArgMax / MatchArgMin, by the
// structure of the reducer's root tuple(select(.., p0, p2), select(.., p1, p3)).
bool IsArgMinMaxReduce(const HloInstruction* r) {
  if (r->operand_count() != 4 || !r->shape().IsTuple() || !Is(r->operand(1), O::kIota)) return false;
  const HloComputation* c = r->to_apply();
  if (c->num_parameters() != 4) return false;
  const HloInstruction* root = c->root_instruction();
  if (!Is(root, O::kTuple) || root->operand_count() != 2) return false;
  const HloInstruction* v = root->operand(0);
  const HloInstruction* ix = root->operand(1);
  if (!Is(v, O::kSelect) || !Is(ix, O::kSelect)) return false;
  if (v->operand(1) != c->parameter_instruction(0) || v->operand(2) != c->parameter_instruction(2)) return false;
  if (ix->operand(1) != c->parameter_instruction(1) || ix->operand(2) != c->parameter_instruction(3)) return false;
  const HloInstruction* pred = v->operand(0);
  while (Is(pred, O::kOr)) pred = pred->operand(0);
  if (!Is(pred, O::kCompare) || pred->operand(0) != c->parameter_instruction(0) ||
      pred->operand(1) != c->parameter_instruction(2)) {
    return false;
  }
  ComparisonDirection d = pred->comparison_direction();
  return d == ComparisonDirection::kGt || d == ComparisonDirection::kLt || d == ComparisonDirection::kGe ||
         d == ComparisonDirection::kLe;
}

// The comparison an argmax/argmin reducer keeps values by (Gt: argmax).
ComparisonDirection ArgMinMaxDirection(const HloInstruction* r) {
  const HloInstruction* pred = r->to_apply()->root_instruction()->operand(0)->operand(0);
  while (Is(pred, O::kOr)) pred = pred->operand(0);
  return pred->comparison_direction();
}

// ---------------------------------------------------------------- reduce
void ReduceRulesInto(std::vector<Rule>& rules) {
  // reduce of (or to) a zero-element array => broadcast(init)
  rules.push_back(R(O::kReduce, "reduce of zero elements => broadcast(init)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    int64_t n = i->operand_count() / 2;
    const Shape& result = i->shape().IsTuple() ? i->shape().tuple_shapes(0) : i->shape();
    if (Op(i, 0)->shape().element_count() != 0 && result.element_count() != 0) return nullptr;
    if (!i->shape().IsTuple()) return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(i, 1), {}));
    std::vector<HloInstruction*> inits;
    for (int64_t k = 0; k < n; ++k) {
      inits.push_back(ctx.Add(HloInstruction::CreateBroadcast(i->shape().tuple_shapes(k), Op(i, n + k), {})));
    }
    return ctx.Add(HloInstruction::CreateTuple(inits));
  }));
  // reduce that keeps the element count => reshape
  rules.push_back(R(O::kReduce, "reduce of size-1 dims => reshape", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    int64_t n = i->operand_count() / 2;
    const Shape& result = i->shape().IsTuple() ? i->shape().tuple_shapes(0) : i->shape();
    if (result.element_count() != Op(i, 0)->shape().element_count() || ctx.options().is_layout_sensitive) return nullptr;
    if (!i->shape().IsTuple()) return ctx.Add(HloInstruction::CreateReshape(i->shape(), Op(i, 0)));
    std::vector<HloInstruction*> parts;
    for (int64_t k = 0; k < n; ++k) parts.push_back(ctx.Add(HloInstruction::CreateReshape(i->shape().tuple_shapes(k), Op(i, k))));
    return ctx.Add(HloInstruction::CreateTuple(parts));
  }));
  // sum(-A) => -sum(A) (floats, init 0)
  rules.push_back(R(O::kReduce, "sum(-A) => -sum(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (ctx.options().is_layout_sensitive || !IsSingleReduce(i) || !IsFloat(i) || !Is(Op(i, 0), O::kNegate) ||
        !IsEffectiveScalarConstant(Op(i, 1)) || !IsAll(Op(i, 1), 0) || !ReducerIs(i, O::kAdd)) {
      return nullptr;
    }
    HloInstruction* r = ctx.Add(i->CloneWithNewOperands(i->shape(), {Op(Op(i, 0), 0), Op(i, 1)}));
    return ctx.Add(HloInstruction::CreateUnary(i->shape(), O::kNegate, r));
  }));
  // argmax/argmin over a broadcast constant => (broadcast(c), broadcast(0))
  rules.push_back(R(O::kReduce, "argmax(broadcast(c)) => (c, 0)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (ctx.options().is_layout_sensitive || !IsArgMinMaxReduce(i)) return nullptr;
    HloInstruction* arg = Op(i, 0);
    if (!Is(arg, O::kBroadcast) || !Is(Op(arg, 0), O::kConstant) || !arg->operand(0)->shape().IsScalar()) return nullptr;
    if (!Contains(i->dimensions(), Op(i, 1)->iota_dimension())) return nullptr;
    const Shape& result = i->shape().tuple_shapes(0);
    PrimitiveType idx_type = i->shape().tuple_shapes(1).element_type();
    HloInstruction* val = ctx.Add(HloInstruction::CreateBroadcast(result, Op(arg, 0), {}));
    Literal zero(Shape::Scalar(idx_type));
    HloInstruction* idx_c = ctx.Add(HloInstruction::CreateConstant(std::move(zero)));
    Shape idx_shape = result;
    idx_shape.set_element_type(idx_type);
    HloInstruction* idx = ctx.Add(HloInstruction::CreateBroadcast(idx_shape, idx_c, {}));
    return ctx.Add(HloInstruction::CreateTuple({val, idx}));
  }));
  // sum(dot(A, B)) over free dims => dot(sum(A), sum(B)) (raise_slice_and_reduce_through_dot)
  rules.push_back(R(O::kReduce, "sum(dot(A,B)) => dot(sum(A),sum(B))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* dot = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !ctx.options().raise_slice_and_reduce_through_dot || !IsSingleReduce(i) ||
        dot->opcode() != O::kDot || !IsEffectiveScalarConstant(Op(i, 1)) || !IsAll(Op(i, 1), 0) || !ReducerIs(i, O::kAdd) ||
        !dot->attrs().dot_dnums.lhs_batch_dimensions.empty() || !dot->attrs().sparsity.empty()) {
      return nullptr;
    }
    HloInstruction* a = Op(dot, 0);
    HloInstruction* b = Op(dot, 1);
    const DotDimensionNumbers& ab = dot->attrs().dot_dnums;
    auto [map_ab_a, map_ab_b] = FromDotMaps(dot, a->shape(), b->shape());
    std::vector<int64_t> ra, rb;
    for (int64_t d : i->dimensions()) {
      if (map_ab_a[d] != -1) ra.push_back(map_ab_a[d]);
      if (map_ab_b[d] != -1) rb.push_back(map_ab_b[d]);
    }
    std::sort(ra.begin(), ra.end());
    std::sort(rb.begin(), rb.end());
    HloInstruction* sa = ctx.Add(HloInstruction::CreateReduce(DeleteDimensions(a->shape(), ra), {a}, {Op(i, 1)}, ra, i->to_apply()));
    HloInstruction* sb = ctx.Add(HloInstruction::CreateReduce(DeleteDimensions(b->shape(), rb), {b}, {Op(i, 1)}, rb, i->to_apply()));
    auto remap = [](const std::vector<int64_t>& contracting, const std::vector<int64_t>& reduced, int64_t rank) {
      std::vector<int64_t> out;
      int64_t idx = 0;
      for (int64_t k = 0; k < rank; ++k) {
        if (Contains(reduced, k)) continue;
        if (Contains(contracting, k)) out.push_back(idx);
        ++idx;
      }
      return out;
    };
    DotDimensionNumbers nd;
    nd.lhs_contracting_dimensions = remap(ab.lhs_contracting_dimensions, ra, a->shape().rank());
    nd.rhs_contracting_dimensions = remap(ab.rhs_contracting_dimensions, rb, b->shape().rank());
    HloInstruction* new_dot = MakeDot(sa, sb, nd, i, ctx);
    if (new_dot == nullptr) return nullptr;
    auto reduce_flops = [](const HloInstruction* r) {
      int64_t prod = 1;
      for (int64_t d : r->dimensions()) prod *= r->operand(0)->shape().dimensions(d);
      return r->shape().element_count() * (prod - 1);
    };
    int64_t old_flops = DotFlops(a->shape(), dot->shape(), ab) + reduce_flops(i);
    int64_t new_flops = reduce_flops(sa) + reduce_flops(sb) + DotFlops(sa->shape(), new_dot->shape(), nd);
    if (!(old_flops / static_cast<double>(new_flops) > ctx.options().raise_slice_and_reduce_through_dot_threshold)) {
      return nullptr;
    }
    return new_dot;
  }));
  // reduce(transpose(A)) => transpose(reduce(A)) (or just reduce(A))
  rules.push_back(R(O::kReduce, "reduce(transpose(A)) => transpose(reduce(A))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* arg = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !IsSingleReduce(i) || !Is(arg, O::kTranspose)) return nullptr;
    bool all_reduce_users = true;
    for (const HloInstruction* u : arg->users()) all_reduce_users &= Is(u, O::kReduce);
    if (!ctx.options().unconditionally_simplify_reduce_of_transpose_or_reshape && i->shape().rank() >= 2 &&
        arg->user_count() != 1 && !all_reduce_users) {
      return nullptr;
    }
    const std::vector<int64_t>& perm = arg->dimensions();
    std::vector<int64_t> dims;
    for (int64_t d : i->dimensions()) dims.push_back(perm[d]);
    HloInstruction* a = Op(arg, 0);
    HloInstruction* r = ctx.Add(HloInstruction::CreateReduce(DeleteDimensions(a->shape(), dims), {a}, {Op(i, 1)}, dims, i->to_apply()));
    std::vector<int64_t> tperm;
    for (int64_t d : perm) {
      if (!Contains(dims, d)) tperm.push_back(d);
    }
    if (std::is_sorted(tperm.begin(), tperm.end())) return r;
    for (int64_t& d : tperm) {
      int64_t old = d;
      for (int64_t rd : dims) d -= old > rd ? 1 : 0;
    }
    return ctx.Add(HloInstruction::CreateTranspose(i->shape(), r, tperm));
  }));
  // reduce(reduce(A)) with the same init and reducer => one reduce
  rules.push_back(R(O::kReduce, "reduce(reduce(A)) => reduce(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* arg = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !IsSingleReduce(i) || !Is(arg, O::kReduce) || !IsSingleReduce(arg)) return nullptr;
    HloInstruction* init = Op(i, 1);
    HloInstruction* init2 = Op(arg, 1);
    bool same_init = init == init2 || (Is(init, O::kConstant) && Is(init2, O::kConstant) && init->shape() == init2->shape() &&
                                       init->literal() == init2->literal());
    std::optional<HloOpcode> a = ScalarReducerOpcode(i->to_apply());
    std::optional<HloOpcode> b = ScalarReducerOpcode(arg->to_apply());
    bool same_fn = a && b && *a == *b &&
                   (*a == O::kAdd || *a == O::kMultiply || *a == O::kAnd || *a == O::kOr || *a == O::kMaximum ||
                    *a == O::kMinimum);
    if (!same_init || !same_fn) return nullptr;
    std::vector<int64_t> arg_dims = arg->dimensions(), red_dims = i->dimensions();
    std::sort(arg_dims.begin(), arg_dims.end());
    std::sort(red_dims.begin(), red_dims.end());
    for (int64_t ad : arg_dims) {
      for (int64_t& d : red_dims) d += d >= ad ? 1 : 0;
    }
    std::vector<int64_t> dims;
    std::merge(arg_dims.begin(), arg_dims.end(), red_dims.begin(), red_dims.end(), std::back_inserter(dims));
    return ctx.Add(HloInstruction::CreateReduce(i->shape(), {Op(arg, 0)}, {init}, dims, i->to_apply()));
  }));
  // reduce(reshape(A)) => reduce(A) or reshape(reduce(A)) when the kept (or
  // reduced) dims survive the reshape
  rules.push_back(R(O::kReduce, "reduce(reshape(A)) => reduce(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* arg = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !IsSingleReduce(i) || !ctx.options().enable_reduce_of_reshape || !Is(arg, O::kReshape)) {
      return nullptr;
    }
    const Shape& in = arg->operand(0)->shape();
    std::vector<std::pair<int64_t, int64_t>> unmodified = DimensionsUnmodifiedByReshape(in, arg->shape());
    int64_t rank = arg->shape().rank();
    std::vector<bool> in_output(rank, true), is_unmodified(rank, false);
    for (int64_t d : i->dimensions()) in_output[d] = false;
    for (auto [x, y] : unmodified) is_unmodified[y] = true;
    bool movable = true;
    for (int64_t d = 0; d < rank; ++d) movable &= !(in_output[d] && !is_unmodified[d]);
    if (movable) {
      std::vector<int64_t> keep;
      for (auto [x, y] : unmodified) {
        if (in_output[y]) keep.push_back(x);
      }
      std::vector<int64_t> dims;
      for (int64_t d = 0; d < in.rank(); ++d) {
        if (!Contains(keep, d)) dims.push_back(d);
      }
      return ctx.Add(HloInstruction::CreateReduce(i->shape(), {Op(arg, 0)}, {Op(i, 1)}, dims, i->to_apply()));
    }
    if (arg->user_count() != 1 && !ctx.options().unconditionally_simplify_reduce_of_transpose_or_reshape) return nullptr;
    std::vector<int64_t> dims;
    for (int64_t d : i->dimensions()) {
      if (!is_unmodified[d]) return nullptr;
      for (auto [x, y] : unmodified) {
        if (y == d) dims.push_back(x);
      }
    }
    HloInstruction* r = ctx.Add(HloInstruction::CreateReduce(DeleteDimensions(in, dims), {Op(arg, 0)}, {Op(i, 1)}, dims, i->to_apply()));
    return ctx.Add(HloInstruction::CreateReshape(i->shape(), r));
  }));
  // reduce(concatenate(A, B)) over the concat dim => map(reduce(A), reduce(B))
  rules.push_back(R(O::kReduce, "reduce(concat) => map(reduce, reduce)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* arg = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !IsSingleReduce(i) || !Is(arg, O::kConcatenate) ||
        !Contains(i->dimensions(), arg->concatenate_dimension())) {
      return nullptr;
    }
    bool same_shapes = true;
    for (const HloInstruction* op : arg->operands()) same_shapes &= op->shape().Compatible(arg->operand(0)->shape());
    if (!ctx.options().enable_unconditional_reduce_of_concat_replacement && !same_shapes && i->shape().rank() != 0) {
      return nullptr;
    }
    HloInstruction* acc = nullptr;
    for (HloInstruction* op : arg->operands()) {
      HloInstruction* r = ctx.Add(HloInstruction::CreateReduce(i->shape(), {op}, {Op(i, 1)}, i->dimensions(), i->to_apply()));
      acc = acc == nullptr ? r : ctx.Add(HloInstruction::CreateMap(i->shape(), {acc, r}, i->to_apply()));
    }
    return acc;
  }));
  // sum over batch dims of dot(A, B) => dot contracting those dims (then sum the rest)
  rules.push_back(R(O::kReduce, "sum(batch dot) => dot contracting the batch dims", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* dot = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !IsSingleReduce(i) || !ctx.options().enable_dot_strength_reduction ||
        !ctx.options().supports_non_canonical_dots ||
        dot->opcode() != O::kDot || dot->user_count() != 1 || !ReducerIs(i, O::kAdd) || !dot->attrs().sparsity.empty()) {
      return nullptr;
    }
    const DotDimensionNumbers& d = dot->attrs().dot_dnums;
    int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());
    bool any = false;
    for (int64_t r : i->dimensions()) any |= r < nb;
    if (!any) return nullptr;
    DotDimensionNumbers nd = d;
    nd.lhs_batch_dimensions.clear();
    nd.rhs_batch_dimensions.clear();
    int64_t removed = 0;
    for (int64_t k = 0; k < nb; ++k) {
      if (Contains(i->dimensions(), k)) {
        nd.rhs_contracting_dimensions.push_back(d.rhs_batch_dimensions[k]);
        nd.lhs_contracting_dimensions.push_back(d.lhs_batch_dimensions[k]);
        ++removed;
      } else {
        nd.rhs_batch_dimensions.push_back(d.rhs_batch_dimensions[k]);
        nd.lhs_batch_dimensions.push_back(d.lhs_batch_dimensions[k]);
      }
    }
    std::vector<int64_t> rest;
    for (int64_t r : i->dimensions()) {
      if (r >= nb) rest.push_back(r - removed);
    }
    HloInstruction* new_dot = MakeDot(Op(dot, 0), Op(dot, 1), nd, dot, ctx);
    if (new_dot == nullptr) return nullptr;
    if (rest.empty()) return new_dot;
    std::sort(rest.begin(), rest.end());
    PrimitiveType t = new_dot->shape().element_type();
    return ctx.Add(HloInstruction::CreateReduce(DeleteDimensions(new_dot->shape(), rest), {new_dot}, {Op(i, 1)}, rest,
                                                ctx.ScalarReducer(O::kAdd, t)));
  }));
  // max(A) (init -inf) next to an argmax of A over the same dims => the
  // argmax's value output (and min/+inf/argmin)
  rules.push_back(R(O::kReduce, "max(A) beside argmax(A) => gte(argmax, 0)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (ctx.options().is_layout_sensitive || !IsSingleReduce(i) || !IsEffectiveScalarConstant(Op(i, 1))) return nullptr;
    bool is_max = ReducerIs(i, O::kMaximum);
    bool is_min = ReducerIs(i, O::kMinimum);
    if (!is_max && !is_min) return nullptr;
    if (!(is_max ? IsAllMinValue(Op(i, 1), Op(i, 1)->shape().element_type())
                 : IsAllMaxValue(Op(i, 1), Op(i, 1)->shape().element_type()))) {
      return nullptr;
    }
    HloInstruction* arg = Op(i, 0);
    for (HloInstruction* user : arg->users()) {
      if (user == i || user->opcode() != O::kReduce || user->operand(0) != arg || !IsArgMinMaxReduce(user) ||
          user->dimensions() != i->dimensions()) {
        continue;
      }
      ComparisonDirection d = ArgMinMaxDirection(user);
      bool user_is_max = d == ComparisonDirection::kGt || d == ComparisonDirection::kGe;
      if (user_is_max != is_max) continue;
      return ctx.Add(HloInstruction::CreateGetTupleElement(user, 0));
    }
    return nullptr;
  }));
  // max/min/and/or over all of broadcast(s) => s op init
  rules.push_back(R(O::kReduce, "reduce(broadcast(s)) => s op init", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* arg = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !IsSingleReduce(i) || !Is(arg, O::kBroadcast)) return nullptr;
    std::optional<HloOpcode> op = ScalarReducerOpcode(i->to_apply());
    if (!op || (*op != O::kMaximum && *op != O::kMinimum && *op != O::kAnd && *op != O::kOr)) return nullptr;
    if (!arg->operand(0)->shape().IsScalar() || static_cast<int64_t>(i->dimensions().size()) != arg->shape().rank()) return nullptr;
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), *op, Op(arg, 0), Op(i, 1)));
  }));
  // reduce(broadcast(A)) over A's own dims => broadcast(reduce(A))
  rules.push_back(R(O::kReduce, "reduce(broadcast(A)) => broadcast(reduce(A))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* arg = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !IsSingleReduce(i) || !Is(arg, O::kBroadcast)) return nullptr;
    const std::vector<int64_t>& bdims = arg->dimensions();
    std::vector<int64_t> dims;
    for (int64_t d : i->dimensions()) {
      auto it = std::find(bdims.begin(), bdims.end(), d);
      if (it == bdims.end()) return nullptr;
      dims.push_back(it - bdims.begin());
    }
    HloInstruction* a = Op(arg, 0);
    HloInstruction* r = ctx.Add(HloInstruction::CreateReduce(DeleteDimensions(a->shape(), dims), {a}, {Op(i, 1)}, dims, i->to_apply()));
    std::vector<int64_t> nb;
    for (int64_t d = 0; d < a->shape().rank(); ++d) {
      if (Contains(dims, d)) continue;
      int64_t bd = bdims[d];
      int64_t shift = 0;
      for (int64_t rd : i->dimensions()) shift += rd < bd ? 1 : 0;
      nb.push_back(bd - shift);
    }
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), r, nb));
  }));
  // sum over broadcast-added dims of broadcast(A) => broadcast(init + A * n)
  rules.push_back(R(O::kReduce, "sum(broadcast(A)) => broadcast(init+A*n)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* arg = Op(i, 0);
    if (!IsSingleReduce(i) || !Is(arg, O::kBroadcast) || !ReducerIs(i, O::kAdd)) return nullptr;
    if (!std::is_sorted(arg->dimensions().begin(), arg->dimensions().end())) return nullptr;
    int64_t prod = 1;
    std::vector<int64_t> kept_dims, nb;
    int64_t removed = 0;
    for (int64_t d = 0; d < arg->shape().rank(); ++d) {
      bool added = !Contains(arg->dimensions(), d);
      bool reduced = Contains(i->dimensions(), d);
      if (reduced && !added) return nullptr;
      if (reduced) {
        prod *= arg->shape().dimensions(d);
        ++removed;
        continue;
      }
      kept_dims.push_back(arg->shape().dimensions(d));
      if (!added) nb.push_back(d - removed);
    }
    HloInstruction* a = Op(arg, 0);
    HloInstruction* n = ctx.ScalarLike(a, static_cast<double>(prod));
    HloInstruction* scaled = ctx.Add(HloInstruction::CreateBinary(a->shape(), O::kMultiply, a, n));
    HloInstruction* init = Op(i, 1);
    HloInstruction* init_b = scaled->shape().IsScalar() ? init : ctx.Add(HloInstruction::CreateBroadcast(scaled->shape(), init, {}));
    HloInstruction* sum = ctx.Add(HloInstruction::CreateBinary(scaled->shape(), O::kAdd, init_b, scaled));
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), sum, nb));
  }));
}

// ---------------------------------------------------------------- reduce-window
bool AllWindowDims(const Window& w, const std::function<bool(const WindowDimension&)>& f) {
  return std::all_of(w.dimensions.begin(), w.dimensions.end(), f);
}

void ReduceWindowRules(std::vector<Rule>& rules) {
  // reduce-window of (or to) zero elements => broadcast(init)
  rules.push_back(R(O::kReduceWindow, "reduce-window of zero elements => broadcast(init)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    int64_t n = i->operand_count() / 2;
    const Shape& out0 = i->shape().IsTuple() ? i->shape().tuple_shapes(0) : i->shape();
    if (Op(i, 0)->shape().element_count() != 0 && out0.element_count() != 0) return nullptr;
    if (!i->shape().IsTuple()) return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(i, 1), {}));
    std::vector<HloInstruction*> inits;
    for (int64_t k = 0; k < n; ++k) inits.push_back(ctx.Add(HloInstruction::CreateBroadcast(i->shape().tuple_shapes(k), Op(i, n + k), {})));
    return ctx.Add(HloInstruction::CreateTuple(inits));
  }));
  // reduce-window of scalars => the inputs
  rules.push_back(R(O::kReduceWindow, "reduce-window of scalars => input", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    int64_t n = i->operand_count() / 2;
    if (!Op(i, 0)->shape().IsScalar()) return nullptr;
    if (!i->shape().IsTuple()) return Op(i, 0);
    if (!Is(i->to_apply()->root_instruction(), O::kTuple)) return nullptr;
    std::vector<HloInstruction*> ins(i->operands().begin(), i->operands().begin() + n);
    return ctx.Add(HloInstruction::CreateTuple(ins));
  }));
  // Cumulative sum of broadcast(c) (through reshape/convert/slice/copy) => c * (iota + 1)
  rules.push_back(R(O::kReduceWindow, "cumsum(broadcast(c)) => c*(iota+1)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->shape().IsTuple()) return nullptr;
    HloInstruction* operand = Op(i, 0);
    HloInstruction* real = operand;
    while (Is(real, O::kReshape) || Is(real, O::kBitcast) || Is(real, O::kConvert) || Is(real, O::kSlice) || Is(real, O::kCopy)) {
      real = Op(real, 0);
    }
    HloInstruction* init = Op(i, 1);
    if (!Is(real, O::kBroadcast) || !real->operand(0)->shape().IsScalar() || !IsEffectiveScalarConstant(init) ||
        !init->shape().IsScalar() || !IsAll(init, 0) || !ReducerIs(i, O::kAdd)) {
      return nullptr;
    }
    HloInstruction* val = Op(real, 0);
    while (Is(val, O::kConvert) || Is(val, O::kReshape) || Is(val, O::kBitcast)) val = Op(val, 0);
    if (!Is(val, O::kConstant) || val->literal().elided()) return nullptr;
    const Window& w = i->window();
    int64_t dim = -1;
    for (int64_t d = 0; d < static_cast<int64_t>(w.dimensions.size()); ++d) {
      const WindowDimension& wd = w.dimensions[d];
      if (wd.size > 1) {
        if (dim != -1) return nullptr;
        dim = d;
        if (wd.size != operand->shape().dimensions(d) || wd.stride != 1 || wd.padding_low != wd.size - 1 ||
            wd.padding_high != 0 || wd.window_dilation != 1 || wd.base_dilation != 1 || wd.window_reversal) {
          return nullptr;
        }
      } else if (wd.padding_low != 0 || wd.padding_high != 0 || wd.base_dilation != 1) {
        return nullptr;
      }
    }
    if (dim == -1) return nullptr;
    PrimitiveType t = i->shape().element_type();
    Literal scalar(Shape::Scalar(val->shape().element_type()));
    if (IsComplexType(scalar.shape().element_type())) {
      scalar.SetComplex(0, val->literal().GetComplex(0));
    } else {
      scalar.SetBits(0, val->literal().GetBits(0));
    }
    absl::StatusOr<Literal> converted = scalar.Convert(t);
    if (!converted.ok()) return nullptr;
    HloInstruction* c = ctx.Add(HloInstruction::CreateConstant(std::move(*converted)));
    PrimitiveType iota_type = t == PrimitiveType::kS64 ? PrimitiveType::kS64 : PrimitiveType::kS32;
    Shape iota_shape = i->shape();
    iota_shape.set_element_type(iota_type);
    HloInstruction* iota = ctx.Add(HloInstruction::CreateIota(iota_shape, dim));
    HloInstruction* count = ctx.Add(HloInstruction::CreateBinary(iota_shape, O::kAdd, iota, ctx.Constant(iota_shape, 1)));
    if (t != iota_type) count = ctx.Add(HloInstruction::CreateConvert(i->shape(), count));
    HloInstruction* c_b = ctx.Add(HloInstruction::CreateBroadcast(i->shape(), c, {}));
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, c_b, count));
  }));
  // reduce-window with 1x...x1 windows => A op broadcast(init) (then pad)
  rules.push_back(R(O::kReduceWindow, "trivial reduce-window => elementwise", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->shape().IsTuple()) return nullptr;
    const Window& w = i->window();
    if (!AllWindowDims(w, [](const WindowDimension& d) {
          return d.size == 1 && d.stride == 1 && d.window_dilation == 1 && d.base_dilation == 1 && !d.window_reversal;
        })) {
      return nullptr;
    }
    std::optional<HloOpcode> op = ScalarReducerOpcode(i->to_apply());
    if (!op || (*op != O::kAdd && *op != O::kMinimum && *op != O::kMaximum)) return nullptr;
    HloInstruction* a = Op(i, 0);
    HloInstruction* init_b = ctx.Add(HloInstruction::CreateBroadcast(a->shape(), Op(i, 1), {}));
    HloInstruction* result = ctx.Add(HloInstruction::CreateBinary(a->shape(), *op, a, init_b));
    bool padded = !AllWindowDims(w, [](const WindowDimension& d) { return d.padding_low <= 0 && d.padding_high <= 0; });
    if (!padded) return result;
    PaddingConfig config;
    for (const WindowDimension& d : w.dimensions) config.dimensions.push_back({d.padding_low, d.padding_high, 0});
    return ctx.Add(HloInstruction::CreatePad(i->shape(), result, Op(i, 1), config));
  }));
  // reduce-window whose windows cover whole dims => reshape(reduce)
  rules.push_back(R(O::kReduceWindow, "reduce-window of whole dims => reduce", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->shape().IsTuple() || !ctx.options().enable_window_reduce_to_reduce_replacement) return nullptr;
    const Window& w = i->window();
    if (!AllWindowDims(w, [](const WindowDimension& d) {
          return d.stride == 1 && d.window_dilation == 1 && d.base_dilation == 1 && d.padding_low == 0 && d.padding_high == 0;
        })) {
      return nullptr;
    }
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < static_cast<int64_t>(w.dimensions.size()); ++d) {
      if (w.dimensions[d].size == 1) continue;
      if (i->shape().dimensions(d) != 1) return nullptr;
      dims.push_back(d);
    }
    if (dims.empty()) return nullptr;
    HloInstruction* r = ctx.Add(HloInstruction::CreateReduce(DeleteDimensions(i->shape(), dims), {Op(i, 0)}, {Op(i, 1)}, dims, i->to_apply()));
    return ctx.Add(HloInstruction::CreateReshape(i->shape(), r));
  }));
  // reduce-window(pad(A, v)) with init v => reduce-window(A) with the padding
  // folded into the window (or a broadcast when it only broadcasts)
  rules.push_back(R(O::kReduceWindow, "reduce-window(pad(A)) => reduce-window(A)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (i->shape().IsTuple()) return nullptr;
    HloInstruction* operand = Op(i, 0);
    HloInstruction* pad = nullptr;
    HloInstruction* convert = nullptr;
    const Window& w = i->window();
    if (Is(operand, O::kPad)) {
      pad = operand;
    } else if (Is(operand, O::kConvert) && Is(Op(operand, 0), O::kPad)) {
      convert = operand;
      pad = Op(operand, 0);
      std::vector<int64_t> nontrivial;
      for (int64_t d = 0; d < static_cast<int64_t>(w.dimensions.size()); ++d) {
        const WindowDimension& wd = w.dimensions[d];
        if (!(wd.size == 1 && wd.stride == 1 && wd.padding_low == 0 && wd.padding_high == 0 && wd.window_dilation == 1 &&
              wd.base_dilation == 1 && !wd.window_reversal)) {
          nontrivial.push_back(d);
        }
      }
      if (nontrivial.size() == 1) {
        int64_t d = nontrivial[0];
        const PaddingDimension& pd = pad->attrs().padding_config.dimensions[d];
        double ratio = static_cast<double>(pd.edge_padding_high + pd.edge_padding_low) / operand->shape().dimensions(d);
        if (ratio < 0.1) return nullptr;
      }
    } else {
      return nullptr;
    }
    const PaddingConfig& pc = pad->attrs().padding_config;
    bool interior = false;
    for (const PaddingDimension& pd : pc.dimensions) interior |= pd.interior_padding != 0;
    bool base_dilation = !AllWindowDims(w, [](const WindowDimension& d) { return d.base_dilation == 1; });
    if (interior && base_dilation) return nullptr;
    HloInstruction* pad_value = Op(pad, 1);
    HloInstruction* init = Op(i, 1);
    if (pad_value != init) {
      if (!Is(pad_value, O::kConstant) || !Is(init, O::kConstant) || pad_value->literal().elided() || init->literal().elided()) {
        return nullptr;
      }
      bool same = pad_value->literal() == init->literal();
      if (!same) {
        absl::StatusOr<Literal> conv = pad_value->literal().Convert(init->shape().element_type());
        same = conv.ok() && *conv == init->literal();
      }
      if (!same) return nullptr;
    }
    HloInstruction* a = Op(pad, 0);
    HloInstruction* new_operand = a;
    if (convert != nullptr) {
      Shape s = a->shape();
      s.set_element_type(convert->shape().element_type());
      new_operand = ctx.Add(HloInstruction::CreateConvert(s, a));
    }
    // Effective broadcast: symmetric edge padding of 1-sized dims that the
    // windows cover.
    bool broadcast = AllWindowDims(w, [](const WindowDimension& d) { return d.stride == 1; }) && !interior;
    for (int64_t d = 0; broadcast && d < static_cast<int64_t>(pc.dimensions.size()); ++d) {
      const PaddingDimension& pd = pc.dimensions[d];
      bool has = pd.edge_padding_low != 0 || pd.edge_padding_high != 0;
      if (pd.edge_padding_low != pd.edge_padding_high) broadcast = false;
      if (has && a->shape().dimensions(d) != 1) broadcast = false;
      if (has && w.dimensions[d].size < pd.edge_padding_low + 1) broadcast = false;
      if (a->shape().dimensions(d) != 1 && w.dimensions[d].size != 1) broadcast = false;
    }
    if (broadcast) {
      // XLA's CreateBroadcastSequence: drop the 1-sized dims, then broadcast.
      std::vector<int64_t> kept, bdims;
      for (int64_t d = 0; d < new_operand->shape().rank(); ++d) {
        if (new_operand->shape().dimensions(d) == 1) continue;
        kept.push_back(new_operand->shape().dimensions(d));
        bdims.push_back(d);
      }
      HloInstruction* src = new_operand;
      if (static_cast<int64_t>(kept.size()) != new_operand->shape().rank()) {
        src = ctx.Add(HloInstruction::CreateReshape(Shape(new_operand->shape().element_type(), kept), new_operand));
      }
      return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), src, bdims));
    }
    Window nw = w;
    for (size_t d = 0; d < nw.dimensions.size(); ++d) {
      const PaddingDimension& pd = pc.dimensions[d];
      WindowDimension& wd = nw.dimensions[d];
      wd.padding_low += wd.base_dilation * pd.edge_padding_low;
      wd.padding_high += wd.base_dilation * pd.edge_padding_high;
      if (pd.interior_padding != 0) wd.base_dilation = 1 + pd.interior_padding;
    }
    auto rw = HloInstruction::Create(O::kReduceWindow, i->shape(), {new_operand, init});
    rw->mutable_attrs().window = nw;
    rw->set_to_apply(i->to_apply());
    return ctx.Add(std::move(rw));
  }));
}


// ---------------------------------------------------------------- collectives
// The size of the replica groups of a collective when they all have one
// size (XLA's GetReplicaGroupCountAndSize, for explicit groups and for no
// groups without a channel: all replicas).
std::optional<int64_t> ReplicaGroupSize(const HloInstruction* c) {
  const ReplicaGroups& rg = c->attrs().replica_groups;
  if (rg.empty()) {
    if (c->attrs().channel_id.has_value() || c->GetModule() == nullptr) return std::nullopt;
    return c->GetModule()->config().replica_count;
  }
  std::vector<std::vector<int64_t>> groups = rg.Expand();
  if (groups.empty()) return std::nullopt;
  size_t size = groups[0].size();
  for (const auto& g : groups) {
    if (g.size() != size) return std::nullopt;
  }
  return static_cast<int64_t>(size);
}

bool IsBroadcastOfScalarConstant(const HloInstruction* b) {
  return Is(b, O::kBroadcast) && Is(b->operand(0), O::kConstant) && b->operand(0)->shape().IsScalar() &&
         !b->operand(0)->literal().elided();
}

void CollectiveRules(std::vector<Rule>& rules) {
  // all-gather(broadcast(c)) => broadcast(c)
  rules.push_back(R(O::kAllGather, "all-gather(broadcast(c)) => broadcast(c)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!i->shape().IsArray() || !IsBroadcastOfScalarConstant(Op(i, 0))) return nullptr;
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), Op(Op(i, 0), 0), {}));
  }));
  // all-to-all(broadcast(c)) => broadcast(c)
  rules.push_back(R(O::kAllToAll, "all-to-all(broadcast(c)) => broadcast(c)", [](HloInstruction* i, RuleContext&) -> HloInstruction* {
    if (!i->shape().IsArray() || !IsBroadcastOfScalarConstant(Op(i, 0))) return nullptr;
    return Op(i, 0)->shape().Compatible(i->shape()) ? Op(i, 0) : nullptr;
  }));
  // all-reduce / reduce-scatter of broadcast(c): min/max => broadcast(c),
  // sum => broadcast(c * group size)
  for (HloOpcode op : {O::kAllReduce, O::kReduceScatter}) {
    rules.push_back(R(op, op == O::kAllReduce ? "all-reduce(broadcast(c)) => broadcast" : "reduce-scatter(broadcast(c)) => broadcast",
                      [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
      if (!i->shape().IsArray() || !IsBroadcastOfScalarConstant(Op(i, 0))) return nullptr;
      std::optional<HloOpcode> kind = ScalarReducerOpcode(i->to_apply());
      if (!kind) return nullptr;
      HloInstruction* c = Op(Op(i, 0), 0);
      if (*kind == O::kMinimum || *kind == O::kMaximum) {
        return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), c, {}));
      }
      if (*kind != O::kAdd) return nullptr;
      PrimitiveType t = c->shape().element_type();
      if (!IsIntegralType(t) && !IsFloatingPointType(t)) return nullptr;
      std::optional<int64_t> n = ReplicaGroupSize(i);
      if (!n) return nullptr;
      Literal sum(Shape::Scalar(t));
      if (IsIntegralType(t)) {
        sum.SetInt(0, c->literal().GetInt(0) * *n);
      } else {
        // Multiplied in the element type, as XLA's T(val) * T(n).
        Literal count(Shape::Scalar(t));
        count.SetDouble(0, static_cast<double>(*n));
        sum.SetDouble(0, t == PrimitiveType::kF64 ? c->literal().GetDouble(0) * count.GetDouble(0)
                                                  : static_cast<double>(static_cast<float>(c->literal().GetDouble(0)) *
                                                                        static_cast<float>(count.GetDouble(0))));
      }
      HloInstruction* k = ctx.Add(HloInstruction::CreateConstant(std::move(sum)));
      return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), k, {}));
    }));
  }
}

}  // namespace

std::vector<Rule> ReduceRules() {
  std::vector<Rule> rules;
  ReduceRulesInto(rules);
  ReduceWindowRules(rules);
  CollectiveRules(rules);
  return rules;
}

}  // namespace passlab::algsimp
