#include "passes/gpu/reduction_degenerate_dim_remover.h"

#include <algorithm>

#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/gpu/reduction_utils.h"

namespace passlab {
namespace {

// `shape` without its size-1 dimensions; the layout keeps the order of the
// others (XLA's ShapeUtil::DropDegenerateDimensions).
Shape DropDegenerateDimensions(const Shape& shape) {
  std::vector<int64_t> kept;
  std::vector<int64_t> new_index(shape.rank(), -1);
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dimensions(d) == 1) continue;
    new_index[d] = static_cast<int64_t>(kept.size());
    kept.push_back(shape.dimensions(d));
  }
  Shape out(shape.element_type(), kept);
  if (shape.has_layout()) {
    std::vector<int64_t> minor_to_major;
    for (int64_t d : shape.layout().minor_to_major()) {
      if (d < shape.rank() && new_index[d] >= 0) minor_to_major.push_back(new_index[d]);
    }
    if (static_cast<int64_t>(minor_to_major.size()) == out.rank()) out.set_layout(Layout(minor_to_major));
  }
  return out;
}

class Visitor : public HloRewriteVisitor {
 public:
  // reduce(A with size-1 dims) => bitcast(reduce(bitcast(A) without them));
  // with no real dimension left to reduce, just bitcast(A).
  absl::Status HandleReduce(HloInstruction* reduce) override {
    if (!IsRewritableReduce(*reduce)) return absl::OkStatus();
    std::vector<HloInstruction*> inputs = ReduceInputs(*reduce);
    const Shape& in = inputs[0]->shape();
    if (std::none_of(in.dimensions().begin(), in.dimensions().end(), [](int64_t d) { return d == 1; })) {
      return absl::OkStatus();
    }
    const std::vector<int64_t>& dims = reduce->dimensions();
    std::vector<int64_t> new_reduced;
    int64_t shift = 0;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (in.dimensions(d) == 1) {
        ++shift;
      } else if (std::find(dims.begin(), dims.end(), d) != dims.end()) {
        new_reduced.push_back(d - shift);
      }
    }
    HloComputation* c = reduce->parent();
    if (new_reduced.empty()) {
      if (reduce->shape().IsTuple()) return absl::OkStatus();  // XLA bitcasts the first input only
      return ReplaceWithNewInstruction(reduce, HloInstruction::CreateBitcast(reduce->shape(), inputs[0]));
    }
    std::vector<HloInstruction*> canonical;
    std::vector<Shape> shapes;
    for (size_t k = 0; k < inputs.size(); ++k) {
      canonical.push_back(c->AddInstruction(
          HloInstruction::CreateBitcast(DropDegenerateDimensions(inputs[k]->shape()), inputs[k])));
      const Shape& out = reduce->shape().IsTuple() ? reduce->shape().tuple_shapes(k) : reduce->shape();
      shapes.push_back(DropDegenerateDimensions(out));
    }
    Shape canonical_shape = shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
    auto new_reduce =
        HloInstruction::CreateReduce(canonical_shape, canonical, ReduceInits(*reduce), new_reduced, reduce->to_apply());
    new_reduce->set_metadata(reduce->metadata());
    if (canonical_shape == reduce->shape()) return ReplaceWithNewInstruction(reduce, std::move(new_reduce));
    HloInstruction* wrapped = c->AddInstruction(std::move(new_reduce));
    if (!canonical_shape.IsTuple()) {
      return ReplaceWithNewInstruction(reduce, HloInstruction::CreateBitcast(reduce->shape(), wrapped));
    }
    std::vector<HloInstruction*> outputs;
    for (int64_t k = 0; k < static_cast<int64_t>(inputs.size()); ++k) {
      HloInstruction* element = c->AddInstruction(HloInstruction::CreateGetTupleElement(wrapped, k));
      outputs.push_back(
          c->AddInstruction(HloInstruction::CreateBitcast(reduce->shape().tuple_shapes(k), element)));
    }
    return ReplaceWithNewInstruction(reduce, HloInstruction::CreateTuple(outputs));
  }
};

}  // namespace

absl::StatusOr<bool> ReductionDegenerateDimRemover::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
