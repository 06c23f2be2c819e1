// Batches of matrices for the cholesky and triangular-solve routines: the
// trailing two dimensions of a buffer as row-major matrices in a compute
// type (f16 / bf16 / f32 in float, f64 in double, c64 / c128 as they are),
// read from and written back to buffers of any plain layout.
#ifndef PASSLAB_CORE_RUNTIME_MATRIX_BATCH_H_
#define PASSLAB_CORE_RUNTIME_MATRIX_BATCH_H_

#include <complex>
#include <cstring>
#include <vector>

#include "core/ir/shape.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/host_routine_internal.h"

namespace passlab::routine_internal {

// Whether matrices of `type` have a compute type (MatrixScalar below).
inline bool HasMatrixComputeType(PrimitiveType type) {
  return type == PrimitiveType::kF16 || type == PrimitiveType::kBF16 || type == PrimitiveType::kF32 ||
         type == PrimitiveType::kF64 || type == PrimitiveType::kC64 || type == PrimitiveType::kC128;
}

// The buffer's elements in row-major order, in T (the compute type of the
// shape's element type).
template <typename T>
std::vector<T> ReadMatrices(const Shape& shape, const void* buffer) {
  std::vector<uint8_t> packed = GatherRowMajor(shape, buffer);
  const int64_t n = shape.element_count();
  std::vector<T> out(n);
  const PrimitiveType t = shape.element_type();
  if (PrimitiveByteWidth(t) == static_cast<int>(sizeof(T)) && t != PrimitiveType::kF16 &&
      t != PrimitiveType::kBF16) {
    if (n > 0) std::memcpy(out.data(), packed.data(), n * sizeof(T));
    return out;
  }
  if constexpr (std::is_floating_point_v<T>) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(ReadFloat(t, packed.data(), i));
  }
  return out;
}

template <typename T>
void WriteMatrices(const Shape& shape, const std::vector<T>& values, void* buffer) {
  const PrimitiveType t = shape.element_type();
  const int64_t n = shape.element_count();
  std::vector<uint8_t> packed(n * PrimitiveByteWidth(t));
  if (PrimitiveByteWidth(t) == static_cast<int>(sizeof(T)) && t != PrimitiveType::kF16 &&
      t != PrimitiveType::kBF16) {
    if (n > 0) std::memcpy(packed.data(), values.data(), n * sizeof(T));
  } else if constexpr (std::is_floating_point_v<T>) {
    for (int64_t i = 0; i < n; ++i) WriteFloat(t, packed.data(), i, values[i]);
  }
  ScatterRowMajor(shape, packed.data(), buffer);
}

}  // namespace passlab::routine_internal

#endif  // PASSLAB_CORE_RUNTIME_MATRIX_BATCH_H_
