#include "passes/gpu/reduction_splitter.h"

#include <algorithm>

#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/gpu/reduction_utils.h"

namespace passlab {
namespace {

// XLA's ignore_small_dims threshold: a largest reduced dimension this small
// is left unsplit.
constexpr int64_t kSmallDimSize = 8;

class Visitor : public HloRewriteVisitor {
 public:
  explicit Visitor(ReductionSplitterOptions options) : options_(options) {}

  absl::Status HandleReduce(HloInstruction* reduce) override {
    if (!IsRewritableReduce(*reduce) || IsReductionFromOrToContiguousDimensions(*reduce)) return absl::OkStatus();
    if (reduce->dimensions().size() < 2 || !reduce->shape().IsArray()) return absl::OkStatus();
    HloInstruction* input = reduce->mutable_operand(0);
    // XLA requires default layouts here (ReductionLayoutNormalizer ran).
    if (!HasDefaultLayout(input->shape())) return absl::OkStatus();
    // The largest reduced dimension (first of equals).
    int64_t split = -1;
    int64_t split_size = 0;
    for (int64_t d : reduce->dimensions()) {
      if (input->shape().dimensions(d) > split_size) {
        split = d;
        split_size = input->shape().dimensions(d);
      }
    }
    if (split < 0 || (options_.ignore_small_dims && split_size <= kSmallDimSize)) return absl::OkStatus();
    // reduce(A, dims) => reduce(reduce(A, {split}), dims - {split})
    std::vector<int64_t> pre_dims = input->shape().dimensions();
    pre_dims.erase(pre_dims.begin() + split);
    auto pre = HloInstruction::CreateReduce(Shape(reduce->shape().element_type(), pre_dims), {input},
                                            {reduce->mutable_operand(1)}, {split}, reduce->to_apply());
    pre->set_metadata(reduce->metadata());
    HloInstruction* pre_reduce = reduce->parent()->AddInstruction(std::move(pre));
    std::vector<int64_t> rest;
    for (int64_t d : reduce->dimensions()) {
      if (d != split) rest.push_back(d > split ? d - 1 : d);
    }
    return ReplaceWithNewInstruction(
        reduce, HloInstruction::CreateReduce(reduce->shape(), {pre_reduce}, {reduce->mutable_operand(1)}, rest,
                                             reduce->to_apply()));
  }

 private:
  ReductionSplitterOptions options_;
};

}  // namespace

absl::StatusOr<bool> ReductionSplitter::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor(options_);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
