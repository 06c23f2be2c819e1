#include "passes/gpu/tree_reduction_rewriter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/gpu/reduction_utils.h"

namespace passlab {
namespace {

// How to split reduced dimension `dim` of n elements: padded to k1 * k2 and
// bitcast into [k1, k2].
struct SplitParams {
  int64_t k1;
  int64_t k2;
  int64_t dim;
};

// Whether to swap the pair {k1 >= k2} so that the inner reduce gets the
// larger block: kept race-free, and for a row reduction only when it suits
// vectorization of both reduces (XLA's
// ShouldSwapInnerAndOuterReducedMinorDimension).
bool ShouldSwapInnerAndOuter(uint64_t k1, uint64_t k2, uint64_t n, int64_t race_free_bound, bool is_row) {
  if (k1 > static_cast<uint64_t>(race_free_bound)) return false;
  if (!is_row) return true;
  bool maybe_vectorized = k2 % 2 == 0 && n % 2 == 0;
  if (maybe_vectorized) return k2 * 2 < k1 || k1 % 2 == 0;
  return n % 2 == 0 || k1 % 2 != 0;
}

// The split of the minor-most reduced dimension: the divisor i in
// (sqrt(n)/2, sqrt(n)] (sqrt(n) capped at the race-free bound) that needs
// the least padding, a power of two winning a tie.
SplitParams ComputeSplitParams(const HloInstruction& reduce, const ReductionDimensions& kind,
                               const std::vector<int64_t>& sorted_reduced) {
  int64_t dim = sorted_reduced.back();
  uint64_t n = reduce.operand(0)->shape().dimensions(dim);
  uint64_t k2 = static_cast<uint64_t>(std::floor(std::sqrt(static_cast<double>(n))));
  int64_t race_free_bound = ReductionDimensionRaceFreeBound(kind);
  if (k2 > static_cast<uint64_t>(race_free_bound)) k2 = race_free_bound;
  uint64_t minimum_padding = (k2 - n % k2) % k2;
  uint64_t best_k1 = (n + minimum_padding) / k2;
  for (uint64_t i = k2 - 1; i > k2 / 2; --i) {
    uint64_t padding = (i - n % i) % i;
    if (padding < minimum_padding || (padding == minimum_padding && std::has_single_bit(i))) {
      minimum_padding = padding;
      best_k1 = (n + padding) / i;
    }
  }
  uint64_t padded = n + minimum_padding;
  uint64_t best_k2 = padded / best_k1;
  if (ShouldSwapInnerAndOuter(best_k1, best_k2, n, race_free_bound, kind.is_row_reduction)) {
    std::swap(best_k1, best_k2);
  }
  return {static_cast<int64_t>(best_k1), static_cast<int64_t>(best_k2), dim};
}

// `dims` without the entries at `positions`.
std::vector<int64_t> RemoveElements(const std::vector<int64_t>& positions, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    if (std::find(positions.begin(), positions.end(), i) == positions.end()) out.push_back(dims[i]);
  }
  return out;
}

// A reduce of `inputs` (one array, or the elements of a tuple-shaped
// reduce) to `shape` over `dims`; a tuple input is read through
// get-tuple-elements.
std::unique_ptr<HloInstruction> MakeOuterReduce(HloComputation* c, const Shape& shape, HloInstruction* inner,
                                                const std::vector<HloInstruction*>& inits, std::vector<int64_t> dims,
                                                HloComputation* reducer) {
  std::vector<HloInstruction*> inputs;
  if (inner->shape().IsTuple()) {
    for (int64_t i = 0; i < inner->shape().tuple_shapes_size(); ++i) {
      inputs.push_back(c->AddInstruction(HloInstruction::CreateGetTupleElement(inner, i)));
    }
  } else {
    inputs.push_back(inner);
  }
  return HloInstruction::CreateReduce(shape, inputs, inits, std::move(dims), reducer);
}

Shape ReduceShape(const std::vector<Shape>& shapes) { return shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes); }

class Visitor : public HloRewriteVisitor {
 public:
  absl::Status HandleReduce(HloInstruction* reduce) override {
    if (!IsReductionFromOrToContiguousDimensions(*reduce)) return absl::OkStatus();
    ReductionDimensions kind = GetReductionKindAndContiguousComponents(*reduce);
    if (IsReductionRaceFree(kind)) return absl::OkStatus();
    std::vector<int64_t> sorted_reduced = reduce->dimensions();
    std::sort(sorted_reduced.begin(), sorted_reduced.end());
    // Grouped reduced dimensions form at most two blocks.
    if (sorted_reduced.size() > 2) return absl::OkStatus();
    if (kind.is_row_reduction && kind.dims[0] > kBatchedReductionRaceFreeBound) {
      return SplitBatchDimension(reduce, sorted_reduced);
    }
    return SplitReductionDimension(reduce, ComputeSplitParams(*reduce, kind, sorted_reduced), sorted_reduced);
  }

 private:
  // reduce(x, {b, r}) => reduce(reduce(x, {r}), {0}): the minor reduced
  // dimension first, then the batch one.
  absl::Status SplitBatchDimension(HloInstruction* reduce, const std::vector<int64_t>& sorted_reduced) {
    HloComputation* c = reduce->parent();
    std::vector<HloInstruction*> inputs = ReduceInputs(*reduce);
    std::vector<HloInstruction*> inits = ReduceInits(*reduce);
    int64_t minor = sorted_reduced.back();
    std::vector<Shape> shapes;
    for (HloInstruction* input : inputs) {
      std::vector<int64_t> dims = input->shape().dimensions();
      dims.erase(dims.begin() + minor);
      shapes.emplace_back(input->shape().element_type(), dims);
    }
    HloInstruction* inner = c->AddInstruction(
        HloInstruction::CreateReduce(ReduceShape(shapes), inputs, inits, {minor}, reduce->to_apply()));
    return ReplaceWithNewInstruction(reduce,
                                     MakeOuterReduce(c, reduce->shape(), inner, inits, {0}, reduce->to_apply()));
  }

  // Pads dimension `dim` to k1 * k2, bitcasts it into [k1, k2], reduces k2
  // (and the other reduced dimensions), then k1.
  absl::Status SplitReductionDimension(HloInstruction* reduce, const SplitParams& split,
                                       const std::vector<int64_t>& sorted_reduced) {
    HloComputation* c = reduce->parent();
    std::vector<HloInstruction*> inputs = ReduceInputs(*reduce);
    std::vector<HloInstruction*> inits = ReduceInits(*reduce);
    const std::vector<int64_t> input_dims = inputs[0]->shape().dimensions();
    const int64_t size = input_dims[split.dim];
    const int64_t padded_size = split.k1 * split.k2;
    std::vector<int64_t> padded_dims = input_dims;
    if (size != padded_size) {
      padded_dims[split.dim] = padded_size;
      PaddingConfig config;
      config.dimensions.resize(input_dims.size());
      config.dimensions[split.dim].edge_padding_high = padded_size - size;
      for (size_t k = 0; k < inputs.size(); ++k) {
        auto pad = HloInstruction::CreatePad(Shape(inputs[k]->shape().element_type(), padded_dims), inputs[k], inits[k],
                                             config);
        pad->set_metadata(inputs[k]->metadata());
        inputs[k] = c->AddInstruction(std::move(pad));
      }
    }
    std::vector<int64_t> reshaped_dims;
    for (int64_t d = 0; d < static_cast<int64_t>(padded_dims.size()); ++d) {
      if (d == split.dim) {
        reshaped_dims.push_back(split.k1);
        reshaped_dims.push_back(split.k2);
      } else {
        reshaped_dims.push_back(padded_dims[d]);
      }
    }
    // The inner reduce reduces k2 in place of the split dimension, the outer
    // one k1, renumbered past the inner reduce's removed dimensions.
    std::vector<int64_t> inner_dims = sorted_reduced;
    auto split_it = std::find(inner_dims.begin(), inner_dims.end(), split.dim);
    *split_it += 1;
    std::vector<int64_t> outer_dims = {split.dim - (split_it - inner_dims.begin())};
    std::vector<int64_t> inner_shape_dims = RemoveElements(inner_dims, reshaped_dims);
    std::vector<HloInstruction*> reshaped;
    std::vector<Shape> inner_shapes;
    for (HloInstruction* input : inputs) {
      PrimitiveType type = input->shape().element_type();
      auto bitcast = HloInstruction::CreateBitcast(Shape(type, reshaped_dims), input);
      bitcast->set_metadata(input->metadata());
      reshaped.push_back(c->AddInstruction(std::move(bitcast)));
      inner_shapes.emplace_back(type, inner_shape_dims);
    }
    auto inner_reduce =
        HloInstruction::CreateReduce(ReduceShape(inner_shapes), reshaped, inits, inner_dims, reduce->to_apply());
    inner_reduce->set_metadata(reduce->metadata());
    HloInstruction* inner = c->AddInstruction(std::move(inner_reduce));
    return ReplaceWithNewInstruction(reduce,
                                     MakeOuterReduce(c, reduce->shape(), inner, inits, outer_dims, reduce->to_apply()));
  }
};

}  // namespace

absl::StatusOr<bool> TreeReductionRewriter::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
