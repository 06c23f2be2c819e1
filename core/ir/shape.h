// Shape: an array type (element type, dimensions, dynamic dimensions, layout)
// or a tuple of shapes; token and opaque are shapes without dimensions.
//
// Dimensions may be dynamic: bounded ("<=8", the bound is stored in dims) or
// unbounded ("?", stored as kUnboundedSize).
#ifndef PASSLAB_CORE_IR_SHAPE_H_
#define PASSLAB_CORE_IR_SHAPE_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/ir/layout.h"
#include "core/ir/primitive_type.h"

namespace passlab {

class Shape {
 public:
  static constexpr int64_t kUnboundedSize = std::numeric_limits<int64_t>::min();

  Shape() = default;
  // An array shape with the default layout.
  Shape(PrimitiveType type, std::vector<int64_t> dims);

  static Shape Array(PrimitiveType type, std::vector<int64_t> dims) {
    return Shape(type, std::move(dims));
  }
  static Shape ArrayWithoutLayout(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Scalar(PrimitiveType type) { return Shape(type, {}); }
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Opaque();

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType t) { element_type_ = t; }

  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type_ == PrimitiveType::kToken; }
  bool IsOpaque() const { return element_type_ == PrimitiveType::kOpaque; }
  bool IsScalar() const { return IsArray() && dims_.empty(); }
  bool IsEmptyTuple() const { return IsTuple() && tuple_shapes_.empty(); }
  // XLA's buffer shapes, "b(f32[16])": an array that lives in one buffer that
  // may not be copied (e.g. the result of a "Pin" custom call). Everything
  // about the array (type, dims, layout) is as for the array it wraps.
  bool IsBuffer() const { return is_buffer_; }
  void set_is_buffer(bool b) { is_buffer_ = b; }

  // Array accessors.
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dimensions() const { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[i]; }
  void set_dimensions(int64_t i, int64_t v) { dims_[i] = v; }
  bool is_dynamic_dimension(int64_t i) const { return dynamic_[i]; }
  void set_dynamic_dimension(int64_t i, bool dynamic) { dynamic_[i] = dynamic; }
  const std::vector<bool>& dynamic_dimensions() const { return dynamic_; }
  bool is_static() const;  // no dynamic dimension anywhere (tuples: recursively)
  bool is_unbounded_dynamic() const;
  // Appends a dimension; keeps the layout default if it was.
  void add_dimension(int64_t size, bool dynamic = false);

  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const { return *layout_; }
  Layout& mutable_layout() { return *layout_; }
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  void clear_layout() { layout_.reset(); }
  // Sets the default layout on this array (or every array in the tuple).
  void SetDefaultLayout();
  void ClearLayoutRecursively();

  // Tuple accessors.
  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_shapes_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_shapes_[i]; }
  int64_t tuple_shapes_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }

  // The subshape at a ShapeIndex (a path of tuple indices).
  const Shape& subshape(absl::Span<const int64_t> index) const;
  Shape& mutable_subshape(absl::Span<const int64_t> index);
  bool IsValidIndex(absl::Span<const int64_t> index) const;

  // Number of elements of an array shape (product of dims).
  int64_t element_count() const;
  // Dense byte size of an array (element_count * byte width); tuples: 0.
  int64_t byte_size() const;
  // Sum of the byte sizes of all array leaves.
  int64_t total_leaf_bytes() const;

  // Text: "f32[3,5]{1,0}", "(f32[], s32[2]{0})", "bf16[<=4,?]{1,0}".
  std::string ToString(bool print_layout = true) const;
  // Appends the same text to `out` (the printer's hot path: no temporaries).
  void AppendTo(std::string& out, bool print_layout = true) const;

  // Exact equality, layouts included.
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
  // Equality ignoring layouts (element types, dims, dynamism, tuple structure).
  bool Compatible(const Shape& other) const;
  // Same dims and dynamism; element types may differ (arrays only).
  bool SameDimensions(const Shape& other) const;

 private:
  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_shapes_;
  bool is_buffer_ = false;
};

// A path into a tuple shape; {} is the whole shape.
using ShapeIndex = std::vector<int64_t>;
std::string ShapeIndexToString(absl::Span<const int64_t> index);  // "{0,1}"

// Calls fn(subshape, index) for every subshape in pre-order.
template <typename Fn>
void ForEachSubshape(const Shape& shape, Fn&& fn, ShapeIndex* index = nullptr) {
  ShapeIndex root;
  if (index == nullptr) index = &root;
  fn(shape, *index);
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      index->push_back(i);
      ForEachSubshape(shape.tuple_shapes(i), fn, index);
      index->pop_back();
    }
  }
}

// Row-major strides (in elements) of the logical dims, ignoring layout.
std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_SHAPE_H_
