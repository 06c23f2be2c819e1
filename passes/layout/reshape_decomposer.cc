#include "passes/layout/reshape_decomposer.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/layout/bitcast_layouts.h"
#include "passes/layout/descending_layout.h"

namespace passlab {
namespace {

const Layout& LayoutOf(const Shape& s, Layout& storage) {
  if (s.has_layout()) return s.layout();
  storage = Layout::Default(s.rank());
  return storage;
}

bool IsBitcastReshape(const Shape& in, const Shape& out) {
  Layout a, b;
  return ReshapeIsBitcast(in.dimensions(), LayoutOf(in, a), out.dimensions(), LayoutOf(out, b));
}

// Index pairs (i, j) where the leading i dimensions of `a` and the leading
// j of `b` hold the same number of elements, from (0, 0) to the ranks
// (XLA's CommonFactors, for dimensions without 1s).
std::optional<std::vector<std::pair<int64_t, int64_t>>> CommonFactors(const std::vector<int64_t>& a,
                                                                      const std::vector<int64_t>& b) {
  std::vector<std::pair<int64_t, int64_t>> out = {{0, 0}};
  const int64_t na = a.size(), nb = b.size();
  int64_t i = 0, j = 0, pa = 1, pb = 1;
  while (i < na || j < nb) {
    if (pa == pb) {
      if (i == na || j == nb) return std::nullopt;
      pa *= a[i++];
      pb *= b[j++];
    } else if (pa < pb) {
      if (i == na) return std::nullopt;
      pa *= a[i++];
    } else {
      if (j == nb) return std::nullopt;
      pb *= b[j++];
    }
    if (pa == pb) out.push_back({i, j});
  }
  if (out.back() != std::make_pair(na, nb)) return std::nullopt;
  return out;
}

// The minor_to_major of `out` that makes the reshape from `in` (with its
// layout) a bitcast, if there is one (XLA's ShapeUtil::AlignLayouts): the
// common-factor groups keep their physical order, and size-1 output
// dimensions go most major.
std::optional<std::vector<int64_t>> AlignLayouts(const std::vector<int64_t>& in, const std::vector<int64_t>& in_m2m,
                                                 const std::vector<int64_t>& out) {
  auto has_ones = [](const std::vector<int64_t>& d) { return std::find(d.begin(), d.end(), 1) != d.end(); };
  if (has_ones(in) || has_ones(out)) {
    std::vector<int64_t> in_kept, renumber(in.size(), -1), in_kept_m2m, out_kept, out_map;
    for (size_t d = 0; d < in.size(); ++d) {
      if (in[d] == 1) continue;
      renumber[d] = in_kept.size();
      in_kept.push_back(in[d]);
    }
    for (int64_t d : in_m2m) {
      if (renumber[d] >= 0) in_kept_m2m.push_back(renumber[d]);
    }
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] == 1) continue;
      out_kept.push_back(out[d]);
      out_map.push_back(d);
    }
    std::optional<std::vector<int64_t>> simple = AlignLayouts(in_kept, in_kept_m2m, out_kept);
    if (!simple) return std::nullopt;
    std::vector<int64_t> layout;
    for (int64_t d : *simple) layout.push_back(out_map[d]);
    for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
      if (out[d] == 1) layout.push_back(d);
    }
    return layout;
  }
  for (int64_t d : in) {
    if (d == 0) return std::nullopt;
  }
  std::optional<std::vector<std::pair<int64_t, int64_t>>> factors = CommonFactors(in, out);
  if (!factors) return std::nullopt;
  std::vector<int64_t> factor_of(in.size()), position(in.size());
  for (size_t p = 0; p < in_m2m.size(); ++p) position[in_m2m[p]] = p;
  for (size_t f = 0; f + 1 < factors->size(); ++f) {
    const int64_t start = (*factors)[f].first, end = (*factors)[f + 1].first;
    int64_t physical = position[start];
    factor_of[start] = f;
    for (int64_t i = start + 1; i < end; ++i) {
      if (--physical < 0 || in_m2m[physical] != i) return std::nullopt;
      factor_of[i] = f;
    }
  }
  std::vector<int64_t> layout;
  for (size_t minor = 0; layout.size() < out.size();) {
    const int64_t f = factor_of[in_m2m[minor]];
    for (int64_t d = (*factors)[f + 1].second - 1; d >= (*factors)[f].second; --d) layout.push_back(d);
    minor += (*factors)[f + 1].first - (*factors)[f].first;
  }
  return layout;
}

// `shape` laid out so that reshaping `from` into it is a bitcast.
std::optional<Shape> AlignedShape(const Shape& from, const Shape& shape) {
  Layout storage;
  std::optional<std::vector<int64_t>> m2m =
      AlignLayouts(from.dimensions(), LayoutOf(from, storage).minor_to_major(), shape.dimensions());
  if (!m2m) return std::nullopt;
  Shape out = shape;
  Layout layout = shape.has_layout() ? shape.layout() : Layout::Default(shape.rank());
  layout.mutable_minor_to_major() = *m2m;
  out.set_layout(std::move(layout));
  return out;
}

class Visitor : public HloRewriteVisitor {
 public:
  absl::Status HandleReshape(HloInstruction* reshape) override {
    HloInstruction* operand = reshape->mutable_operand(0);
    const Shape& s = reshape->shape();
    const Shape& s0 = operand->shape();
    // reshape that keeps every element in place => bitcast
    if (IsBitcastReshape(s0, s)) return ReplaceInstruction(reshape, Bitcast(operand, s, operand->metadata()));
    // reshape(x) => bitcast(copy(x) into the layout the result allows)
    if (std::optional<Shape> input = AlignedShape(s, s0)) {
      HloInstruction* copy = Copy(operand, *input);
      return ReplaceInstruction(reshape, Bitcast(copy, s, copy->metadata()));
    }
    // reshape(x) => copy(bitcast(x) into the layout x allows)
    if (std::optional<Shape> output = AlignedShape(s0, s)) {
      return ReplaceInstruction(reshape, Copy(Bitcast(operand, *output, operand->metadata()), s));
    }
    // Neither side aligns: through descending layouts on both sides.
    HloInstruction* c1 = Copy(operand, WithDescendingLayout(s0));
    HloInstruction* b = Bitcast(c1, WithDescendingLayout(s), c1->metadata());
    return ReplaceInstruction(reshape, Copy(b, s));
  }

 private:
  HloInstruction* Bitcast(HloInstruction* x, const Shape& shape, const OpMetadata& metadata) {
    auto b = HloInstruction::CreateBitcast(shape, x);
    b->set_metadata(metadata);
    MarkChanged();
    return x->parent()->AddInstruction(std::move(b));
  }
  HloInstruction* Copy(HloInstruction* x, const Shape& shape) {
    MarkChanged();
    return x->parent()->AddInstruction(HloInstruction::CreateUnary(shape, HloOpcode::kCopy, x));
  }
};

}  // namespace

absl::StatusOr<bool> ReshapeDecomposer::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
