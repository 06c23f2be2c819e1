#include "passes/gpu/reduction_layout_normalizer.h"

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
    if (HasDefaultLayout(in)) return absl::OkStatus();
    // reduce(A{layout L}) => transpose(reduce(transpose(A) in L's order))
    const std::vector<int64_t> perm = MajorToMinor(in);  // new dim i = old dim perm[i]
    const std::vector<int64_t>& dims = reduce->dimensions();
    auto is_reduced = [&](int64_t d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); };
    std::vector<int64_t> new_reduced, kept_new_order, kept_old_order;
    for (int64_t i = 0; i < static_cast<int64_t>(perm.size()); ++i) {
      if (is_reduced(perm[i])) {
        new_reduced.push_back(i);
      } else {
        kept_new_order.push_back(perm[i]);
      }
    }
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (!is_reduced(d)) kept_old_order.push_back(d);
    }
    // Output dim j (old dim kept_old_order[j]) comes from new output dim i
    // where kept_new_order[i] is that old dim.
    std::vector<int64_t> back;
    for (int64_t old_dim : kept_old_order) {
      back.push_back(std::find(kept_new_order.begin(), kept_new_order.end(), old_dim) - kept_new_order.begin());
    }

    ExpansionBuilder b(reduce->parent(), reduce->metadata());
    std::vector<HloInstruction*> normalized;
    for (HloInstruction* x : inputs) normalized.push_back(b.Transpose(x, perm));
    HloInstruction* r = AddReduce(b, normalized, ReduceInits(*reduce), new_reduced, reduce->to_apply());
    auto restore = [&](HloInstruction* out, const Shape& original) {
      HloInstruction* t = b.Transpose(out, back);
      if (t == out) return out;
      *t->mutable_shape() = original;  // the original output layout
      return t;
    };
    if (!reduce->shape().IsTuple()) return ReplaceInstruction(reduce, restore(r, reduce->shape()));
    std::vector<HloInstruction*> outputs;
    for (int64_t k = 0; k < reduce->shape().tuple_shapes_size(); ++k) {
      outputs.push_back(restore(b.GetTupleElement(r, k), reduce->shape().tuple_shapes(k)));
    }
    return ReplaceInstruction(reduce, b.Tuple(outputs));
  }
};

}  // namespace

absl::StatusOr<bool> ReductionLayoutNormalizer::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
