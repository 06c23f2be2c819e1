// NumPy .npy files (format versions 1.0-3.0, little-endian, C order): the
// ecosystem's way to pass tensors in and out of `passlab eval`.
// dtypes: bool, int8-64, uint8-64, float16 ('<f2'), float32, float64,
// complex64/128. Types NumPy lacks (bf16, the f8 and f4 types, s4/u4) are
// written as float32 (floats) or int8/uint8 (4-bit ints) and converted, with
// round-to-nearest-even, when read into such a parameter.
#ifndef PASSLAB_CORE_EVAL_NPY_H_
#define PASSLAB_CORE_EVAL_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"

namespace passlab {

absl::StatusOr<Literal> ReadNpy(const std::string& path);
absl::Status WriteNpy(const Literal& literal, const std::string& path);
// The NumPy dtype string a type is written as ("<f4").
std::string NpyDescr(PrimitiveType type);

}  // namespace passlab

#endif  // PASSLAB_CORE_EVAL_NPY_H_
