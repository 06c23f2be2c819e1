#include "passes/simplifiers/dot_dimension_normalizer.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/simplifiers/dot_operand_dims.h"

namespace passlab {
namespace {

using Dims = std::vector<int64_t>;

int64_t Product(const Dims& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

bool IsIdentity(const Dims& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

Dims Permute(const Dims& dims, const Dims& permutation) {
  Dims out;
  for (int64_t p : permutation) out.push_back(dims[p]);
  return out;
}

// A view of a row-major buffer: dimensions (major first) given by the stride
// and extent of their elements in the buffer (XLA's ShapeTracker::BufferView
// in xla/hlo/analysis/shape_tracker.cc).
struct BufferView {
  Dims strides, extents;

  static BufferView Compacted(int64_t elements) { return {{1}, {elements}}; }

  static BufferView Concat(const std::vector<BufferView>& parts) {
    BufferView v;
    for (const BufferView& p : parts) {
      v.strides.insert(v.strides.end(), p.strides.begin(), p.strides.end());
      v.extents.insert(v.extents.end(), p.extents.begin(), p.extents.end());
    }
    return v;
  }

  // Joins neighbours that are contiguous (stride * extent = the previous
  // stride).
  void MergeAdjacent() {
    if (strides.empty()) return;
    size_t w = 0;
    for (size_t i = 1; i < strides.size(); ++i) {
      if (strides[i] * extents[i] == strides[w]) {
        extents[w] *= extents[i];
        strides[w] = strides[i];
      } else {
        ++w;
        strides[w] = strides[i];
        extents[w] = extents[i];
      }
    }
    strides.resize(w + 1);
    extents.resize(w + 1);
  }

  // Cuts the view, in order, into logical dimensions of these sizes (each a
  // view of one or more pieces); nullopt when a size does not divide.
  std::optional<std::vector<BufferView>> Unflatten(const Dims& logical) const {
    std::vector<BufferView> parts;
    size_t atom = 0;
    int64_t stride = strides[0], extent = extents[0];
    for (int64_t d : logical) {
      BufferView part;
      int64_t rest = d;
      while (rest > 1) {
        const int64_t take = std::min(extent, rest);
        if (take <= 1 || extent % take != 0 || rest % take != 0) return std::nullopt;
        part.strides.push_back(stride * (extent / take));
        part.extents.push_back(take);
        rest /= take;
        extent /= take;
        if (extent == 1 && ++atom < strides.size()) {
          stride = strides[atom];
          extent = extents[atom];
        }
      }
      parts.push_back(std::move(part));
    }
    return parts;
  }

  // The view as reshape(extents by decreasing stride) + transpose.
  void AsTransformation(Dims& reshape, Dims& transpose) const {
    Dims order(strides.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
    reshape.clear();
    transpose.assign(order.size(), 0);
    for (size_t j = 0; j < order.size(); ++j) {
      reshape.push_back(extents[order[j]]);
      transpose[order[j]] = static_cast<int64_t>(j);
    }
  }
};

struct Step {
  bool is_transpose;
  Dims dims;
};

// A chain of reshapes and transposes over a shape, kept as a list of
// projections (each a transposed view of the previous one's result) that are
// folded together whenever the sizes divide; emits the fewest reshape and
// transpose steps (XLA's ShapeTracker, layout-agnostic).
class ShapeTracker {
 public:
  explicit ShapeTracker(Dims input) : input_(input), output_(input) {
    projections_.push_back(BufferView::Compacted(Product(input)));
  }

  void AppendReshape(const Dims& dims) { output_ = dims; }

  void AppendTranspose(const Dims& permutation) {
    if (Product(output_) == 1) {
      output_ = Permute(output_, permutation);
      return;
    }
    Dims non_degenerate;
    for (int64_t d : output_) {
      if (d != 1) non_degenerate.push_back(d);
    }
    std::optional<std::vector<BufferView>> parts = projections_.back().Unflatten(non_degenerate);
    if (!parts.has_value()) {
      projections_.push_back(BufferView::Compacted(Product(output_)));
      parts = projections_.back().Unflatten(non_degenerate);
    }
    std::vector<BufferView> permuted;
    for (int64_t dim : permutation) {
      if (output_[dim] == 1) continue;
      int64_t physical = std::count_if(output_.begin(), output_.begin() + dim, [](int64_t d) { return d != 1; });
      permuted.push_back((*parts)[physical]);
    }
    projections_.back() = BufferView::Concat(permuted);
    projections_.back().MergeAdjacent();
    output_ = Permute(output_, permutation);
    FoldProjections();
  }

  // A bitcast between layouts: reshape to the common physical pieces,
  // transpose them into the destination's order, reshape to the destination.
  absl::Status AppendBitcast(const Shape& src, const Shape& dst) {
    if (Product(output_) == 1) {
      AppendReshape(dst.dimensions());
      return absl::OkStatus();
    }
    struct Piece {
      int64_t size, src_dim, dst_dim, index, src_index;
    };
    const Layout src_layout = LayoutOrDefault(src), dst_layout = LayoutOrDefault(dst);
    auto dim_at = [](const Shape& s, const Layout& l, int64_t i) { return s.dimensions(l.minor_to_major()[i]); };
    std::vector<Piece> pieces;
    int64_t si = 0, di = 0, src_rem = 1, dst_rem = 1;
    const int64_t src_rank = src.rank(), dst_rank = dst.rank();
    while (si < src_rank || di < dst_rank) {
      if (src_rem == 1 && si < src_rank) src_rem = dim_at(src, src_layout, si);
      if (dst_rem == 1 && di < dst_rank) dst_rem = dim_at(dst, dst_layout, di);
      const int64_t size = std::min(src_rem, dst_rem);
      if (size <= 0 || src_rem % size != 0 || dst_rem % size != 0) {
        return absl::InvalidArgumentError("cannot decompose bitcast");
      }
      pieces.push_back({size, src_layout.minor_to_major()[std::min(si, src_rank - 1)],
                        dst_layout.minor_to_major()[std::min(di, dst_rank - 1)], 0, 0});
      src_rem /= size;
      dst_rem /= size;
      if (src_rem == 1) ++si;
      if (dst_rem == 1) ++di;
    }
    std::reverse(pieces.begin(), pieces.end());
    for (size_t i = 0; i < pieces.size(); ++i) pieces[i].index = static_cast<int64_t>(i);
    std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.src_dim < b.src_dim; });
    Dims sizes;
    for (size_t i = 0; i < pieces.size(); ++i) {
      pieces[i].src_index = static_cast<int64_t>(i);
      sizes.push_back(pieces[i].size);
    }
    AppendReshape(sizes);
    std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.index < b.index; });
    std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.dst_dim < b.dst_dim; });
    Dims permutation;
    for (const Piece& p : pieces) permutation.push_back(p.src_index);
    AppendTranspose(permutation);
    AppendReshape(dst.dimensions());
    return absl::OkStatus();
  }

  absl::Status AppendInstruction(const HloInstruction* inst) {
    switch (inst->opcode()) {
      case HloOpcode::kTranspose:
        AppendTranspose(inst->dimensions());
        return absl::OkStatus();
      case HloOpcode::kReshape:
        AppendReshape(inst->shape().dimensions());
        return absl::OkStatus();
      case HloOpcode::kBitcast:
        return AppendBitcast(inst->operand(0)->shape(), inst->shape());
      default:
        return absl::InvalidArgumentError("not a shape-changing instruction");
    }
  }

  // The steps, builds on `head` (whose dimensions are the input's).
  HloInstruction* ToInstructionChain(HloInstruction* head) const {
    HloInstruction* current = head;
    for (const Step& step : OptimizeSteps(Steps())) {
      const PrimitiveType type = current->shape().element_type();
      current = step.is_transpose
                    ? current->parent()->AddInstruction(HloInstruction::CreateTranspose(
                          PermuteShapeDimensions(step.dims, current->shape()), current, step.dims))
                    : current->parent()->AddInstruction(HloInstruction::CreateReshape(Shape(type, step.dims), current));
    }
    return current;
  }

 private:
  // Folds the last projection into the one before while the latter can be
  // cut into the former's reshape sizes.
  void FoldProjections() {
    while (projections_.size() > 1) {
      Dims reshape, transpose;
      projections_.back().AsTransformation(reshape, transpose);
      BufferView& prev = projections_[projections_.size() - 2];
      std::optional<std::vector<BufferView>> parts = prev.Unflatten(reshape);
      if (!parts.has_value()) break;
      std::vector<BufferView> permuted;
      for (int64_t t : transpose) permuted.push_back((*parts)[t]);
      prev = BufferView::Concat(permuted);
      prev.MergeAdjacent();
      projections_.pop_back();
    }
  }

  std::vector<Step> Steps() const {
    if (Product(input_) == 1) {
      if (input_ == output_) return {};
      return {{false, output_}};
    }
    std::vector<Step> steps;
    Dims current = input_;
    for (size_t i = 0; i < projections_.size(); ++i) {
      Dims reshape, transpose;
      projections_[i].AsTransformation(reshape, transpose);
      if (i + 1 == projections_.size() && IsIdentity(transpose)) continue;
      if (current != reshape) {
        steps.push_back({false, reshape});
        current = reshape;
      }
      if (IsIdentity(transpose)) continue;
      steps.push_back({true, transpose});
      current = Permute(current, transpose);
    }
    if (current != output_) steps.push_back({false, output_});
    return steps;
  }

  // A reshape that glues dimensions keeps the current ones where they divide
  // the target's (so that a following transpose moves whole dimensions);
  // returns the step and, per target dimension, its last expanded dimension.
  static Step ExpandReshape(const Step& step, const Dims& current, Dims& mapping) {
    auto partial_products = [](const Dims& dims) {
      Dims out;
      int64_t p = 1;
      for (int64_t d : dims) out.push_back(p *= d);
      return out;
    };
    const Dims preserve = partial_products(step.dims), insert = partial_products(current);
    size_t pi = 0, ii = 0;
    Dims shapes;
    mapping.clear();
    while (pi < preserve.size()) {
      const int64_t ps = preserve[pi], is = insert[ii];
      if (is < ps) {
        if (ps % is == 0 && (shapes.empty() || is % shapes.back() == 0)) shapes.push_back(is);
        ++ii;
        continue;
      }
      mapping.push_back(static_cast<int64_t>(shapes.size()));
      shapes.push_back(ps);
      ++pi;
      if (is == ps) ++ii;
    }
    for (size_t i = shapes.size(); i-- > 1;) shapes[i] /= shapes[i - 1];
    return {false, shapes};
  }

  static Step ExpandTranspose(const Step& step, const Dims& expansion) {
    Dims expanded;
    for (int64_t dim : step.dims) {
      const int64_t begin = dim == 0 ? 0 : expansion[dim - 1] + 1;
      for (int64_t k = begin; k <= expansion[dim]; ++k) expanded.push_back(k);
    }
    return {true, expanded};
  }

  std::vector<Step> OptimizeSteps(const std::vector<Step>& steps) const {
    if (Product(input_) == 1) return steps;
    std::vector<Step> out;
    Dims current = input_;
    Dims mapping(current.size());
    std::iota(mapping.begin(), mapping.end(), 0);
    size_t n = steps.size();
    // A final reshape may have degenerate dimensions; one is added anyway.
    if (n > 0 && !steps.back().is_transpose) --n;
    for (size_t i = 0; i < n; ++i) {
      if (!steps[i].is_transpose) {
        Step s = ExpandReshape(steps[i], current, mapping);
        if (s.dims != current) {
          current = s.dims;
          out.push_back(std::move(s));
        }
        continue;
      }
      Step s = ExpandTranspose(steps[i], mapping);
      current = Permute(current, s.dims);
      out.push_back(std::move(s));
    }
    if (current != output_) out.push_back({false, output_});
    return out;
  }

  Dims input_, output_;
  std::vector<BufferView> projections_;
};

// Makes the category's dimensions consecutive and merges them into one.
void NormalizeCategory(DotOperandDims& dims, ShapeTracker& tracker, DotOperandDims::Category category) {
  if (std::optional<Dims> permutation = dims.PermuteToConsecutive(category)) tracker.AppendTranspose(*permutation);
  dims.CollapseCategory(category);
  tracker.AppendReshape(dims.shape());
}

// The operand rebuilt from the head of the transpose/reshape/bitcast chain
// feeding it, with its contracting (and, if asked, non-contracting)
// dimensions merged.
absl::StatusOr<HloInstruction*> NormalizeOperand(DotOperandDims& dims, HloInstruction* operand,
                                                 bool normalize_noncontracting) {
  std::vector<HloInstruction*> chain;
  HloInstruction* head = operand;
  while (head->opcode() == HloOpcode::kTranspose || head->opcode() == HloOpcode::kReshape ||
         head->opcode() == HloOpcode::kBitcast) {
    chain.push_back(head);
    head = head->mutable_operand(0);
  }
  ShapeTracker tracker(head->shape().dimensions());
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    RETURN_IF_ERROR(tracker.AppendInstruction(*it));
  }
  NormalizeCategory(dims, tracker, DotOperandDims::kContracting);
  if (normalize_noncontracting && dims.Rank(DotOperandDims::kNonContracting) > 1) {
    NormalizeCategory(dims, tracker, DotOperandDims::kNonContracting);
  }
  return tracker.ToInstructionChain(head);
}

class NormalizerVisitor : public HloRewriteVisitor {
 public:
  explicit NormalizerVisitor(bool normalize_noncontracting) : normalize_noncontracting_(normalize_noncontracting) {}

  absl::Status HandleDot(HloInstruction* dot) override {
    if (!dot->attrs().sparsity.empty()) return absl::OkStatus();
    // The shape tracker models no zero-element views.
    if (dot->operand(0)->shape().element_count() == 0 || dot->operand(1)->shape().element_count() == 0) {
      return absl::OkStatus();
    }
    DotOperandDims lhs = DotOperandDims::FromDotOperand(*dot, 0);
    DotOperandDims rhs = DotOperandDims::FromDotOperand(*dot, 1);
    const bool contracting_needed = lhs.Rank(DotOperandDims::kContracting) > 1;
    const bool noncontracting_needed =
        normalize_noncontracting_ &&
        (lhs.Rank(DotOperandDims::kNonContracting) > 1 || rhs.Rank(DotOperandDims::kNonContracting) > 1);
    if (!contracting_needed && !noncontracting_needed) return absl::OkStatus();

    ASSIGN_OR_RETURN(HloInstruction* new_lhs, NormalizeOperand(lhs, dot->mutable_operand(0), normalize_noncontracting_));
    ASSIGN_OR_RETURN(HloInstruction* new_rhs, NormalizeOperand(rhs, dot->mutable_operand(1), normalize_noncontracting_));
    Shape shape = DotOperandDims::OutputShape(dot->shape().element_type(), lhs, rhs);
    auto new_dot = HloInstruction::CreateDot(shape, new_lhs, new_rhs, DotOperandDims::MakeDotDimensionNumbers(lhs, rhs),
                                             dot->attrs().precision_config);
    new_dot->set_metadata(dot->metadata());
    HloInstruction* added = AddInstruction(dot, std::move(new_dot));
    if (added->shape() == dot->shape()) return ReplaceInstruction(dot, added);
    auto reshape = HloInstruction::CreateReshape(dot->shape(), added);
    reshape->set_metadata(dot->metadata());
    return ReplaceInstruction(dot, AddInstruction(dot, std::move(reshape)));
  }

 private:
  bool normalize_noncontracting_;
};

}  // namespace

absl::StatusOr<bool> DotDimensionNormalizer::RunImpl(HloModule& module, PassRunContext*) {
  NormalizerVisitor visitor(options_.normalize_noncontracting_dimensions);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
