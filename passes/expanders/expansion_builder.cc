#include "passes/expanders/expansion_builder.h"

#include <algorithm>

#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {

HloInstruction* ExpansionBuilder::Add(std::unique_ptr<HloInstruction> inst) {
  inst->set_metadata(metadata_);
  return c_->AddInstruction(std::move(inst));
}

HloInstruction* ExpansionBuilder::ConstantScalar(PrimitiveType type, int64_t value) {
  Literal l(Shape::Scalar(type));
  if (IsFloatingPointType(type)) {
    l.SetDouble(0, static_cast<double>(value));
  } else {
    l.SetInt(0, value);
  }
  return ConstantLiteral(std::move(l));
}

HloInstruction* ExpansionBuilder::Zero(PrimitiveType type) { return ConstantLiteral(Literal(Shape::Scalar(type))); }

HloInstruction* ExpansionBuilder::ConstantLiteral(Literal literal) {
  return Add(HloInstruction::CreateConstant(std::move(literal)));
}

HloInstruction* ExpansionBuilder::Convert(HloInstruction* x, PrimitiveType type) {
  if (x->shape().element_type() == type) return x;
  return Add(HloInstruction::CreateConvert(Shape(type, x->shape().dimensions()), x));
}

HloInstruction* ExpansionBuilder::Reshape(HloInstruction* x, std::vector<int64_t> dims) {
  if (x->shape().dimensions() == dims) return x;
  return Add(HloInstruction::CreateReshape(Shape(x->shape().element_type(), std::move(dims)), x));
}

HloInstruction* ExpansionBuilder::Transpose(HloInstruction* x, std::vector<int64_t> permutation) {
  bool identity = true;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < permutation.size(); ++i) {
    identity = identity && permutation[i] == static_cast<int64_t>(i);
    dims.push_back(x->shape().dimensions(permutation[i]));
  }
  if (identity) return x;
  return Add(HloInstruction::CreateTranspose(Shape(x->shape().element_type(), dims), x, std::move(permutation)));
}

HloInstruction* ExpansionBuilder::Broadcast(HloInstruction* x, std::vector<int64_t> dims,
                                            std::vector<int64_t> broadcast_dimensions) {
  return Add(HloInstruction::CreateBroadcast(Shape(x->shape().element_type(), std::move(dims)), x,
                                             std::move(broadcast_dimensions)));
}

HloInstruction* ExpansionBuilder::Binary(HloOpcode opcode, HloInstruction* a, HloInstruction* b) {
  return Add(HloInstruction::CreateBinary(a->shape(), opcode, a, b));
}

HloInstruction* ExpansionBuilder::Unary(HloOpcode opcode, HloInstruction* x) {
  return Add(HloInstruction::CreateUnary(x->shape(), opcode, x));
}

HloInstruction* ExpansionBuilder::Iota(PrimitiveType type, std::vector<int64_t> dims, int64_t iota_dimension) {
  return Add(HloInstruction::CreateIota(Shape(type, std::move(dims)), iota_dimension));
}

HloInstruction* ExpansionBuilder::Dot(HloInstruction* lhs, HloInstruction* rhs, DotDimensionNumbers dnums) {
  std::vector<int64_t> dims;
  for (int64_t d : dnums.lhs_batch_dimensions) dims.push_back(lhs->shape().dimensions(d));
  auto append_free = [&](const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
    for (int64_t d = 0; d < s.rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
        dims.push_back(s.dimensions(d));
      }
    }
  };
  append_free(lhs->shape(), dnums.lhs_batch_dimensions, dnums.lhs_contracting_dimensions);
  append_free(rhs->shape(), dnums.rhs_batch_dimensions, dnums.rhs_contracting_dimensions);
  Shape shape(lhs->shape().element_type(), std::move(dims));
  return Add(HloInstruction::CreateDot(shape, lhs, rhs, std::move(dnums)));
}

HloInstruction* ExpansionBuilder::Compare(HloInstruction* a, HloInstruction* b, ComparisonDirection direction) {
  return Add(HloInstruction::CreateCompare(Shape(PrimitiveType::kPred, a->shape().dimensions()), a, b, direction));
}

HloInstruction* ExpansionBuilder::Select(HloInstruction* pred, HloInstruction* on_true, HloInstruction* on_false) {
  return Add(HloInstruction::CreateTernary(on_true->shape(), HloOpcode::kSelect, pred, on_true, on_false));
}

HloInstruction* ExpansionBuilder::Slice(HloInstruction* x, std::vector<int64_t> starts, std::vector<int64_t> limits) {
  std::vector<SliceDimension> slice;
  std::vector<int64_t> dims;
  for (size_t d = 0; d < starts.size(); ++d) {
    slice.push_back({starts[d], limits[d], 1});
    dims.push_back(limits[d] - starts[d]);
  }
  return Add(HloInstruction::CreateSlice(Shape(x->shape().element_type(), dims), x, std::move(slice)));
}

HloInstruction* ExpansionBuilder::Concatenate(absl::Span<HloInstruction* const> xs, int64_t dimension) {
  if (xs.size() == 1) return xs[0];
  std::vector<int64_t> dims = xs[0]->shape().dimensions();
  dims[dimension] = 0;
  for (HloInstruction* x : xs) dims[dimension] += x->shape().dimensions(dimension);
  return Add(HloInstruction::CreateConcatenate(Shape(xs[0]->shape().element_type(), dims), xs, dimension));
}

HloInstruction* ExpansionBuilder::DynamicSlice(HloInstruction* x, absl::Span<HloInstruction* const> starts,
                                               std::vector<int64_t> sizes) {
  Shape shape(x->shape().element_type(), sizes);
  return Add(HloInstruction::CreateDynamicSlice(shape, x, starts, std::move(sizes)));
}

HloInstruction* ExpansionBuilder::DynamicUpdateSlice(HloInstruction* x, HloInstruction* update,
                                                     absl::Span<HloInstruction* const> starts) {
  return Add(HloInstruction::CreateDynamicUpdateSlice(x->shape(), x, update, starts));
}

HloInstruction* ExpansionBuilder::Tuple(absl::Span<HloInstruction* const> elements) {
  return Add(HloInstruction::CreateTuple(elements));
}

HloInstruction* ExpansionBuilder::GetTupleElement(HloInstruction* tuple, int64_t index) {
  return Add(HloInstruction::CreateGetTupleElement(tuple, index));
}

HloInstruction* ExpansionBuilder::ElementAsScalar(HloInstruction* vector, int64_t k) {
  return Reshape(Slice(vector, {k}, {k + 1}), {});
}

std::vector<int64_t> IndexBatchDims(const Shape& indices, int64_t index_vector_dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != index_vector_dim) dims.push_back(d);
  }
  return dims;
}

HloInstruction* CanonicalizeGatherScatterIndices(ExpansionBuilder& b, HloInstruction* indices,
                                                 int64_t index_vector_dim) {
  const Shape& s = indices->shape();
  std::vector<int64_t> perm = IndexBatchDims(s, index_vector_dim);
  int64_t count = 1;
  for (int64_t d : perm) count *= s.dimensions(d);
  int64_t vector_size = 1;
  if (index_vector_dim < s.rank()) {
    vector_size = s.dimensions(index_vector_dim);
    perm.push_back(index_vector_dim);
    indices = b.Transpose(indices, perm);
  }
  return b.Reshape(indices, {count, vector_size});
}

HloInstruction* GatherOutputFromCanonical(ExpansionBuilder& b, HloInstruction* gathered,
                                          const HloInstruction& gather) {
  const GatherDimensionNumbers& g = gather.attrs().gather_dnums;
  const Shape& indices = gather.operand(1)->shape();
  std::vector<int64_t> dims;
  for (int64_t d : IndexBatchDims(indices, g.index_vector_dim)) dims.push_back(indices.dimensions(d));
  const int64_t batch_rank = static_cast<int64_t>(dims.size());
  for (int64_t d = 1; d < gathered->shape().rank(); ++d) dims.push_back(gathered->shape().dimensions(d));
  HloInstruction* result = b.Reshape(gathered, dims);
  // Output dimension i comes from an offset dimension (in order) or from the
  // next batch dimension.
  std::vector<int64_t> perm;
  int64_t next_offset = batch_rank, next_batch = 0;
  for (int64_t i = 0; i < gather.shape().rank(); ++i) {
    bool is_offset = std::find(g.offset_dims.begin(), g.offset_dims.end(), i) != g.offset_dims.end();
    perm.push_back(is_offset ? next_offset++ : next_batch++);
  }
  return b.Transpose(result, perm);
}

absl::StatusOr<std::vector<HloInstruction*>> MakeCountedLoop(
    HloComputation* parent, int64_t trip_count, const std::vector<HloInstruction*>& init,
    const CountedLoopBody& body, const OpMetadata& metadata, const std::string& name_prefix) {
  HloModule* module = parent->parent();
  if (module == nullptr) return absl::InternalError("MakeCountedLoop: the computation is not in a module");
  if (trip_count > INT32_MAX) {
    return absl::UnimplementedError(StrCat("a loop of ", trip_count, " iterations does not fit an s32 counter"));
  }
  const PrimitiveType s32 = PrimitiveType::kS32;
  ExpansionBuilder outer(parent, metadata);
  std::vector<HloInstruction*> init_elements = {outer.ConstantScalar(s32, 0)};
  init_elements.insert(init_elements.end(), init.begin(), init.end());
  HloInstruction* init_tuple = outer.Tuple(init_elements);
  const Shape& state_shape = init_tuple->shape();

  HloComputation* cond = module->AddEmbeddedComputation(std::make_unique<HloComputation>(name_prefix + "_condition"));
  {
    ExpansionBuilder b(cond, metadata);
    HloInstruction* p = cond->AddParameter(HloInstruction::CreateParameter(0, state_shape, "loop_state"));
    HloInstruction* i = b.GetTupleElement(p, 0);
    cond->set_root_instruction(b.Compare(i, b.ConstantScalar(s32, trip_count), ComparisonDirection::kLt));
  }
  HloComputation* loop_body = module->AddEmbeddedComputation(std::make_unique<HloComputation>(name_prefix + "_body"));
  {
    ExpansionBuilder b(loop_body, metadata);
    HloInstruction* p = loop_body->AddParameter(HloInstruction::CreateParameter(0, state_shape, "loop_state"));
    HloInstruction* i = b.GetTupleElement(p, 0);
    std::vector<HloInstruction*> state;
    for (size_t k = 0; k < init.size(); ++k) state.push_back(b.GetTupleElement(p, static_cast<int64_t>(k) + 1));
    ASSIGN_OR_RETURN(std::vector<HloInstruction*> next, body(b, i, state));
    if (next.size() != init.size()) return absl::InternalError("loop body changed the number of state elements");
    std::vector<HloInstruction*> next_elements = {b.Binary(HloOpcode::kAdd, i, b.ConstantScalar(s32, 1))};
    for (size_t k = 0; k < next.size(); ++k) {
      if (!next[k]->shape().Compatible(init[k]->shape())) {
        return absl::InternalError(StrCat("loop body changed the shape of state element ", k, " from ",
                                          init[k]->shape().ToString(), " to ", next[k]->shape().ToString()));
      }
      next_elements.push_back(next[k]);
    }
    loop_body->set_root_instruction(b.Tuple(next_elements));
  }
  HloInstruction* loop = outer.Add(HloInstruction::CreateWhile(state_shape, cond, loop_body, init_tuple));
  std::vector<HloInstruction*> results;
  for (size_t k = 0; k < init.size(); ++k) results.push_back(outer.GetTupleElement(loop, static_cast<int64_t>(k) + 1));
  return results;
}

}  // namespace passlab
