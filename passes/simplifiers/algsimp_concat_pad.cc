// AlgebraicSimplifier rules over reverse, concatenate and pad, in the order
// XLA's AlgebraicSimplifierVisitor handlers try them
// (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc HandleReverse,
// HandleConcatenate, HandlePad).
#include <algorithm>
#include <numeric>

#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

using O = HloOpcode;

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

}  // namespace

void AddConcatPadRules(std::vector<Rule>& rules) { ReverseConcatPadRules(rules); }

}  // namespace passlab::algsimp
