#include "passes/simplifiers/tuple_simplifier.h"

#include "core/pass/hlo_rewrite_visitor.h"

namespace passlab {
namespace {

class Visitor : public HloRewriteVisitor {
 public:
  explicit Visitor(HloPassInterface& pass) : pass_(pass) {}

  // get-tuple-element(tuple(a0..an), i) => ai
  absl::Status HandleGetTupleElement(HloInstruction* gte) override {
    HloInstruction* tuple = gte->mutable_operand(0);
    if (tuple->opcode() != HloOpcode::kTuple) return absl::OkStatus();
    HloInstruction* element = tuple->mutable_operand(gte->tuple_index());
    if (element->shape() != gte->shape()) return absl::OkStatus();
    pass_.BumpCounter("gte(tuple(...), i) => operand i");
    return ReplaceInstruction(gte, element);
  }

  // tuple(gte(t,0), ..., gte(t,n-1)) => t
  absl::Status HandleTuple(HloInstruction* tuple) override {
    if (tuple->operand_count() == 0) return absl::OkStatus();
    const HloInstruction* source = nullptr;
    for (int64_t i = 0; i < tuple->operand_count(); ++i) {
      const HloInstruction* op = tuple->operand(i);
      if (op->opcode() != HloOpcode::kGetTupleElement || op->tuple_index() != i) return absl::OkStatus();
      if (source != nullptr && op->operand(0) != source) return absl::OkStatus();
      source = op->operand(0);
    }
    if (source->shape() != tuple->shape()) return absl::OkStatus();
    pass_.BumpCounter("tuple(gte(t,0..n)) => t");
    return ReplaceInstruction(tuple, const_cast<HloInstruction*>(source));
  }

 private:
  HloPassInterface& pass_;
};

}  // namespace

absl::StatusOr<bool> TupleSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor(*this);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
