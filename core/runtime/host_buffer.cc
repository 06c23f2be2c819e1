#include "core/runtime/host_buffer.h"

#include <cstring>

#include "core/ir/str_util.h"

namespace passlab {

std::vector<int64_t> PhysicalStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 0);
  int64_t stride = 1;
  if (shape.has_layout() && static_cast<int64_t>(shape.layout().minor_to_major().size()) == shape.rank()) {
    for (int64_t d : shape.layout().minor_to_major()) {
      strides[d] = stride;
      stride *= shape.dimensions(d);
    }
    return strides;
  }
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape.dimensions(d);
  }
  return strides;
}

absl::Status CheckPlainLayout(const Shape& shape) {
  if (!shape.IsArray()) return absl::InvalidArgumentError(StrCat("not an array shape: ", shape.ToString()));
  if (shape.has_layout() && !shape.layout().tiles().empty()) {
    return absl::UnimplementedError(StrCat("tiled layouts are not supported by the CPU runtime: ", shape.ToString()));
  }
  if (!shape.is_static()) {
    return absl::UnimplementedError(StrCat("dynamic shapes are not supported by the CPU runtime: ", shape.ToString()));
  }
  return absl::OkStatus();
}

std::vector<Shape> LeafShapes(const Shape& shape) {
  std::vector<Shape> leaves;
  ForEachSubshape(shape, [&](const Shape& s, const ShapeIndex&) {
    if (!s.IsTuple()) leaves.push_back(s);
  });
  return leaves;
}

std::vector<int64_t> GroupOffsets(const Shape& shape, const std::vector<int64_t>& strides,
                                  absl::Span<const int64_t> dims) {
  std::vector<int64_t> out = {0};
  for (int64_t d : dims) {
    std::vector<int64_t> next;
    next.reserve(out.size() * shape.dimensions(d));
    for (int64_t base : out) {
      for (int64_t i = 0; i < shape.dimensions(d); ++i) next.push_back(base + i * strides[d]);
    }
    out = std::move(next);
  }
  return out;
}

namespace {

bool IsDefaultOrder(const Shape& shape) {
  std::vector<int64_t> strides = PhysicalStrides(shape);
  int64_t expect = 1;
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    if (shape.dimensions(d) != 1 && strides[d] != expect) return false;
    expect *= shape.dimensions(d);
  }
  return true;
}

// Calls fn(linear, offset) for each element: its row-major position and its
// position in the buffer.
template <typename Fn>
void ForEachOffset(const Shape& shape, Fn&& fn) {
  std::vector<int64_t> strides = PhysicalStrides(shape);
  int64_t rank = shape.rank(), n = shape.element_count();
  if (n == 0) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (int64_t linear = 0; linear < n; ++linear) {
    fn(linear, offset);
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++idx[d] < shape.dimensions(d)) break;
      offset -= strides[d] * idx[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

absl::Status CopyLiteralToBuffer(const Literal& literal, const Shape& buffer_shape, void* buffer) {
  if (absl::Status s = CheckPlainLayout(buffer_shape); !s.ok()) return s;
  if (!literal.shape().IsArray() || literal.shape().element_type() != buffer_shape.element_type() ||
      !literal.shape().SameDimensions(buffer_shape)) {
    return absl::InvalidArgumentError(StrCat("value of shape ", literal.shape().ToString(),
                                             " does not fit a buffer of shape ", buffer_shape.ToString()));
  }
  int64_t width = PrimitiveByteWidth(buffer_shape.element_type());
  if (IsDefaultOrder(buffer_shape)) {
    if (literal.size_bytes() > 0) std::memcpy(buffer, literal.untyped_data(), literal.size_bytes());
    return absl::OkStatus();
  }
  const uint8_t* src = literal.untyped_data();
  uint8_t* dst = static_cast<uint8_t*>(buffer);
  ForEachOffset(buffer_shape, [&](int64_t linear, int64_t offset) {
    std::memcpy(dst + offset * width, src + linear * width, width);
  });
  return absl::OkStatus();
}

absl::StatusOr<Literal> LiteralFromBuffer(const Shape& shape, const void* buffer) {
  if (absl::Status s = CheckPlainLayout(shape); !s.ok()) return s;
  Literal literal(shape);
  int64_t width = PrimitiveByteWidth(shape.element_type());
  if (IsDefaultOrder(shape)) {
    if (literal.size_bytes() > 0) std::memcpy(literal.untyped_data(), buffer, literal.size_bytes());
    return literal;
  }
  const uint8_t* src = static_cast<const uint8_t*>(buffer);
  uint8_t* dst = literal.untyped_data();
  ForEachOffset(shape, [&](int64_t linear, int64_t offset) {
    std::memcpy(dst + linear * width, src + offset * width, width);
  });
  return literal;
}

double ReadFloat(PrimitiveType type, const void* buffer, int64_t offset) {
  switch (type) {
    case PrimitiveType::kF32: return static_cast<const float*>(buffer)[offset];
    case PrimitiveType::kF64: return static_cast<const double*>(buffer)[offset];
    case PrimitiveType::kBF16: {
      uint32_t bits = uint32_t{static_cast<const uint16_t*>(buffer)[offset]} << 16;
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      return f;
    }
    case PrimitiveType::kF16: return SmallFloatToDouble(type, static_cast<const uint16_t*>(buffer)[offset]);
    default: return 0;  // callers check the type first
  }
}

void WriteFloat(PrimitiveType type, void* buffer, int64_t offset, double value) {
  switch (type) {
    case PrimitiveType::kF32: static_cast<float*>(buffer)[offset] = static_cast<float>(value); return;
    case PrimitiveType::kF64: static_cast<double*>(buffer)[offset] = value; return;
    case PrimitiveType::kBF16:
    case PrimitiveType::kF16:
      static_cast<uint16_t*>(buffer)[offset] = static_cast<uint16_t>(DoubleToSmallFloatBits(type, value));
      return;
    default: return;
  }
}

}  // namespace passlab
