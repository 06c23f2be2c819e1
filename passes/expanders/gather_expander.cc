#include "passes/expanders/gather_expander.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/verify/shape_inference.h"

namespace passlab {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool IsIota(const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Instruction makers in the style of XLA's hlo_creation_utils: each adds
// its instruction to the operand's computation, with no metadata.

HloInstruction* Add(HloComputation* c, std::unique_ptr<HloInstruction> inst) {
  return c->AddInstruction(std::move(inst));
}

HloInstruction* MakeReshape(HloInstruction* x, std::vector<int64_t> dims) {
  return Add(x->parent(), HloInstruction::CreateReshape(Shape(x->shape().element_type(), std::move(dims)), x));
}

HloInstruction* MakeTranspose(HloInstruction* x, const std::vector<int64_t>& permutation) {
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(x->shape().dimensions(p));
  return Add(x->parent(),
             HloInstruction::CreateTranspose(Shape(x->shape().element_type(), std::move(dims)), x, permutation));
}

// x (a scalar or lower-rank array) broadcast to `dims`.
HloInstruction* MakeBroadcast(HloInstruction* x, std::vector<int64_t> broadcast_dimensions, std::vector<int64_t> dims) {
  return Add(x->parent(), HloInstruction::CreateBroadcast(Shape(x->shape().element_type(), std::move(dims)), x,
                                                          std::move(broadcast_dimensions)));
}

HloInstruction* MakeScalarConstant(HloComputation* c, PrimitiveType type, int64_t value) {
  Literal literal(Shape::Scalar(type));
  literal.SetInt(0, value);
  return Add(c, HloInstruction::CreateConstant(std::move(literal)));
}

// x without the dimensions in `elided` (each of size 1).
HloInstruction* ElideDegenerateDims(HloInstruction* x, const std::vector<int64_t>& elided) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (!Contains(elided, d)) dims.push_back(x->shape().dimensions(d));
  }
  return MakeReshape(x, std::move(dims));
}

HloInstruction* PrependDegenerateDims(HloInstruction* x, int64_t n) {
  std::vector<int64_t> dims(n, 1);
  dims.insert(dims.end(), x->shape().dimensions().begin(), x->shape().dimensions().end());
  return MakeReshape(x, std::move(dims));
}

HloInstruction* CollapseFirstNDims(HloInstruction* x, int64_t n) {
  std::vector<int64_t> dims = {1};
  for (int64_t d = 0; d < n; ++d) dims[0] *= x->shape().dimensions(d);
  dims.insert(dims.end(), x->shape().dimensions().begin() + n, x->shape().dimensions().end());
  return MakeReshape(x, std::move(dims));
}

HloInstruction* ExpandFirstDimIntoNDims(HloInstruction* x, const std::vector<int64_t>& expanded) {
  std::vector<int64_t> dims = expanded;
  dims.insert(dims.end(), x->shape().dimensions().begin() + 1, x->shape().dimensions().end());
  return MakeReshape(x, std::move(dims));
}

// A rank-1 x with zeros before and after.
HloInstruction* PadVectorWithZeros(HloInstruction* x, int64_t prepend, int64_t append) {
  HloComputation* c = x->parent();
  PaddingConfig config;
  config.dimensions.push_back({prepend, append, 0});
  HloInstruction* zero = Add(c, HloInstruction::CreateConstant(Literal(Shape::Scalar(x->shape().element_type()))));
  Shape shape(x->shape().element_type(), {x->shape().dimensions(0) + prepend + append});
  return Add(c, HloInstruction::CreatePad(shape, x, zero, config));
}

// The elements of the rank-1 `starts` as scalars (a slice and a reshape
// each).
std::vector<HloInstruction*> ScalarStarts(HloInstruction* starts) {
  std::vector<HloInstruction*> scalars;
  PrimitiveType type = starts->shape().element_type();
  for (int64_t i = 0; i < starts->shape().dimensions(0); ++i) {
    HloInstruction* slice =
        Add(starts->parent(), HloInstruction::CreateSlice(Shape(type, {1}), starts, {{i, i + 1, 1}}));
    scalars.push_back(MakeReshape(slice, {}));
  }
  return scalars;
}

// dynamic-slice of x at the start vector `starts`.
HloInstruction* MakeDynamicSlice(HloInstruction* x, HloInstruction* starts, std::vector<int64_t> sizes) {
  std::vector<HloInstruction*> scalars = ScalarStarts(starts);
  Shape shape(x->shape().element_type(), sizes);
  return Add(x->parent(), HloInstruction::CreateDynamicSlice(shape, x, scalars, std::move(sizes)));
}

HloInstruction* MakeDynamicUpdateSlice(HloInstruction* x, HloInstruction* update, HloInstruction* starts) {
  std::vector<HloInstruction*> scalars = ScalarStarts(starts);
  return Add(x->parent(), HloInstruction::CreateDynamicUpdateSlice(x->shape(), x, update, scalars));
}

// The indices dimensions other than the index vector dimension.
std::vector<int64_t> IndexBatchDimensions(const Shape& indices, int64_t index_vector_dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != index_vector_dim) dims.push_back(d);
  }
  return dims;
}

// The indices as [N, K] rows of index vectors, or [N] for scalar indices
// (XLA's CanonicalizeGatherIndices): the index vector dimension moved last,
// the others collapsed into the first.
HloInstruction* CanonicalizeGatherIndices(HloInstruction* indices, int64_t index_vector_dim) {
  const int64_t rank = indices->shape().rank();
  HloInstruction* transposed = indices;
  if (index_vector_dim < rank - 1) {
    std::vector<int64_t> permutation = IndexBatchDimensions(indices->shape(), index_vector_dim);
    permutation.push_back(index_vector_dim);
    if (!IsIota(permutation)) transposed = MakeTranspose(indices, permutation);
  }
  const int64_t index_dims = index_vector_dim == rank ? 0 : 1;
  if (transposed->shape().rank() == index_dims) return PrependDegenerateDims(transposed, 1);
  return CollapseFirstNDims(transposed, transposed->shape().rank() - index_dims);
}

// The coordinates of iteration `induction_var` along the indices' explicit
// batching dimensions, in the order of start_indices_batching_dims (XLA's
// GenerateExplicitBatchDimIndices): the flat iteration number split by
// remainders and quotients, minor dimension first.
std::vector<HloInstruction*> ExplicitBatchDimIndices(const Shape& indices, int64_t index_vector_dim,
                                                     const std::vector<int64_t>& batching_dims,
                                                     HloInstruction* induction_var) {
  if (batching_dims.empty()) return {};
  HloComputation* c = induction_var->parent();
  const Shape& shape = induction_var->shape();
  int64_t remaining = indices.rank() == index_vector_dim ? indices.rank() : indices.rank() - 1;
  std::vector<HloInstruction*> result(batching_dims.size(), nullptr);
  HloInstruction* dividend = induction_var;
  for (int64_t d = indices.rank() - 1; d >= 0; --d) {
    if (d == index_vector_dim) continue;
    auto it = std::find(batching_dims.begin(), batching_dims.end(), d);
    --remaining;
    if (remaining == 0) {
      // The most major dimension: the quotient itself, no remainder.
      if (it != batching_dims.end()) result[it - batching_dims.begin()] = dividend;
      break;
    }
    HloInstruction* divisor = MakeScalarConstant(c, shape.element_type(), indices.dimensions(d));
    if (it != batching_dims.end()) {
      result[it - batching_dims.begin()] =
          Add(c, HloInstruction::CreateBinary(shape, HloOpcode::kRemainder, dividend, divisor));
    }
    dividend = Add(c, HloInstruction::CreateBinary(shape, HloOpcode::kDivide, dividend, divisor));
  }
  return result;
}

// The operand start for one index vector (XLA's
// ExpandIndexVectorIntoOperandSpace): per operand dimension, the index
// vector's component that start_index_map maps there, the iteration's
// batch coordinate for an operand batching dimension, else 0.
HloInstruction* ExpandIndexVectorIntoOperandSpace(const HloInstruction& gather, int64_t operand_rank,
                                                  HloInstruction* index_vector, HloInstruction* induction_var) {
  const GatherDimensionNumbers& g = gather.attrs().gather_dnums;
  HloComputation* c = index_vector->parent();
  const PrimitiveType type = index_vector->shape().element_type();
  if (operand_rank == 0) return Add(c, HloInstruction::CreateConstant(Literal(Shape(type, {0}))));
  HloInstruction* zero = Add(c, HloInstruction::CreateConstant(Literal(Shape(type, {1}))));
  if (induction_var->shape().element_type() != type) {
    induction_var = Add(c, HloInstruction::CreateConvert(Shape::Scalar(type), induction_var));
  }
  std::vector<HloInstruction*> batch_indices = ExplicitBatchDimIndices(gather.operand(1)->shape(), g.index_vector_dim,
                                                                       g.start_indices_batching_dims, induction_var);
  std::vector<HloInstruction*> components;
  size_t seen_batch_dims = 0;
  for (int64_t d = 0; d < operand_rank; ++d) {
    auto it = std::find(g.start_index_map.begin(), g.start_index_map.end(), d);
    if (it != g.start_index_map.end()) {
      int64_t k = it - g.start_index_map.begin();
      components.push_back(Add(c, HloInstruction::CreateSlice(Shape(type, {1}), index_vector, {{k, k + 1, 1}})));
    } else if (Contains(g.operand_batching_dims, d)) {
      components.push_back(MakeBroadcast(batch_indices[seen_batch_dims++], {}, {1}));
    } else {
      components.push_back(zero);
    }
  }
  return Add(c, HloInstruction::CreateConcatenate(Shape(type, {operand_rank}), components, 0));
}

// The operand dimensions a slice drops: collapsed and batching ones.
std::vector<int64_t> DegeneratedSliceDims(const GatherDimensionNumbers& g) {
  std::vector<int64_t> dims = g.collapsed_slice_dims;
  dims.insert(dims.end(), g.operand_batching_dims.begin(), g.operand_batching_dims.end());
  return dims;
}

// One iteration (XLA's GatherLoopBody): state is {operand, canonical
// indices, accumulator}; the accumulator gets row i.
std::vector<HloInstruction*> GatherLoopBody(const HloInstruction& gather, HloInstruction* induction_var,
                                            const std::vector<HloInstruction*>& state) {
  const GatherDimensionNumbers& g = gather.attrs().gather_dnums;
  HloInstruction* operand = state[0];
  HloInstruction* indices = state[1];
  HloInstruction* accumulator = state[2];
  HloInstruction* induction_var_as_vector = MakeBroadcast(induction_var, {}, {1});
  HloInstruction* index_vector;
  if (indices->shape().rank() == 1) {
    index_vector = MakeDynamicSlice(indices, induction_var_as_vector, {1});
  } else {
    HloInstruction* row_start = PadVectorWithZeros(induction_var_as_vector, 0, 1);
    HloInstruction* row = MakeDynamicSlice(indices, row_start, {1, indices->shape().dimensions(1)});
    index_vector = ElideDegenerateDims(row, {0});
  }
  HloInstruction* start =
      ExpandIndexVectorIntoOperandSpace(gather, operand->shape().rank(), index_vector, induction_var);
  HloInstruction* slice = MakeDynamicSlice(operand, start, gather.attrs().slice_sizes);
  HloInstruction* collapsed = ElideDegenerateDims(slice, DegeneratedSliceDims(g));
  HloInstruction* update = PrependDegenerateDims(collapsed, 1);
  HloInstruction* row_index = PadVectorWithZeros(induction_var_as_vector, 0, collapsed->shape().rank());
  return {operand, indices, MakeDynamicUpdateSlice(accumulator, update, row_index)};
}

// `for (i = 0; i < trip_count; ++i) state = body(i, state)` as a while loop
// built the way XLA's WhileUtil::MakeCountedLoop builds it: the state tuple
// is (s32 i, init...), the loop gets `metadata`, and the results are
// get-tuple-elements of the while.
std::vector<HloInstruction*> MakeCountedLoop(
    HloComputation* parent, int64_t trip_count, const std::vector<HloInstruction*>& init,
    const std::function<std::vector<HloInstruction*>(HloInstruction*, const std::vector<HloInstruction*>&)>& body,
    const OpMetadata& metadata) {
  HloModule* module = parent->parent();
  const PrimitiveType s32 = PrimitiveType::kS32;
  std::vector<Shape> state_shapes = {Shape::Scalar(s32)};
  for (HloInstruction* x : init) state_shapes.push_back(x->shape());
  const Shape state_shape = Shape::Tuple(state_shapes);

  auto cond = std::make_unique<HloComputation>("while_cond");
  HloComputation* condition = module->AddEmbeddedComputation(std::move(cond));
  {
    HloInstruction* p = condition->AddParameter(HloInstruction::CreateParameter(0, state_shape, "param_0"));
    HloInstruction* limit = MakeScalarConstant(condition, s32, trip_count);
    HloInstruction* i = Add(condition, HloInstruction::CreateGetTupleElement(p, 0));
    condition->set_root_instruction(Add(condition, HloInstruction::CreateCompare(Shape::Scalar(PrimitiveType::kPred), i,
                                                                                 limit, ComparisonDirection::kLt)));
  }
  HloComputation* loop_body = module->AddEmbeddedComputation(std::make_unique<HloComputation>("while_body"));
  {
    HloInstruction* p = loop_body->AddParameter(HloInstruction::CreateParameter(0, state_shape, "param_0"));
    HloInstruction* one = MakeScalarConstant(loop_body, s32, 1);
    HloInstruction* i = Add(loop_body, HloInstruction::CreateGetTupleElement(p, 0));
    HloInstruction* next_i = Add(loop_body, HloInstruction::CreateBinary(Shape::Scalar(s32), HloOpcode::kAdd, i, one));
    std::vector<HloInstruction*> state;
    for (size_t k = 0; k < init.size(); ++k) {
      state.push_back(Add(loop_body, HloInstruction::CreateGetTupleElement(p, static_cast<int64_t>(k) + 1)));
    }
    std::vector<HloInstruction*> next = body(i, state);
    next.insert(next.begin(), next_i);
    loop_body->set_root_instruction(Add(loop_body, HloInstruction::CreateTuple(next)));
  }
  std::vector<HloInstruction*> init_elements = {MakeScalarConstant(parent, s32, 0)};
  init_elements.insert(init_elements.end(), init.begin(), init.end());
  HloInstruction* init_tuple = Add(parent, HloInstruction::CreateTuple(init_elements));
  auto loop = HloInstruction::CreateWhile(state_shape, condition, loop_body, init_tuple);
  loop->set_metadata(metadata);
  HloInstruction* while_instr = Add(parent, std::move(loop));
  std::vector<HloInstruction*> results;
  for (size_t k = 0; k < init.size(); ++k) {
    results.push_back(
        Add(parent, HloInstruction::CreateGetTupleElement(init[k]->shape(), while_instr, static_cast<int64_t>(k) + 1)));
  }
  return results;
}

bool GatherIsBroadcast(const HloInstruction& gather) {
  return gather.attrs().slice_sizes == gather.operand(0)->shape().dimensions();
}

}  // namespace

int64_t GatherLoopTripCount(const HloInstruction& gather) {
  const Shape& indices = gather.operand(1)->shape();
  int64_t count = 1;
  for (int64_t d : IndexBatchDimensions(indices, gather.attrs().gather_dnums.index_vector_dim)) {
    count *= indices.dimensions(d);
  }
  return count;
}

bool GatherExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kGather || inst->shape().element_count() == 0) return false;
  return mode_ == Mode::kEliminateAllGathers || GatherLoopTripCount(*inst) == 1 || GatherIsBroadcast(*inst);
}

absl::StatusOr<HloInstruction*> GatherExpander::ExpandInstruction(HloInstruction* gather) {
  const GatherDimensionNumbers& g = gather->attrs().gather_dnums;
  HloInstruction* operand = gather->mutable_operand(0);
  HloInstruction* indices = gather->mutable_operand(1);
  ASSIGN_OR_RETURN(Shape inferred, InferGatherShape(operand->shape(), indices->shape(), g, gather->attrs().slice_sizes));
  if (!inferred.SameDimensions(gather->shape())) {
    return absl::InvalidArgumentError(StrCat("gather '", gather->name(), "' has shape ", gather->shape().ToString(),
                                             " but its operands give ", inferred.ToString()));
  }
  HloComputation* c = gather->parent();

  // Every start clamps to 0: a broadcast of the operand without its
  // dropped dimensions.
  if (GatherIsBroadcast(*gather)) {
    if (operand->shape().element_count() == 0) {
      HloInstruction* zero =
          Add(c, HloInstruction::CreateConstant(Literal(Shape::Scalar(gather->shape().element_type()))));
      return Add(c, HloInstruction::CreateBroadcast(gather->shape(), zero, {}));
    }
    HloInstruction* window = ElideDegenerateDims(operand, DegeneratedSliceDims(g));
    window->set_metadata(gather->metadata());
    HloInstruction* broadcast = Add(c, HloInstruction::CreateBroadcast(gather->shape(), window, g.offset_dims));
    broadcast->set_metadata(gather->metadata());
    return broadcast;
  }

  const int64_t trip_count = GatherLoopTripCount(*gather);
  if (trip_count > std::numeric_limits<int32_t>::max()) {
    return absl::UnimplementedError(
        StrCat("Gather operations with more than 2147483647 gather indices are not "
               "supported. This error occurred for ",
               gather->name(), "."));
  }
  HloInstruction* canonical_indices = CanonicalizeGatherIndices(indices, g.index_vector_dim);
  // The accumulator: [N, the slice dimensions the output keeps].
  std::vector<int64_t> accumulator_dims = {trip_count};
  for (int64_t d = 0; d < static_cast<int64_t>(gather->attrs().slice_sizes.size()); ++d) {
    if (!Contains(g.collapsed_slice_dims, d) && !Contains(g.operand_batching_dims, d)) {
      accumulator_dims.push_back(gather->attrs().slice_sizes[d]);
    }
  }
  HloInstruction* zero = Add(c, HloInstruction::CreateConstant(Literal(Shape::Scalar(gather->shape().element_type()))));
  HloInstruction* accumulator_init = MakeBroadcast(zero, {}, accumulator_dims);
  std::vector<HloInstruction*> results = MakeCountedLoop(
      c, trip_count, {operand, canonical_indices, accumulator_init},
      [&](HloInstruction* i, const std::vector<HloInstruction*>& state) { return GatherLoopBody(*gather, i, state); },
      gather->metadata());
  HloInstruction* accumulator = results.back();

  // Split N back into the indices' batch dimensions (or drop it for a
  // single index), then move the offset dimensions into place.
  std::vector<int64_t> batch_bounds;
  for (int64_t d : IndexBatchDimensions(indices->shape(), g.index_vector_dim)) {
    batch_bounds.push_back(indices->shape().dimensions(d));
  }
  accumulator =
      batch_bounds.empty() ? ElideDegenerateDims(accumulator, {0}) : ExpandFirstDimIntoNDims(accumulator, batch_bounds);
  const int64_t output_rank = gather->shape().rank();
  std::vector<int64_t> permutation;
  int64_t next_batch = 0;
  int64_t next_offset = output_rank - static_cast<int64_t>(g.offset_dims.size());
  for (int64_t d = 0; d < output_rank; ++d) {
    permutation.push_back(Contains(g.offset_dims, d) ? next_offset++ : next_batch++);
  }
  return IsIota(permutation) ? accumulator : MakeTranspose(accumulator, permutation);
}

}  // namespace passlab
