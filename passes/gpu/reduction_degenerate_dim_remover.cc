#include "passes/gpu/reduction_degenerate_dim_remover.h"

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
    // reduce(A with size-1 dims) => reshape(reduce(reshape(A) without them))
    std::vector<int64_t> kept_dims, new_reduced;
    int64_t next = 0;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (in.dimensions(d) == 1) continue;
      kept_dims.push_back(in.dimensions(d));
      const auto& dims = reduce->dimensions();
      if (std::find(dims.begin(), dims.end(), d) != dims.end()) new_reduced.push_back(next);
      ++next;
    }
    if (static_cast<int64_t>(kept_dims.size()) == in.rank()) return absl::OkStatus();

    ExpansionBuilder b(reduce->parent(), reduce->metadata());
    std::vector<HloInstruction*> canonical;
    for (HloInstruction* x : inputs) canonical.push_back(b.Reshape(x, kept_dims));
    HloInstruction* r = AddReduce(b, canonical, ReduceInits(*reduce), new_reduced, reduce->to_apply());
    if (!reduce->shape().IsTuple()) {
      return ReplaceInstruction(reduce, b.Reshape(r, reduce->shape().dimensions()));
    }
    std::vector<HloInstruction*> outputs;
    for (int64_t k = 0; k < reduce->shape().tuple_shapes_size(); ++k) {
      outputs.push_back(b.Reshape(b.GetTupleElement(r, k), reduce->shape().tuple_shapes(k).dimensions()));
    }
    return ReplaceInstruction(reduce, b.Tuple(outputs));
  }
};

}  // namespace

absl::StatusOr<bool> ReductionDegenerateDimRemover::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
