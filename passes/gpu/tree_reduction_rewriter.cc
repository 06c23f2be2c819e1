#include "passes/gpu/tree_reduction_rewriter.h"

#include <algorithm>

#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/gpu/reduction_utils.h"

namespace passlab {
namespace {

// Smallest m with m * m >= n.
int64_t CeilSqrt(int64_t n) {
  int64_t m = 1;
  while (m * m < n) ++m;
  return m;
}

class Visitor : public HloRewriteVisitor {
 public:
  absl::Status HandleReduce(HloInstruction* reduce) override {
    if (!IsRewritableReduce(*reduce)) return absl::OkStatus();
    std::optional<ReductionDimensions> kind = GetReductionKind(*reduce);
    if (!kind.has_value() || IsReductionRaceFree(*kind)) return absl::OkStatus();
    std::vector<HloInstruction*> inputs = ReduceInputs(*reduce);
    for (HloInstruction* x : inputs) {
      if (!HasDefaultLayout(x->shape())) return absl::OkStatus();
    }
    std::vector<HloInstruction*> inits = ReduceInits(*reduce);
    std::vector<int64_t> dims = reduce->dimensions();
    std::sort(dims.begin(), dims.end());
    // The minor-most reduced dimension that is not size 1 (a kind exists, so
    // there is one).
    int64_t r = -1;
    for (int64_t d : dims) {
      if (inputs[0]->shape().dimensions(d) > 1) r = d;
    }
    std::vector<int64_t> others;  // the other reduced dims, all but r
    int64_t before_r = 0;
    for (int64_t d : dims) {
      if (d != r) others.push_back(d);
      if (d < r) ++before_r;
    }
    ExpansionBuilder b(reduce->parent(), reduce->metadata());
    HloInstruction* inner;
    std::vector<int64_t> outer_dims;

    if (kind->is_row_reduction && kind->dims[0] > GetReductionTiling(*kind)[0]) {
      // Batch larger than the tile: reduce(A, {.., r}) => reduce(reduce(A, {r}), {..})
      inner = AddReduce(b, inputs, inits, {r}, reduce->to_apply());
      for (int64_t d : others) outer_dims.push_back(d > r ? d - 1 : d);
    } else {
      // sqrt(n) tree: pad r to Q*M, split it into [Q, M], reduce M then Q.
      const int64_t n = inputs[0]->shape().dimensions(r);
      const int64_t m = CeilSqrt(n);
      const int64_t q = (n + m - 1) / m;
      std::vector<HloInstruction*> split;
      for (size_t k = 0; k < inputs.size(); ++k) {
        HloInstruction* x = inputs[k];
        if (q * m != n) {
          PaddingConfig config;
          config.dimensions.resize(x->shape().rank());
          config.dimensions[r].edge_padding_high = q * m - n;
          std::vector<int64_t> padded_dims = x->shape().dimensions();
          padded_dims[r] = q * m;
          x = b.Add(HloInstruction::CreatePad(Shape(x->shape().element_type(), padded_dims), x, inits[k], config));
        }
        std::vector<int64_t> split_dims = x->shape().dimensions();
        split_dims[r] = m;
        split_dims.insert(split_dims.begin() + r, q);
        split.push_back(b.Reshape(x, split_dims));
      }
      std::vector<int64_t> inner_dims;
      for (int64_t d : others) inner_dims.push_back(d > r ? d + 1 : d);
      inner_dims.push_back(r + 1);
      std::sort(inner_dims.begin(), inner_dims.end());
      inner = AddReduce(b, split, inits, inner_dims, reduce->to_apply());
      outer_dims = {r - before_r};
    }
    std::vector<HloInstruction*> inner_outputs;
    if (inputs.size() == 1) {
      inner_outputs.push_back(inner);
    } else {
      for (size_t k = 0; k < inputs.size(); ++k) inner_outputs.push_back(b.GetTupleElement(inner, k));
    }
    HloInstruction* outer = AddReduce(b, inner_outputs, inits, outer_dims, reduce->to_apply());
    *outer->mutable_shape() = reduce->shape();
    if (absl::Status s = ReplaceInstruction(reduce, outer); !s.ok()) return s;
    // The halves may still be too big for one race-free kernel.
    if (absl::Status s = HandleReduce(inner); !s.ok()) return s;
    return HandleReduce(outer);
  }
};

}  // namespace

absl::StatusOr<bool> TreeReductionRewriter::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
