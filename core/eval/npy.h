// NumPy .npy files: the ecosystem's way to pass tensors in and out of
// `passlab eval`. Reads format versions 1.0-3.0, little-endian, C order;
// writes 1.0 (2.0 when the header needs it).
//
// dtypes: bool ('|b1'), int8-64, uint8-64, float16 ('<f2'), float32,
// float64, complex64/128. Types NumPy has no dtype for are stored widened,
// never as opaque bytes ('<V2' would lose which format the bits are in):
//   - bf16, every f8 type and f4e2m1fn are written as float32 (exact: each
//     of their values is a float32) and converted back with
//     round-to-nearest-even when read into such a parameter;
//   - s1/s2/s4 as int8, u1/u2/u4 as uint8.
// NpyDescr() names the dtype a type travels as, so a reader can check that a
// file fits a parameter.
#ifndef PASSLAB_CORE_EVAL_NPY_H_
#define PASSLAB_CORE_EVAL_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"

namespace passlab {

// The array in the file, typed by its dtype.
absl::StatusOr<Literal> ReadNpy(const std::string& path);
absl::Status WriteNpy(const Literal& literal, const std::string& path);
// The NumPy dtype string a type is written as ("<f4" for f32 and bf16).
std::string NpyDescr(PrimitiveType type);

}  // namespace passlab

#endif  // PASSLAB_CORE_EVAL_NPY_H_
