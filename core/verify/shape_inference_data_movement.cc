// Shape inference: ops that move data (slices, concatenation, padding,
// transposes, broadcasts, dynamic slices, gathers, scatters, sort).
#include "core/verify/shape_inference_internal.h"

#include <algorithm>
#include <set>

#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace shape_inference_internal {

absl::StatusOr<Shape> InferSlice(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  const auto& slice = inst.attrs().slice;
  if (static_cast<int64_t>(slice.size()) != op.rank()) {
    return Err(inst, StrCat("slice has ", slice.size(), " ranges but the operand has rank ", op.rank()));
  }
  Shape r = Shape::ArrayWithoutLayout(op.element_type(), {});
  for (int64_t i = 0; i < op.rank(); ++i) {
    const SliceDimension& d = slice[i];
    if (d.stride <= 0) return Err(inst, StrCat("stride of dimension ", i, " must be positive"));
    if (d.start < 0 || d.start > d.limit || d.limit > op.dimensions(i)) {
      return Err(inst, StrCat("range [", d.start, ":", d.limit, "] of dimension ", i,
                              " is outside [0:", op.dimensions(i), "]"));
    }
    r.add_dimension((d.limit - d.start + d.stride - 1) / d.stride);
  }
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferConcatenate(const HloInstruction& inst) {
  if (inst.operand_count() == 0) return Err(inst, "needs at least one operand");
  if (inst.dimensions().size() != 1) return Err(inst, "needs exactly one dimension");
  const Shape& first = inst.operand(0)->shape();
  int64_t dim = inst.dimensions(0);
  if (dim < 0 || dim >= first.rank()) return Err(inst, StrCat("dimension ", dim, " is out of range"));
  Shape r = first;
  int64_t total = 0;
  for (const HloInstruction* op : inst.operands()) {
    const Shape& s = op->shape();
    if (s.rank() != first.rank() || s.element_type() != first.element_type()) {
      return Err(inst, "operands must have the same rank and element type");
    }
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (i != dim && s.dimensions(i) != first.dimensions(i)) {
        return Err(inst, StrCat("operand '", op->name(), "' differs in dimension ", i));
      }
    }
    total += s.dimensions(dim);
  }
  r.set_dimensions(dim, total);
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferPad(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  if (!inst.operand(1)->shape().IsScalar()) return Err(inst, "the padding value must be a scalar");
  const PaddingConfig& pc = inst.attrs().padding_config;
  if (static_cast<int64_t>(pc.dimensions.size()) != op.rank()) {
    return Err(inst, StrCat("padding has ", pc.dimensions.size(), " dimensions but the operand has rank ", op.rank()));
  }
  Shape r = Shape::ArrayWithoutLayout(op.element_type(), {});
  for (int64_t i = 0; i < op.rank(); ++i) {
    const PaddingDimension& p = pc.dimensions[i];
    if (p.interior_padding < 0) return Err(inst, StrCat("interior padding of dimension ", i, " is negative"));
    int64_t d = op.dimensions(i);
    int64_t size = p.edge_padding_low + p.edge_padding_high + d + std::max<int64_t>(d - 1, 0) * p.interior_padding;
    if (size < 0) return Err(inst, StrCat("padding makes dimension ", i, " negative"));
    r.add_dimension(size);
  }
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferTranspose(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  if (static_cast<int64_t>(inst.dimensions().size()) != op.rank()) {
    return Err(inst, "the permutation must list every dimension");
  }
  RETURN_IF_ERROR(CheckDimsValid(inst, inst.dimensions(), op.rank(), "permutation entry"));
  Shape r = Shape::ArrayWithoutLayout(op.element_type(), {});
  for (int64_t d : inst.dimensions()) r.add_dimension(op.dimensions(d), op.is_dynamic_dimension(d));
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferBroadcast(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  if (!HasShape(inst)) return OwnShape(inst, "broadcast dimensions give only the operand's place");
  const Shape& out = inst.shape();
  if (static_cast<int64_t>(inst.dimensions().size()) != op.rank()) {
    return Err(inst, StrCat("dimensions has ", inst.dimensions().size(), " entries but the operand has rank ", op.rank()));
  }
  RETURN_IF_ERROR(CheckDimsValid(inst, inst.dimensions(), out.rank(), "broadcast dimension"));
  for (int64_t i = 0; i < op.rank(); ++i) {
    if (op.dimensions(i) != out.dimensions(inst.dimensions(i))) {
      return Err(inst, StrCat("operand dimension ", i, " (", op.dimensions(i), ") != output dimension ",
                              inst.dimensions(i), " (", out.dimensions(inst.dimensions(i)), ")"));
    }
  }
  if (op.element_type() != out.element_type()) return Err(inst, "element types differ");
  return out;
}

absl::StatusOr<Shape> InferDynamicSlice(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  const auto& sizes = inst.attrs().slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != op.rank()) return Err(inst, "dynamic_slice_sizes must match the rank");
  if (inst.operand_count() != op.rank() + 1) {
    return Err(inst, StrCat("needs ", op.rank(), " scalar start indices, got ", inst.operand_count() - 1));
  }
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (!s.IsScalar() || !IsIntegralType(s.element_type())) return Err(inst, "start indices must be integer scalars");
  }
  Shape r = Shape::ArrayWithoutLayout(op.element_type(), {});
  for (int64_t i = 0; i < op.rank(); ++i) {
    if (sizes[i] < 0 || sizes[i] > op.dimensions(i)) {
      return Err(inst, StrCat("slice size ", sizes[i], " of dimension ", i, " exceeds ", op.dimensions(i)));
    }
    r.add_dimension(sizes[i]);
  }
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferDynamicUpdateSlice(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  const Shape& upd = inst.operand(1)->shape();
  if (upd.rank() != op.rank() || upd.element_type() != op.element_type()) {
    return Err(inst, "the update must have the operand's rank and element type");
  }
  if (inst.operand_count() != op.rank() + 2) return Err(inst, "needs one scalar start index per dimension");
  for (int64_t i = 0; i < op.rank(); ++i) {
    if (upd.dimensions(i) > op.dimensions(i)) return Err(inst, StrCat("update is larger in dimension ", i));
  }
  for (int64_t i = 2; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (!s.IsScalar() || !IsIntegralType(s.element_type())) return Err(inst, "start indices must be integer scalars");
  }
  return ArrayLike(op, op.element_type());
}

absl::StatusOr<Shape> InferScatter(const HloInstruction& inst) {
  int64_t n = (inst.operand_count() - 1) / 2;
  if (n < 1 || inst.operand_count() != 2 * n + 1) return Err(inst, "needs N operands, indices and N updates");
  std::vector<Shape> results;
  std::vector<PrimitiveType> types;
  const ScatterDimensionNumbers& d = inst.attrs().scatter_dnums;
  const Shape& indices = inst.operand(n)->shape();
  if (!IsIntegralType(indices.element_type())) return Err(inst, "scatter indices must be integers");
  if (d.index_vector_dim < 0 || d.index_vector_dim > indices.rank()) {
    return Err(inst, "index_vector_dim is out of range");
  }
  for (int64_t i = 0; i < n; ++i) {
    const Shape& op = inst.operand(i)->shape();
    const Shape& upd = inst.operand(n + 1 + i)->shape();
    RETURN_IF_ERROR(CheckDimsValid(inst, d.update_window_dims, upd.rank(), "update window dimension"));
    int64_t scatter_dims = indices.rank() - (d.index_vector_dim < indices.rank() ? 1 : 0);
    if (upd.rank() != scatter_dims + static_cast<int64_t>(d.update_window_dims.size())) {
      return Err(inst, StrCat("updates have rank ", upd.rank(), " but need ", scatter_dims, " scatter dims + ",
                              d.update_window_dims.size(), " window dims"));
    }
    if (static_cast<int64_t>(d.update_window_dims.size() + d.inserted_window_dims.size() +
                             d.input_batching_dims.size()) != op.rank()) {
      return Err(inst, "window dims + inserted dims + batching dims must equal the operand rank");
    }
    results.push_back(ArrayLike(op, op.element_type()));
    types.push_back(op.element_type());
  }
  RETURN_IF_ERROR(CheckReducer(inst, inst.to_apply(), types));
  return n == 1 ? results[0] : Shape::Tuple(results);
}

absl::StatusOr<Shape> InferSort(const HloInstruction& inst) {
  if (inst.operand_count() == 0) return Err(inst, "needs operands");
  const Shape& first = inst.operand(0)->shape();
  if (inst.dimensions().size() != 1 || inst.dimensions(0) < 0 || inst.dimensions(0) >= std::max<int64_t>(first.rank(), 1)) {
    return Err(inst, "needs one sort dimension within the rank");
  }
  std::vector<Shape> params;
  std::vector<Shape> results;
  for (const HloInstruction* op : inst.operands()) {
    if (!op->shape().SameDimensions(first)) return Err(inst, "all operands must have the same dimensions");
    params.push_back(Shape::Scalar(op->shape().element_type()));
    params.push_back(Shape::Scalar(op->shape().element_type()));
    results.push_back(ArrayLike(op->shape(), op->shape().element_type()));
  }
  if (absl::Status s = CheckSignature(inst, inst.to_apply(), params, Shape::Scalar(PrimitiveType::kPred), "comparator");
      !s.ok()) {
    return s;
  }
  return results.size() == 1 ? results[0] : Shape::Tuple(results);
}

}  // namespace shape_inference_internal

using namespace shape_inference_internal;

absl::StatusOr<Shape> InferGatherShape(const Shape& operand, const Shape& indices,
                                       const GatherDimensionNumbers& d, const std::vector<int64_t>& slice_sizes) {
  auto fail = [](std::string m) { return absl::InvalidArgumentError(StrCat("gather: ", m)); };
  if (!IsIntegralType(indices.element_type())) return fail("start indices must be integers");
  if (d.index_vector_dim < 0 || d.index_vector_dim > indices.rank()) return fail("index_vector_dim is out of range");
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) return fail("slice_sizes must match the operand rank");
  int64_t index_vector_size = d.index_vector_dim < indices.rank() ? indices.dimensions(d.index_vector_dim) : 1;
  if (static_cast<int64_t>(d.start_index_map.size()) != index_vector_size) {
    return fail(StrCat("start_index_map has ", d.start_index_map.size(), " entries but the index vector has ",
                       index_vector_size));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dimensions(i)) {
      return fail(StrCat("slice size ", slice_sizes[i], " of dimension ", i, " exceeds ", operand.dimensions(i)));
    }
  }
  for (int64_t c : d.collapsed_slice_dims) {
    if (c < 0 || c >= operand.rank() || slice_sizes[c] > 1) return fail("collapsed slice dims must have size <= 1");
  }
  std::vector<int64_t> batch_dims;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i != d.index_vector_dim) batch_dims.push_back(indices.dimensions(i));
  }
  std::vector<int64_t> offset_sizes;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    bool collapsed = std::find(d.collapsed_slice_dims.begin(), d.collapsed_slice_dims.end(), i) != d.collapsed_slice_dims.end();
    bool batching = std::find(d.operand_batching_dims.begin(), d.operand_batching_dims.end(), i) != d.operand_batching_dims.end();
    if (!collapsed && !batching) offset_sizes.push_back(slice_sizes[i]);
  }
  if (offset_sizes.size() != d.offset_dims.size()) {
    return fail(StrCat("offset_dims has ", d.offset_dims.size(), " entries but ", offset_sizes.size(),
                       " slice dimensions are not collapsed"));
  }
  int64_t rank = static_cast<int64_t>(batch_dims.size() + offset_sizes.size());
  std::vector<int64_t> out(rank);
  size_t bi = 0, oi = 0;
  for (int64_t i = 0; i < rank; ++i) {
    auto it = std::find(d.offset_dims.begin(), d.offset_dims.end(), i);
    if (it != d.offset_dims.end()) {
      out[i] = offset_sizes[oi++];
    } else {
      if (bi >= batch_dims.size()) return fail("offset_dims are inconsistent with the output rank");
      out[i] = batch_dims[bi++];
    }
  }
  return Shape(operand.element_type(), out);
}

}  // namespace passlab
