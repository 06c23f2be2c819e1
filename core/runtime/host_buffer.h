// Host buffers as the runtime sees them (core/codegen/compiled_kernel.h's
// convention): one dense array per leaf, elements placed by the shape's
// layout (minor_to_major; tiles only where the runtime moves data: parameters,
// results, copies), one PrimitiveByteWidth() per element.
// Literals are logical row-major; these helpers move values between the two.
#ifndef PASSLAB_CORE_RUNTIME_HOST_BUFFER_H_
#define PASSLAB_CORE_RUNTIME_HOST_BUFFER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/literal.h"
#include "core/ir/shape.h"

namespace passlab {

// Element strides of each logical dimension in the buffer of an array shape
// (its layout; the default layout when it has none).
std::vector<int64_t> PhysicalStrides(const Shape& shape);

// Whether buffers of `shape` can be addressed by PhysicalStrides (no tiles,
// no sub-byte packing); the error names the shape.
absl::Status CheckPlainLayout(const Shape& shape);

// Whether buffers of `shape` can be held and moved by the runtime (plain or
// tiled, seed 002): parameters, results, copies and control-flow state may
// be tiled; kernels and library calls need CheckPlainLayout.
absl::Status CheckHostLayout(const Shape& shape);

// Bytes of a buffer of an array shape: tiled layouts include their padding.
int64_t BufferBytes(const Shape& shape);

// Calls fn(linear, offset) for each element of an array shape: its
// row-major position and its element offset in the buffer (tiled layouts
// included).
void ForEachElementOffset(const Shape& shape, const std::function<void(int64_t, int64_t)>& fn);

// The array leaves of a shape, depth-first (a tuple's buffers in order).
std::vector<Shape> LeafShapes(const Shape& shape);
// The bytes of all of a shape's leaf buffers (BufferBytes of each leaf).
int64_t LeafBufferBytes(const Shape& shape);

// Offsets (in elements) of the row-major positions over `dims` (indices into
// a shape with `strides`): out[linear] = sum_d idx[d] * strides[dims[d]] for
// the index idx of `linear` over the sizes of `dims`.
std::vector<int64_t> GroupOffsets(const Shape& shape, const std::vector<int64_t>& strides,
                                  absl::Span<const int64_t> dims);
// The common step s of offsets t[0], t[0] + s, t[0] + 2s, ... (a batch of
// equally spaced matrices, say); 0 for fewer than two offsets; nullopt when
// they are not equally spaced.
std::optional<int64_t> OffsetProgression(const std::vector<int64_t>& offsets);

// Whether an array literal's own bytes already are a buffer of
// `buffer_shape` (the same element type and dimensions, a plain row-major
// layout), so that a run can read the literal in place.
bool LiteralIsBuffer(const Literal& literal, const Shape& buffer_shape);

// Copies an array literal's values into a buffer laid out as `buffer_shape`
// (same dimensions and element type as the literal).
absl::Status CopyLiteralToBuffer(const Literal& literal, const Shape& buffer_shape, void* buffer);
// An array literal of `shape` holding the buffer's values.
absl::StatusOr<Literal> LiteralFromBuffer(const Shape& shape, const void* buffer);

// Reads element `offset` of a buffer of float type `type` as double / writes
// it (rounding to the type). Supports f16, bf16, f32, f64.
double ReadFloat(PrimitiveType type, const void* buffer, int64_t offset);
void WriteFloat(PrimitiveType type, void* buffer, int64_t offset, double value);

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_HOST_BUFFER_H_
