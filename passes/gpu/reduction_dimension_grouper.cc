#include "passes/gpu/reduction_dimension_grouper.h"

#include <algorithm>

#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/gpu/reduction_utils.h"

namespace passlab {
namespace {

class Visitor : public HloRewriteVisitor {
 public:
  absl::Status HandleReduce(HloInstruction* reduce) override {
    if (!IsRewritableReduce(*reduce)) return absl::OkStatus();
    std::vector<HloInstruction*> inputs = ReduceInputs(*reduce);
    const Shape& in = inputs[0]->shape();
    for (HloInstruction* x : inputs) {
      if (!HasDefaultLayout(x->shape())) return absl::OkStatus();  // the layout normalizer's job
    }
    const std::vector<int64_t>& dims = reduce->dimensions();
    auto is_reduced = [&](int64_t d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); };
    // reduce(A[.., m, n, ..], dims={i, i+1}) => reduce(A[.., m*n, ..], dims={i})
    std::vector<int64_t> grouped_dims, grouped_reduced;
    bool merged = false;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (d > 0 && is_reduced(d) && is_reduced(d - 1)) {
        grouped_dims.back() *= in.dimensions(d);
        merged = true;
        continue;
      }
      if (is_reduced(d)) grouped_reduced.push_back(static_cast<int64_t>(grouped_dims.size()));
      grouped_dims.push_back(in.dimensions(d));
    }
    if (!merged) return absl::OkStatus();

    ExpansionBuilder b(reduce->parent(), reduce->metadata());
    std::vector<HloInstruction*> grouped;
    for (HloInstruction* x : inputs) grouped.push_back(b.Reshape(x, grouped_dims));
    HloInstruction* r = AddReduce(b, grouped, ReduceInits(*reduce), grouped_reduced, reduce->to_apply());
    *r->mutable_shape() = reduce->shape();  // same kept dims, same output
    return ReplaceInstruction(reduce, r);
  }
};

}  // namespace

absl::StatusOr<bool> ReductionDimensionGrouper::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
