// AlgebraicSimplifier rules over slices: slice, dynamic-slice and
// dynamic-update-slice, in the order XLA's AlgebraicSimplifierVisitor
// handlers try them (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc
// HandleSlice, HandleDynamicSlice, HandleDynamicUpdateSlice).
#include <algorithm>
#include <numeric>

#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

using O = HloOpcode;

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


}  // namespace

void AddSliceRules(std::vector<Rule>& rules) {
  SliceRules(rules);
  DynamicSliceRules(rules);
  DynamicUpdateSliceRules(rules);
}

}  // namespace passlab::algsimp
