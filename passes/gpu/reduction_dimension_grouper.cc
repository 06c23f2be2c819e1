#include "passes/gpu/reduction_dimension_grouper.h"

#include <algorithm>

#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/gpu/reduction_utils.h"

namespace passlab {
namespace {

class Visitor : public HloRewriteVisitor {
 public:
  // reduce(A[.., m, n, ..], dims={i, i+1}) => reduce(bitcast(A[.., m*n, ..]), dims={i})
  absl::Status HandleReduce(HloInstruction* reduce) override {
    if (!IsRewritableReduce(*reduce)) return absl::OkStatus();
    std::vector<HloInstruction*> inputs = ReduceInputs(*reduce);
    for (HloInstruction* x : inputs) {
      if (!HasDefaultLayout(x->shape())) return absl::OkStatus();  // the layout normalizer's job
    }
    const Shape& in = inputs[0]->shape();
    const std::vector<int64_t>& dims = reduce->dimensions();
    auto is_reduced = [&](int64_t d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); };
    // With default layouts the logical order is the memory order.
    std::vector<int64_t> grouped_dims;
    std::vector<int64_t> grouped_reduced;
    bool merged = false;
    int64_t run = 1;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (is_reduced(d) && d + 1 < in.rank() && is_reduced(d + 1)) {
        merged = true;
        run *= in.dimensions(d);
        continue;
      }
      if (is_reduced(d)) {
        grouped_dims.push_back(run * in.dimensions(d));
        grouped_reduced.push_back(static_cast<int64_t>(grouped_dims.size()) - 1);
        run = 1;
      } else {
        grouped_dims.push_back(in.dimensions(d));
      }
    }
    if (!merged) return absl::OkStatus();
    std::vector<HloInstruction*> grouped;
    for (HloInstruction* x : inputs) {
      auto bitcast = HloInstruction::CreateBitcast(Shape(x->shape().element_type(), grouped_dims), x);
      bitcast->set_metadata(x->metadata());
      grouped.push_back(reduce->parent()->AddInstruction(std::move(bitcast)));
    }
    return ReplaceWithNewInstruction(reduce, HloInstruction::CreateReduce(reduce->shape(), grouped,
                                                                          ReduceInits(*reduce), grouped_reduced,
                                                                          reduce->to_apply()));
  }
};

}  // namespace

absl::StatusOr<bool> ReductionDimensionGrouper::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
