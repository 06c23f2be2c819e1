#include "passes/gpu/reduction_splitter.h"

#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/gpu/reduction_utils.h"

namespace passlab {
namespace {

constexpr int64_t kMinSplitDimSize = 128;

class Visitor : public HloRewriteVisitor {
 public:
  absl::Status HandleReduce(HloInstruction* reduce) override {
    if (!IsRewritableReduce(*reduce)) return absl::OkStatus();
    if (reduce->shape().IsTuple() || reduce->dimensions().size() < 2) return absl::OkStatus();
    HloInstruction* input = reduce->mutable_operand(0);
    if (!HasDefaultLayout(input->shape()) || GetReductionKind(*reduce).has_value()) return absl::OkStatus();
    // The largest reduced dimension (first of equals).
    int64_t split = -1;
    for (int64_t d : reduce->dimensions()) {
      if (split < 0 || input->shape().dimensions(d) > input->shape().dimensions(split)) split = d;
    }
    if (input->shape().dimensions(split) < kMinSplitDimSize) return absl::OkStatus();
    // reduce(A, dims) => reduce(reduce(A, {split}), dims - {split})
    ExpansionBuilder b(reduce->parent(), reduce->metadata());
    HloInstruction* pre = AddReduce(b, {input}, ReduceInits(*reduce), {split}, reduce->to_apply());
    std::vector<int64_t> rest;
    for (int64_t d : reduce->dimensions()) {
      if (d != split) rest.push_back(d > split ? d - 1 : d);
    }
    HloInstruction* final_reduce = AddReduce(b, {pre}, ReduceInits(*reduce), rest, reduce->to_apply());
    *final_reduce->mutable_shape() = reduce->shape();
    return ReplaceInstruction(reduce, final_reduce);
  }
};

}  // namespace

absl::StatusOr<bool> ReductionSplitter::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
