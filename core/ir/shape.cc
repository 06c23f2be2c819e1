#include "core/ir/shape.h"

#include <cassert>
#include <charconv>
#include <limits>

#include "core/ir/str_util.h"

namespace passlab {

Shape::Shape(PrimitiveType type, std::vector<int64_t> dims)
    : element_type_(type), dims_(std::move(dims)), dynamic_(dims_.size(), false) {
  if (IsArrayType(type)) layout_ = Layout::Default(rank());
}

Shape Shape::ArrayWithoutLayout(PrimitiveType type, std::vector<int64_t> dims) {
  Shape s(type, std::move(dims));
  s.layout_.reset();
  return s;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.element_type_ = PrimitiveType::kTuple;
  s.tuple_shapes_ = std::move(elements);
  return s;
}

Shape Shape::Token() {
  Shape s;
  s.element_type_ = PrimitiveType::kToken;
  return s;
}

Shape Shape::Opaque() {
  Shape s;
  s.element_type_ = PrimitiveType::kOpaque;
  return s;
}

bool Shape::is_static() const {
  if (IsTuple()) {
    for (const Shape& s : tuple_shapes_) {
      if (!s.is_static()) return false;
    }
    return true;
  }
  for (bool d : dynamic_) {
    if (d) return false;
  }
  return true;
}

bool Shape::is_unbounded_dynamic() const {
  if (IsTuple()) {
    for (const Shape& s : tuple_shapes_) {
      if (s.is_unbounded_dynamic()) return true;
    }
    return false;
  }
  for (int64_t d : dims_) {
    if (d == kUnboundedSize) return true;
  }
  return false;
}

void Shape::add_dimension(int64_t size, bool dynamic) {
  bool was_default = layout_.has_value() && layout_->IsDefault();
  dims_.push_back(size);
  dynamic_.push_back(dynamic);
  if (was_default) layout_ = Layout::Default(rank());
}

void Shape::SetDefaultLayout() {
  if (IsTuple()) {
    for (Shape& s : tuple_shapes_) s.SetDefaultLayout();
  } else if (IsArray()) {
    layout_ = Layout::Default(rank());
  }
}

void Shape::ClearLayoutRecursively() {
  layout_.reset();
  for (Shape& s : tuple_shapes_) s.ClearLayoutRecursively();
}

const Shape& Shape::subshape(absl::Span<const int64_t> index) const {
  const Shape* s = this;
  for (int64_t i : index) {
    assert(s->IsTuple() && i >= 0 && i < s->tuple_shapes_size());
    s = &s->tuple_shapes_[i];
  }
  return *s;
}

Shape& Shape::mutable_subshape(absl::Span<const int64_t> index) {
  Shape* s = this;
  for (int64_t i : index) {
    assert(s->IsTuple() && i >= 0 && i < s->tuple_shapes_size());
    s = &s->tuple_shapes_[i];
  }
  return *s;
}

bool Shape::IsValidIndex(absl::Span<const int64_t> index) const {
  const Shape* s = this;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_shapes_size()) return false;
    s = &s->tuple_shapes_[i];
  }
  return true;
}

// Saturates at INT64_MAX instead of overflowing (shapes come from user text).
int64_t Shape::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d <= 0) return 0;
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

int64_t Shape::byte_size() const {
  if (!IsArray()) return 0;
  int64_t bytes;
  if (__builtin_mul_overflow(element_count(), PrimitiveByteWidth(element_type_), &bytes)) {
    return std::numeric_limits<int64_t>::max();
  }
  return bytes;
}

int64_t Shape::total_leaf_bytes() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : tuple_shapes_) {
      if (__builtin_add_overflow(total, s.total_leaf_bytes(), &total)) return std::numeric_limits<int64_t>::max();
    }
    return total;
  }
  return byte_size();
}

std::string Shape::ToString(bool print_layout) const {
  std::string out;
  AppendTo(out, print_layout);
  return out;
}

void Shape::AppendTo(std::string& out, bool print_layout) const {
  if (IsTuple()) {
    out += '(';
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (i > 0) out += ", ";
      tuple_shapes_[i].AppendTo(out, print_layout);
    }
    out += ')';
    return;
  }
  // Formatted on the stack and appended in one piece (flushed early only for
  // shapes of very high rank): this runs for every shape of every line a
  // snapshot prints.
  char buf[256];
  char* p = buf;
  auto room = [&](size_t n) {
    if (p + n > buf + sizeof(buf)) {
      out.append(buf, p);
      p = buf;
    }
  };
  auto put = [&](char c) {
    room(1);
    *p++ = c;
  };
  auto put_int = [&](int64_t v) {
    room(20);  // a sign and 19 digits
    p = std::to_chars(p, buf + sizeof(buf), v).ptr;
  };
  if (is_buffer_) out += "b(";
  out += PrimitiveTypeName(element_type_);
  put('[');
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) put(',');
    if (dims_[i] == kUnboundedSize) {
      put('?');
      continue;
    }
    if (dynamic_[i]) {
      put('<');
      put('=');
    }
    put_int(dims_[i]);
  }
  put(']');
  const bool layout = print_layout && IsArray() && layout_.has_value();
  // XLA does not print "{}" for scalars (an invalid empty layout on an
  // array still prints, so it survives a round trip to the verifier).
  if (layout && layout_->IsPlain() && !(layout_->minor_to_major().empty() && rank() == 0)) {
    const std::vector<int64_t>& m2m = layout_->minor_to_major();
    put('{');
    for (size_t i = 0; i < m2m.size(); ++i) {
      if (i > 0) put(',');
      put_int(m2m[i]);
    }
    put('}');
  }
  out.append(buf, p);
  if (layout && !layout_->IsPlain()) out += layout_->ToString();
  if (is_buffer_) out += ')';
}

bool Shape::operator==(const Shape& other) const {
  if (element_type_ != other.element_type_ || is_buffer_ != other.is_buffer_) return false;
  if (IsTuple()) return tuple_shapes_ == other.tuple_shapes_;
  return dims_ == other.dims_ && dynamic_ == other.dynamic_ && layout_ == other.layout_;
}

bool Shape::Compatible(const Shape& other) const {
  if (element_type_ != other.element_type_ || is_buffer_ != other.is_buffer_) return false;
  if (IsTuple()) {
    if (tuple_shapes_.size() != other.tuple_shapes_.size()) return false;
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (!tuple_shapes_[i].Compatible(other.tuple_shapes_[i])) return false;
    }
    return true;
  }
  return dims_ == other.dims_ && dynamic_ == other.dynamic_;
}

bool Shape::SameDimensions(const Shape& other) const {
  return dims_ == other.dims_ && dynamic_ == other.dynamic_;
}

std::string ShapeIndexToString(absl::Span<const int64_t> index) {
  return StrCat("{", Join(index, ","), "}");
}

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t s = 1;
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= dims[i];
  }
  return strides;
}

}  // namespace passlab
