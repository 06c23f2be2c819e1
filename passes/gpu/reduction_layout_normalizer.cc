#include "passes/gpu/reduction_layout_normalizer.h"

#include <algorithm>

#include "core/ir/str_util.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/gpu/reduction_utils.h"

namespace passlab {
namespace {

// The layout of an array shape (the default one when it has none).
Layout LayoutOrDefault(const Shape& shape) {
  return shape.has_layout() ? shape.layout() : Layout::Default(shape.rank());
}

bool SameArrayShapeAndLayout(const Shape& a, const Shape& b) {
  return a.SameDimensions(b) && a.element_type() == b.element_type() && LayoutOrDefault(a) == LayoutOrDefault(b);
}

// XLA:GPU's EnforceMinorToMajorReduceOpVisitor
// (xla/backends/gpu/transforms/reduction_layout_normalizer.cc): every input
// is bitcast to its dimensions in memory order with the default layout, the
// reduce runs over the renumbered dimensions with an output layout that
// keeps the original output's memory order, and that output is bitcast back
// to the original shape.
class Visitor : public HloRewriteVisitor {
 public:
  absl::Status HandleReduce(HloInstruction* reduce) override {
    if (!IsRewritableReduce(*reduce)) return absl::OkStatus();
    std::vector<HloInstruction*> inputs = ReduceInputs(*reduce);
    const Layout first_layout = LayoutOrDefault(inputs[0]->shape());
    const std::vector<int64_t>& dims = reduce->dimensions();
    auto is_reduced = [&](int64_t d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); };
    // The reduce's logical output dimension of a kept input dimension.
    auto output_dim = [&](int64_t input_dim) {
      return input_dim - std::count_if(dims.begin(), dims.end(), [&](int64_t d) { return d < input_dim; });
    };
    std::vector<HloInstruction*> canonical_inputs;
    std::vector<Shape> new_output_shapes;
    std::vector<int64_t> new_dims;
    bool any_bitcast = false;
    for (size_t k = 0; k < inputs.size(); ++k) {
      HloInstruction* input = inputs[k];
      const Shape& in = input->shape();
      if (k > 0 && LayoutOrDefault(in) != first_layout) {
        return absl::FailedPreconditionError(StrCat("reduction-layout-normalizer: ", reduce->name(),
                                                    ": layout assignment gave its inputs different layouts"));
      }
      const Shape& out = reduce->shape().IsTuple() ? reduce->shape().tuple_shapes(k) : reduce->shape();
      const std::vector<int64_t> out_m2m = LayoutOrDefault(out).minor_to_major();
      const int64_t out_rank = out.rank();
      // Physical position (0 = most major) of each logical output dimension.
      std::vector<int64_t> out_physical(out_rank);
      for (int64_t i = 0; i < out_rank; ++i) out_physical[out_m2m[i]] = out_rank - 1 - i;
      std::vector<int64_t> in_dims, out_dims, out_layout(out_rank), reduced;
      const std::vector<int64_t> order = MajorToMinor(in);
      for (int64_t i = 0; i < static_cast<int64_t>(order.size()); ++i) {
        const int64_t d = order[i];
        in_dims.push_back(in.dimensions(d));
        if (is_reduced(d)) {
          reduced.push_back(i);
          continue;
        }
        out_dims.push_back(in.dimensions(d));
        out_layout[out_rank - 1 - out_physical[output_dim(d)]] = static_cast<int64_t>(out_dims.size()) - 1;
      }
      Shape new_in(in.element_type(), in_dims);
      new_in.set_layout(Layout::Default(new_in.rank()));
      Shape new_out(out.element_type(), out_dims);
      new_out.set_layout(Layout(out_layout));
      HloInstruction* canonical = input;
      if (!SameArrayShapeAndLayout(new_in, in)) {
        canonical = reduce->parent()->AddInstruction(HloInstruction::CreateBitcast(new_in, input));
        canonical->set_metadata(input->metadata());
        any_bitcast = true;
      }
      canonical_inputs.push_back(canonical);
      new_output_shapes.push_back(std::move(new_out));
      new_dims = reduced;  // the same for every input (one layout)
    }
    bool output_changes = false;
    for (size_t k = 0; k < new_output_shapes.size(); ++k) {
      const Shape& out = reduce->shape().IsTuple() ? reduce->shape().tuple_shapes(k) : reduce->shape();
      output_changes |= !SameArrayShapeAndLayout(new_output_shapes[k], out);
    }
    if (!any_bitcast && !output_changes) return absl::OkStatus();
    const bool variadic = reduce->shape().IsTuple();
    Shape new_shape = variadic ? Shape::Tuple(new_output_shapes) : new_output_shapes[0];
    HloInstruction* r = reduce->parent()->AddInstruction(
        HloInstruction::CreateReduce(new_shape, canonical_inputs, ReduceInits(*reduce), new_dims, reduce->to_apply()));
    r->set_metadata(reduce->metadata());
    if (!variadic) {
      if (!output_changes) return ReplaceInstruction(reduce, r);
      return ReplaceInstruction(reduce, reduce->parent()->AddInstruction(HloInstruction::CreateBitcast(reduce->shape(), r)));
    }
    std::vector<HloInstruction*> outputs;
    for (int64_t k = 0; k < static_cast<int64_t>(new_output_shapes.size()); ++k) {
      HloInstruction* gte = reduce->parent()->AddInstruction(HloInstruction::CreateGetTupleElement(r, k));
      outputs.push_back(output_changes ? reduce->parent()->AddInstruction(
                                             HloInstruction::CreateBitcast(reduce->shape().tuple_shapes(k), gte))
                                       : gte);
    }
    return ReplaceInstruction(reduce, reduce->parent()->AddInstruction(HloInstruction::CreateTuple(outputs)));
  }
};

}  // namespace

absl::StatusOr<bool> ReductionLayoutNormalizer::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
