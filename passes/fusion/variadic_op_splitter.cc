#include "passes/fusion/variadic_op_splitter.h"

#include <algorithm>

#include "core/pass/hlo_rewrite_visitor.h"

namespace passlab {
namespace {

class Visitor : public HloRewriteVisitor {
 public:
  explicit Visitor(int64_t max_operands) : max_operands_(max_operands) {}

  absl::Status HandleConcatenate(HloInstruction* concat) override {
    if (concat->operand_count() <= max_operands_ || !concat->shape().IsArray() || max_operands_ < 2) {
      return absl::OkStatus();
    }
    // concatenate(x0..xn) => concatenate(concatenate(x0..x127), concatenate(x128..), ...)
    int64_t dim = concat->concatenate_dimension();
    std::vector<HloInstruction*> operands = concat->operands();
    while (static_cast<int64_t>(operands.size()) > max_operands_) {
      std::vector<HloInstruction*> pieces;
      for (size_t begin = 0; begin < operands.size(); begin += max_operands_) {
        size_t end = std::min(operands.size(), begin + static_cast<size_t>(max_operands_));
        if (end - begin == 1) {
          pieces.push_back(operands[begin]);
          continue;
        }
        std::vector<HloInstruction*> part(operands.begin() + begin, operands.begin() + end);
        Shape shape = part.front()->shape();
        int64_t size = 0;
        for (const HloInstruction* p : part) size += p->shape().dimensions(dim);
        shape.set_dimensions(dim, size);
        if (concat->shape().has_layout()) shape.set_layout(concat->shape().layout());
        HloInstruction* piece = AddInstruction(concat, HloInstruction::CreateConcatenate(shape, part, dim));
        piece->set_metadata(concat->metadata());
        pieces.push_back(piece);
      }
      operands = std::move(pieces);
    }
    return ReplaceWithNewInstruction(concat, HloInstruction::CreateConcatenate(concat->shape(), operands, dim));
  }

 private:
  int64_t max_operands_;
};

}  // namespace

absl::StatusOr<bool> VariadicOpSplitter::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor(options_.max_operands);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
