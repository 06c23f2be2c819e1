// Data movement: every op here copies elements without arithmetic.
#include <algorithm>
#include <cstring>

#include "core/eval/eval_internal.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"

namespace passlab::eval {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The same row-major bytes under another shape (reshape, copy, ...).
Literal Relabel(const Literal& src, const Shape& shape) {
  if (shape.IsTuple() || src.shape().IsTuple()) {
    Literal l = src;
    if (l.shape().Compatible(shape)) l.set_shape_layout(shape);
    return l;
  }
  Literal out(shape);
  size_t n = std::min<size_t>(out.size_bytes(), src.size_bytes());
  if (n > 0) std::memcpy(out.untyped_data(), src.untyped_data(), n);
  return out;
}

std::vector<int64_t> MinorToMajor(const Shape& s) {
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major().size()) == s.rank()) {
    return s.layout().minor_to_major();
  }
  std::vector<int64_t> m2m(s.rank());
  for (int64_t i = 0; i < s.rank(); ++i) m2m[i] = s.rank() - 1 - i;
  return m2m;
}

// Physical strides (in elements) of each logical dimension under the layout.
std::vector<int64_t> PhysicalStrides(const Shape& s) {
  std::vector<int64_t> m2m = MinorToMajor(s), strides(s.rank());
  int64_t stride = 1;
  for (int64_t d : m2m) {
    strides[d] = stride;
    stride *= s.dimensions(d);
  }
  return strides;
}

// bitcast reinterprets the physical buffer: element i of the output is the
// element at the same physical offset of the operand, under each one's
// layout (minor_to_major; tiles are not modelled).
Literal Bitcast(const Literal& src, const Shape& shape) {
  const Shape& in = src.shape();
  if (!shape.IsArray() || !in.IsArray() || PrimitiveByteWidth(shape.element_type()) != PrimitiveByteWidth(in.element_type()) ||
      shape.element_count() != in.element_count() ||
      (PhysicalStrides(shape) == RowMajorStrides(shape.dimensions()) &&
       PhysicalStrides(in) == RowMajorStrides(in.dimensions()))) {
    return Relabel(src, shape);
  }
  Literal out(shape);
  int w = PrimitiveByteWidth(shape.element_type());
  std::vector<int64_t> out_strides = PhysicalStrides(shape), in_m2m = MinorToMajor(in);
  std::vector<int64_t> in_row = RowMajorStrides(in.dimensions());
  ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
    int64_t p = 0;
    for (size_t d = 0; d < idx.size(); ++d) p += idx[d] * out_strides[d];
    int64_t src_linear = 0;
    for (int64_t d : in_m2m) {
      src_linear += (p % in.dimensions(d)) * in_row[d];
      p /= in.dimensions(d);
    }
    std::memcpy(out.untyped_data() + linear * w, src.untyped_data() + src_linear * w, w);
  });
  return out;
}

// Start indices from scalar operands [first, first + rank), clamped so the
// slice of `sizes` fits (XLA's dynamic-slice rule).
Index ClampedStarts(Operands ops, int64_t first, const Shape& operand, const std::vector<int64_t>& sizes) {
  Index start(operand.rank());
  for (int64_t d = 0; d < operand.rank(); ++d) {
    int64_t s = ops[first + d]->GetInt(0);
    if (IsUnsignedIntegralType(ops[first + d]->shape().element_type()) && ops[first + d]->GetUint(0) > (uint64_t{1} << 62)) {
      s = int64_t{1} << 62;
    }
    start[d] = std::clamp<int64_t>(s, 0, std::max<int64_t>(operand.dimensions(d) - sizes[d], 0));
  }
  return start;
}

absl::StatusOr<Literal> Gather(const HloInstruction& inst, const Literal& operand, const Literal& indices) {
  const Shape& shape = inst.shape();
  const GatherDimensionNumbers& g = inst.attrs().gather_dnums;
  const auto& sizes = inst.attrs().slice_sizes;
  const Shape& os = operand.shape();
  const Shape& is = indices.shape();
  Literal out(shape);
  std::vector<int64_t> batch_out_dims, offset_out_dims;
  for (int64_t i = 0; i < shape.rank(); ++i) (Contains(g.offset_dims, i) ? offset_out_dims : batch_out_dims).push_back(i);
  // Operand dims that offsets walk along (neither collapsed nor batching).
  std::vector<int64_t> offset_operand_dims;
  for (int64_t i = 0; i < os.rank(); ++i) {
    if (!Contains(g.collapsed_slice_dims, i) && !Contains(g.operand_batching_dims, i)) offset_operand_dims.push_back(i);
  }
  if (offset_operand_dims.size() != offset_out_dims.size() || static_cast<int64_t>(sizes.size()) != os.rank()) {
    return absl::InvalidArgumentError("gather dimension numbers do not match the shapes");
  }
  int w = PrimitiveByteWidth(shape.element_type());
  std::vector<int64_t> index_dims;  // indices dims other than index_vector_dim
  for (int64_t d = 0; d < is.rank(); ++d) {
    if (d != g.index_vector_dim) index_dims.push_back(d);
  }
  Index sidx(is.rank()), start(os.rank()), src(os.rank());
  ForEachIndex(shape.dimensions(), [&](const Index& oidx, int64_t olin) {
    for (size_t j = 0; j < index_dims.size(); ++j) sidx[index_dims[j]] = oidx[batch_out_dims[j]];
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < g.start_index_map.size(); ++k) {
      if (g.index_vector_dim < is.rank()) sidx[g.index_vector_dim] = static_cast<int64_t>(k);
      start[g.start_index_map[k]] = indices.GetInt(Linear(sidx, is.dimensions()));
    }
    for (int64_t d = 0; d < os.rank(); ++d) src[d] = std::clamp<int64_t>(start[d], 0, os.dimensions(d) - sizes[d]);
    for (size_t k = 0; k < g.operand_batching_dims.size(); ++k) {
      src[g.operand_batching_dims[k]] = sidx[g.start_indices_batching_dims[k]];
    }
    for (size_t k = 0; k < offset_operand_dims.size(); ++k) src[offset_operand_dims[k]] += oidx[offset_out_dims[k]];
    std::memcpy(out.untyped_data() + olin * w, operand.untyped_data() + Linear(src, os.dimensions()) * w, w);
  });
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalDataMovement(const HloInstruction& inst, Operands ops) {
  const Shape& shape = inst.shape();
  int w = shape.IsArray() ? PrimitiveByteWidth(shape.element_type()) : 0;
  switch (inst.opcode()) {
    case HloOpcode::kCopy: case HloOpcode::kReshape: case HloOpcode::kSetDimensionSize:
      return Relabel(*ops[0], shape);
    case HloOpcode::kBitcast:
      return Bitcast(*ops[0], shape);
    case HloOpcode::kGetDimensionSize: {
      Literal out(Shape::Scalar(PrimitiveType::kS32));
      out.SetInt(0, ops[0]->shape().dimensions(inst.dimensions(0)));
      return out;
    }
    case HloOpcode::kDynamicReshape: {
      // Sizes are not tracked: the leading elements fill the output's
      // dynamic extent in row-major order.
      Literal out(shape);
      std::vector<int64_t> sizes;
      for (int64_t d = 0; d < shape.rank(); ++d) {
        sizes.push_back(std::clamp<int64_t>(ops[1 + d]->GetInt(0), 0, shape.dimensions(d)));
      }
      ForEachIndex(sizes, [&](const Index& idx, int64_t linear) {
        if (linear < ops[0]->element_count()) CopyElement(out, Linear(idx, shape.dimensions()), *ops[0], linear);
      });
      return out;
    }
    case HloOpcode::kBroadcast: {
      Literal out(shape);
      const Literal& a = *ops[0];
      const auto& dims = inst.dimensions();
      if (a.element_count() == 1) return Filled(shape, a);
      ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
        int64_t src = 0;
        for (size_t k = 0; k < dims.size(); ++k) src = src * a.shape().dimensions(k) + idx[dims[k]];
        std::memcpy(out.untyped_data() + linear * w, a.untyped_data() + src * w, w);
      });
      return out;
    }
    case HloOpcode::kTranspose: {
      Literal out(shape);
      const Literal& a = *ops[0];
      std::vector<int64_t> strides = RowMajorStrides(a.shape().dimensions());
      const auto& perm = inst.dimensions();
      std::vector<int64_t> src_strides(perm.size());
      for (size_t k = 0; k < perm.size(); ++k) src_strides[k] = strides[perm[k]];
      ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
        int64_t src = 0;
        for (size_t k = 0; k < idx.size(); ++k) src += idx[k] * src_strides[k];
        std::memcpy(out.untyped_data() + linear * w, a.untyped_data() + src * w, w);
      });
      return out;
    }
    case HloOpcode::kReverse: {
      Literal out(shape);
      const Literal& a = *ops[0];
      Index src;
      ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
        src = idx;
        for (int64_t d : inst.dimensions()) src[d] = shape.dimensions(d) - 1 - idx[d];
        std::memcpy(out.untyped_data() + linear * w, a.untyped_data() + Linear(src, shape.dimensions()) * w, w);
      });
      return out;
    }
    case HloOpcode::kSlice: {
      Literal out(shape);
      const Literal& a = *ops[0];
      const auto& sl = inst.attrs().slice;
      Index src(shape.rank());
      ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
        for (size_t d = 0; d < idx.size(); ++d) src[d] = sl[d].start + idx[d] * sl[d].stride;
        std::memcpy(out.untyped_data() + linear * w, a.untyped_data() + Linear(src, a.shape().dimensions()) * w, w);
      });
      return out;
    }
    case HloOpcode::kDynamicSlice: {
      const Literal& a = *ops[0];
      if (ops.size() != static_cast<size_t>(1 + a.shape().rank())) {
        return absl::InvalidArgumentError("dynamic-slice needs one scalar start index per operand dimension");
      }
      Index start = ClampedStarts(ops, 1, a.shape(), shape.dimensions());
      Literal out(shape);
      Index src(shape.rank());
      ForEachIndex(shape.dimensions(), [&](const Index& idx, int64_t linear) {
        for (size_t d = 0; d < idx.size(); ++d) src[d] = start[d] + idx[d];
        std::memcpy(out.untyped_data() + linear * w, a.untyped_data() + Linear(src, a.shape().dimensions()) * w, w);
      });
      return out;
    }
    case HloOpcode::kDynamicUpdateSlice: {
      Literal out = Relabel(*ops[0], shape);
      const Literal& u = *ops[1];
      if (ops.size() != static_cast<size_t>(2 + shape.rank())) {
        return absl::InvalidArgumentError("dynamic-update-slice needs one scalar start index per operand dimension");
      }
      Index start = ClampedStarts(ops, 2, shape, u.shape().dimensions());
      Index dst(shape.rank());
      ForEachIndex(u.shape().dimensions(), [&](const Index& idx, int64_t linear) {
        for (size_t d = 0; d < idx.size(); ++d) dst[d] = start[d] + idx[d];
        std::memcpy(out.untyped_data() + Linear(dst, shape.dimensions()) * w, u.untyped_data() + linear * w, w);
      });
      return out;
    }
    case HloOpcode::kConcatenate: {
      Literal out(shape);
      int64_t dim = inst.concatenate_dimension();
      int64_t offset = 0;
      for (const Literal* a : ops) {
        Index dst;
        ForEachIndex(a->shape().dimensions(), [&](const Index& idx, int64_t linear) {
          dst = idx;
          dst[dim] += offset;
          std::memcpy(out.untyped_data() + Linear(dst, shape.dimensions()) * w, a->untyped_data() + linear * w, w);
        });
        offset += a->shape().dimensions(dim);
      }
      return out;
    }
    case HloOpcode::kPad: {
      Literal out = Filled(shape, *ops[1]);
      const Literal& a = *ops[0];
      const auto& pc = inst.attrs().padding_config.dimensions;
      Index dst(shape.rank());
      ForEachIndex(a.shape().dimensions(), [&](const Index& idx, int64_t linear) {
        for (size_t d = 0; d < idx.size(); ++d) {
          dst[d] = pc[d].edge_padding_low + idx[d] * (pc[d].interior_padding + 1);
          if (dst[d] < 0 || dst[d] >= shape.dimensions(d)) return;
        }
        std::memcpy(out.untyped_data() + Linear(dst, shape.dimensions()) * w, a.untyped_data() + linear * w, w);
      });
      return out;
    }
    case HloOpcode::kGather:
      return Gather(inst, *ops[0], *ops[1]);
    default:
      return absl::InternalError(StrCat("'", HloOpcodeString(inst.opcode()), "' is not a data movement op"));
  }
}

}  // namespace passlab::eval
