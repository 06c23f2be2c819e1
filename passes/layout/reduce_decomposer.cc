#include "passes/layout/reduce_decomposer.h"

#include <vector>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/gpu/reduction_utils.h"
#include "passes/layout/descending_layout.h"

namespace passlab {
namespace {

int64_t InputCount(const HloInstruction& reduce) { return reduce.operand_count() / 2; }

bool SameLayout(const Shape& a, const Shape& b) {
  if (!a.has_layout() || !b.has_layout()) return HasDescendingLayout(a) && HasDescendingLayout(b);
  return a.layout() == b.layout();
}

// A reduce over `inputs`, each output the input's shape without the reduced
// dimensions (its layout kept).
std::unique_ptr<HloInstruction> ReduceKeepingLayouts(const HloInstruction& reduce,
                                                     const std::vector<HloInstruction*>& inputs) {
  std::vector<Shape> shapes;
  for (const HloInstruction* input : inputs) shapes.push_back(DeleteDimensions(input->shape(), reduce.dimensions()));
  std::vector<HloInstruction*> operands = inputs;
  for (int64_t i = InputCount(reduce); i < reduce.operand_count(); ++i) operands.push_back(reduce.mutable_operand(i));
  std::unique_ptr<HloInstruction> out =
      reduce.CloneWithNewOperands(shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes), operands);
  out->clear_sharding();
  return out;
}

// Variadic reduce inputs all get the first input's layout.
class LayoutEqualizer : public HloRewriteVisitor {
 public:
  absl::Status HandleReduce(HloInstruction* reduce) override {
    const Shape& first = reduce->operand(0)->shape();
    std::vector<HloInstruction*> inputs;
    bool copied = false;
    for (int64_t i = 0; i < InputCount(*reduce); ++i) {
      HloInstruction* input = reduce->mutable_operand(i);
      if (SameLayout(input->shape(), first) || !first.has_layout()) {
        inputs.push_back(input);
        continue;
      }
      Shape shape(input->shape().element_type(), input->shape().dimensions());
      Layout layout = Layout::Default(shape.rank());
      layout.mutable_minor_to_major() = first.layout().minor_to_major();
      shape.set_layout(std::move(layout));
      inputs.push_back(AddInstruction(reduce, HloInstruction::CreateUnary(shape, HloOpcode::kCopy, input)));
      copied = true;
    }
    if (!copied) return absl::OkStatus();
    // The output keeps its layout (XLA's rebuilt reduce takes the inputs'
    // layouts; the decomposition below then adds the copy it needs).
    std::vector<HloInstruction*> operands = inputs;
    for (int64_t i = InputCount(*reduce); i < reduce->operand_count(); ++i) operands.push_back(reduce->mutable_operand(i));
    return ReplaceWithNewInstruction(reduce, reduce->CloneWithNewOperands(reduce->shape(), operands));
  }
};

class Decomposer : public HloRewriteVisitor {
 public:
  explicit Decomposer(ReduceDecomposerOptions options) : options_(options) {}

  // reduce(x){L'} => copy(reduce(x){L}) where L is x's layout without the
  // reduced dimensions.
  absl::Status HandleReduce(HloInstruction* reduce) override {
    if (options_.allow_custom_layout_for_contiguous_reductions && IsReductionFromOrToContiguousDimensions(*reduce)) {
      return absl::OkStatus();
    }
    const Shape shape = reduce->shape();
    std::vector<HloInstruction*> inputs;
    std::vector<Shape> expected, outputs;
    for (int64_t i = 0; i < InputCount(*reduce); ++i) {
      inputs.push_back(reduce->mutable_operand(i));
      if (!SameLayout(inputs.back()->shape(), inputs[0]->shape())) {
        return absl::InternalError(StrCat("the inputs of reduce '", reduce->name(), "' have different layouts"));
      }
      expected.push_back(DeleteDimensions(inputs.back()->shape(), reduce->dimensions()));
      outputs.push_back(shape.IsTuple() ? shape.tuple_shapes(i) : shape);
      if (!SameLayout(outputs.back(), outputs[0])) {
        return absl::InternalError(StrCat("the outputs of reduce '", reduce->name(), "' have different layouts"));
      }
    }
    if (expected == outputs) return absl::OkStatus();
    HloInstruction* r = AddInstruction(reduce, ReduceKeepingLayouts(*reduce, inputs));
    if (!shape.IsTuple()) {
      HloInstruction* to_replace = reduce;
      HloInstruction* to_copy = r;
      Shape copy_shape = shape;
      if (reduce->user_count() == 1 && reduce->users()[0]->opcode() == HloOpcode::kConvert) {
        // reduce -> convert stay adjacent; the copy goes after the convert.
        to_replace = reduce->users()[0];
        Shape converted = r->shape();
        converted.set_element_type(to_replace->shape().element_type());
        to_copy = AddInstruction(to_replace, HloInstruction::CreateConvert(converted, r));
        copy_shape.set_element_type(to_replace->shape().element_type());
      }
      return ReplaceInstruction(to_replace,
                                AddInstruction(to_replace, HloInstruction::CreateUnary(copy_shape, HloOpcode::kCopy, to_copy)));
    }
    std::vector<HloInstruction*> copies;
    for (int64_t i = 0; i < InputCount(*reduce); ++i) {
      HloInstruction* gte = AddInstruction(reduce, HloInstruction::CreateGetTupleElement(r, i));
      copies.push_back(AddInstruction(reduce, HloInstruction::CreateUnary(outputs[i], HloOpcode::kCopy, gte)));
    }
    return ReplaceInstruction(reduce, AddInstruction(reduce, HloInstruction::CreateTuple(copies)));
  }

 private:
  ReduceDecomposerOptions options_;
};

}  // namespace

absl::StatusOr<bool> ReduceDecomposer::RunImpl(HloModule& module, PassRunContext*) {
  LayoutEqualizer equalizer;
  ASSIGN_OR_RETURN(bool equalized, equalizer.RunOnModule(module));
  Decomposer decomposer(options_);
  ASSIGN_OR_RETURN(bool decomposed, decomposer.RunOnModule(module));
  return equalized || decomposed;
}

}  // namespace passlab
