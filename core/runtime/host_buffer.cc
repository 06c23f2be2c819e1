#include "core/runtime/host_buffer.h"

#include <cstring>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/ir/tile_math.h"

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

namespace {

bool HasTiles(const Shape& shape) { return shape.has_layout() && !shape.layout().tiles().empty(); }

// Dimensions (and an index) in physical order, major to minor.
std::vector<int64_t> MajorToMinorDims(const Shape& shape, absl::Span<const int64_t> logical) {
  const std::vector<int64_t>& m2m = shape.layout().minor_to_major();
  std::vector<int64_t> out;
  for (auto it = m2m.rbegin(); it != m2m.rend(); ++it) out.push_back(logical[*it]);
  return out;
}

std::vector<std::vector<int64_t>> TileDims(const Shape& shape) {
  std::vector<std::vector<int64_t>> tiles;
  for (const Tile& t : shape.layout().tiles()) tiles.push_back(t.dims);
  return tiles;
}

}  // namespace

absl::Status CheckHostLayout(const Shape& shape) {
  if (!HasTiles(shape)) return CheckPlainLayout(shape);
  if (!shape.is_static()) {
    return absl::UnimplementedError(StrCat("dynamic shapes are not supported by the CPU runtime: ", shape.ToString()));
  }
  if (shape.layout().element_size_in_bits() != 0 ||
      static_cast<int64_t>(shape.layout().minor_to_major().size()) != shape.rank()) {
    return absl::UnimplementedError(StrCat("the CPU runtime does not pack sub-byte elements: ", shape.ToString()));
  }
  std::vector<std::vector<int64_t>> tiles = TileDims(shape);
  return ValidateTiles(MajorToMinorDims(shape, shape.dimensions()), tiles);
}

int64_t BufferBytes(const Shape& shape) {
  if (!shape.IsArray()) return 0;
  if (!HasTiles(shape) || shape.element_count() == 0) return shape.byte_size();
  return TiledElementCount(MajorToMinorDims(shape, shape.dimensions()), TileDims(shape)) *
         PrimitiveByteWidth(shape.element_type());
}

void ForEachElementOffset(const Shape& shape, const std::function<void(int64_t, int64_t)>& fn) {
  int64_t rank = shape.rank(), n = shape.element_count();
  if (n == 0) return;
  if (!HasTiles(shape)) {
    std::vector<int64_t> strides = PhysicalStrides(shape);
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
    return;
  }
  std::vector<std::vector<int64_t>> tiles = TileDims(shape);
  std::vector<int64_t> dims = MajorToMinorDims(shape, shape.dimensions());
  std::vector<int64_t> idx(rank, 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    fn(linear, LinearIndexWithTiles(MajorToMinorDims(shape, idx), dims, tiles));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape.dimensions(d)) break;
      idx[d] = 0;
    }
  }
}

std::vector<Shape> LeafShapes(const Shape& shape) {
  std::vector<Shape> leaves;
  ForEachSubshape(shape, [&](const Shape& s, const ShapeIndex&) {
    if (!s.IsTuple()) leaves.push_back(s);
  });
  return leaves;
}

std::optional<int64_t> OffsetProgression(const std::vector<int64_t>& offsets) {
  if (offsets.size() < 2) return 0;
  int64_t step = offsets[1] - offsets[0];
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (offsets[i] != offsets[0] + static_cast<int64_t>(i) * step) return std::nullopt;
  }
  return step;
}

int64_t LeafBufferBytes(const Shape& shape) {
  int64_t n = 0;
  for (const Shape& leaf : LeafShapes(shape)) n += BufferBytes(leaf);
  return n;
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

}  // namespace

bool LiteralIsBuffer(const Literal& literal, const Shape& buffer_shape) {
  return buffer_shape.IsArray() && literal.shape().IsArray() &&
         literal.shape().element_type() == buffer_shape.element_type() &&
         literal.shape().SameDimensions(buffer_shape) && CheckPlainLayout(buffer_shape).ok() &&
         IsDefaultOrder(buffer_shape) && literal.size_bytes() == BufferBytes(buffer_shape);
}

absl::Status CopyLiteralToBuffer(const Literal& literal, const Shape& buffer_shape, void* buffer) {
  RETURN_IF_ERROR(CheckHostLayout(buffer_shape));
  if (!literal.shape().IsArray() || literal.shape().element_type() != buffer_shape.element_type() ||
      !literal.shape().SameDimensions(buffer_shape)) {
    return absl::InvalidArgumentError(StrCat("value of shape ", literal.shape().ToString(),
                                             " does not fit a buffer of shape ", buffer_shape.ToString()));
  }
  int64_t width = PrimitiveByteWidth(buffer_shape.element_type());
  if (!HasTiles(buffer_shape) && IsDefaultOrder(buffer_shape)) {
    if (literal.size_bytes() > 0) std::memcpy(buffer, literal.untyped_data(), literal.size_bytes());
    return absl::OkStatus();
  }
  const uint8_t* src = literal.untyped_data();
  uint8_t* dst = static_cast<uint8_t*>(buffer);
  if (HasTiles(buffer_shape)) std::memset(dst, 0, BufferBytes(buffer_shape));  // tile padding
  ForEachElementOffset(buffer_shape, [&](int64_t linear, int64_t offset) {
    std::memcpy(dst + offset * width, src + linear * width, width);
  });
  return absl::OkStatus();
}

absl::StatusOr<Literal> LiteralFromBuffer(const Shape& shape, const void* buffer) {
  RETURN_IF_ERROR(CheckHostLayout(shape));
  Literal literal(shape);
  int64_t width = PrimitiveByteWidth(shape.element_type());
  if (!HasTiles(shape) && IsDefaultOrder(shape)) {
    if (literal.size_bytes() > 0) std::memcpy(literal.untyped_data(), buffer, literal.size_bytes());
    return literal;
  }
  const uint8_t* src = static_cast<const uint8_t*>(buffer);
  uint8_t* dst = literal.untyped_data();
  ForEachElementOffset(shape, [&](int64_t linear, int64_t offset) {
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
