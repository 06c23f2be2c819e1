// Literal: a host value of any shape. Arrays hold their elements densely in
// logical row-major order (layouts never change values; see DESIGN.md), one
// PrimitiveByteWidth() per element (sub-byte types unpacked, pred as 0/1
// bytes). Tuples hold child literals.
#ifndef PASSLAB_CORE_IR_LITERAL_H_
#define PASSLAB_CORE_IR_LITERAL_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/shape.h"
#include "core/ir/small_float.h"

namespace passlab {

// Maps a C++ element type to its PrimitiveType.
template <typename T> struct NativeToPrimitive;
#define PASSLAB_NATIVE(T, PT) \
  template <> struct NativeToPrimitive<T> { static constexpr PrimitiveType value = PrimitiveType::PT; };
PASSLAB_NATIVE(bool, kPred)
PASSLAB_NATIVE(int8_t, kS8)
PASSLAB_NATIVE(int16_t, kS16)
PASSLAB_NATIVE(int32_t, kS32)
PASSLAB_NATIVE(int64_t, kS64)
PASSLAB_NATIVE(uint8_t, kU8)
PASSLAB_NATIVE(uint16_t, kU16)
PASSLAB_NATIVE(uint32_t, kU32)
PASSLAB_NATIVE(uint64_t, kU64)
PASSLAB_NATIVE(half, kF16)
PASSLAB_NATIVE(bfloat16, kBF16)
PASSLAB_NATIVE(float, kF32)
PASSLAB_NATIVE(double, kF64)
PASSLAB_NATIVE(std::complex<float>, kC64)
PASSLAB_NATIVE(std::complex<double>, kC128)
#undef PASSLAB_NATIVE

class Literal {
 public:
  Literal() : Literal(Shape::Tuple({})) {}
  // A zero-filled literal of the given shape (tuples get child literals).
  explicit Literal(const Shape& shape);

  const Shape& shape() const { return shape_; }

  // Array element access (linear index = row-major position).
  int64_t element_count() const { return shape_.IsArray() ? shape_.element_count() : 0; }
  uint8_t* untyped_data() { return data_.data(); }
  const uint8_t* untyped_data() const { return data_.data(); }
  int64_t size_bytes() const { return static_cast<int64_t>(data_.size()); }

  template <typename T>
  absl::Span<T> data() {
    return absl::Span<T>(reinterpret_cast<T*>(data_.data()), data_.size() / sizeof(T));
  }
  template <typename T>
  absl::Span<const T> data() const {
    return absl::Span<const T>(reinterpret_cast<const T*>(data_.data()), data_.size() / sizeof(T));
  }
  template <typename T>
  T Get(absl::Span<const int64_t> index) const {
    T v;
    std::memcpy(&v, data_.data() + LinearIndex(index) * sizeof(T), sizeof(T));
    return v;
  }
  template <typename T>
  void Set(absl::Span<const int64_t> index, T value) {
    std::memcpy(data_.data() + LinearIndex(index) * sizeof(T), &value, sizeof(T));
  }
  int64_t LinearIndex(absl::Span<const int64_t> index) const;

  // Type-generic element access through double / int64 / complex. Integers
  // read exactly through GetInt/GetUint; floats of every width through GetDouble.
  double GetDouble(int64_t linear) const;
  void SetDouble(int64_t linear, double value);  // rounds to the element type
  int64_t GetInt(int64_t linear) const;           // integers and pred
  uint64_t GetUint(int64_t linear) const;
  void SetInt(int64_t linear, int64_t value);     // wraps to the element width
  std::complex<double> GetComplex(int64_t linear) const;
  void SetComplex(int64_t linear, std::complex<double> value);
  // The raw bits of an element, zero-extended (for bitcast-convert, NaN payloads).
  uint64_t GetBits(int64_t linear) const;
  void SetBits(int64_t linear, uint64_t bits);

  // Tuple access.
  std::vector<Literal>& tuple_elements() { return elements_; }
  const std::vector<Literal>& tuple_elements() const { return elements_; }
  const Literal& subliteral(absl::Span<const int64_t> index) const;
  Literal& mutable_subliteral(absl::Span<const int64_t> index);

  // True when the constant text elided the values ("{...}"); its values are
  // zeros and must not be used.
  bool elided() const { return elided_; }
  void set_elided(bool elided) { elided_ = elided; }

  // Same values; layouts of the shapes are ignored (values are logical).
  bool operator==(const Literal& other) const;
  bool operator!=(const Literal& other) const { return !(*this == other); }

  // XLA's constant text: "1", "{1, 2}", "{ {1, 2}, {3, 4} }", "(1, {2})" for
  // tuples, nan/inf/-nan(0x..) for floats, true/false for pred.
  std::string ToString() const;
  // One element as XLA prints it.
  std::string ElementToString(int64_t linear) const;

  // Changes the layout recorded in the shape; values are unaffected.
  void set_shape_layout(const Shape& shape);

  // Factories.
  template <typename T>
  static Literal Scalar(T value) {
    Literal l(Shape::Scalar(NativeToPrimitive<T>::value));
    l.Set<T>({}, value);
    return l;
  }
  template <typename T>
  static Literal Vector(const std::vector<T>& values) {
    Literal l(Shape(NativeToPrimitive<T>::value, {static_cast<int64_t>(values.size())}));
    for (size_t i = 0; i < values.size(); ++i) l.Set<T>({static_cast<int64_t>(i)}, values[i]);
    return l;
  }
  // Row-major values of any array shape; element type taken from `shape`
  // (values converted through SetDouble).
  static Literal FromDoubles(const Shape& shape, absl::Span<const double> values);
  static Literal Tuple(std::vector<Literal> elements);
  // Converts every element to another type (XLA convert semantics:
  // float->int saturates, NaN->0).
  absl::StatusOr<Literal> Convert(PrimitiveType type) const;

 private:
  Shape shape_;
  std::vector<uint8_t> data_;
  std::vector<Literal> elements_;
  bool elided_ = false;
};

// Float element helpers shared with the evaluator: read/write any float type
// through double with round-to-nearest-even.
double SmallFloatToDouble(PrimitiveType type, uint64_t bits);
uint64_t DoubleToSmallFloatBits(PrimitiveType type, double value);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_LITERAL_H_
