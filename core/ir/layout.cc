#include "core/ir/layout.h"

#include "core/ir/str_util.h"
#include "core/ir/shape.h"

namespace passlab {

std::string Tile::ToString() const {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    if (dims[i] == kCombineDimension) {
      out += "*";
    } else {
      StrAppend(&out, dims[i]);
    }
  }
  out += ")";
  return out;
}

Layout::Layout(const Layout& other) { *this = other; }

Layout& Layout::operator=(const Layout& other) {
  if (this == &other) return *this;
  minor_to_major_ = other.minor_to_major_;
  dim_levels_ = other.dim_levels_;
  tiles_ = other.tiles_;
  tail_padding_alignment_ = other.tail_padding_alignment_;
  index_type_ = other.index_type_;
  pointer_type_ = other.pointer_type_;
  element_size_in_bits_ = other.element_size_in_bits_;
  memory_space_ = other.memory_space_;
  split_configs_ = other.split_configs_;
  physical_shape_ =
      other.physical_shape_ ? std::make_unique<Shape>(*other.physical_shape_) : nullptr;
  dynamic_metadata_bytes_ = other.dynamic_metadata_bytes_;
  return *this;
}

Layout::~Layout() = default;

Layout Layout::Default(int64_t rank) {
  std::vector<int64_t> m2m(rank);
  for (int64_t i = 0; i < rank; ++i) m2m[i] = rank - 1 - i;
  return Layout(std::move(m2m));
}

void Layout::set_physical_shape(const Shape& shape) {
  physical_shape_ = std::make_unique<Shape>(shape);
}

bool Layout::IsPlain() const {
  return dim_levels_.empty() && tiles_.empty() && tail_padding_alignment_ == 1 &&
         index_type_ == PrimitiveType::kInvalid && pointer_type_ == PrimitiveType::kInvalid &&
         element_size_in_bits_ == 0 && memory_space_ == 0 && split_configs_.empty() &&
         !physical_shape_ && dynamic_metadata_bytes_ == 0;
}

bool Layout::IsDefault() const {
  int64_t rank = static_cast<int64_t>(minor_to_major_.size());
  for (int64_t i = 0; i < rank; ++i) {
    if (minor_to_major_[i] != rank - 1 - i) return false;
  }
  return IsPlain();
}

bool Layout::operator==(const Layout& other) const {
  if (has_physical_shape() != other.has_physical_shape()) return false;
  if (has_physical_shape() && physical_shape() != other.physical_shape()) return false;
  return minor_to_major_ == other.minor_to_major_ && dim_levels_ == other.dim_levels_ &&
         tiles_ == other.tiles_ && tail_padding_alignment_ == other.tail_padding_alignment_ &&
         index_type_ == other.index_type_ && pointer_type_ == other.pointer_type_ &&
         element_size_in_bits_ == other.element_size_in_bits_ &&
         memory_space_ == other.memory_space_ && split_configs_ == other.split_configs_ &&
         dynamic_metadata_bytes_ == other.dynamic_metadata_bytes_;
}

bool Layout::SamePlacement(const Layout& other) const {
  return minor_to_major_ == other.minor_to_major_ && tiles_ == other.tiles_;
}

std::string Layout::ToString() const {
  std::string out = "{";
  out += Join(minor_to_major_, ",");
  bool colon = false;
  auto field = [&]() -> std::string& {
    if (!colon) out += ":";
    colon = true;
    return out;
  };
  if (!dim_levels_.empty()) {
    field() += "D(";
    for (size_t i = 0; i < dim_levels_.size(); ++i) {
      if (i > 0) out += ",";
      const DimLevel& d = dim_levels_[i];
      switch (d.type) {
        case DimLevelType::kDense: out += "D"; break;
        case DimLevelType::kCompressed: out += "C"; break;
        case DimLevelType::kSingleton: out += "S"; break;
        case DimLevelType::kLooseCompressed: out += "H"; break;
      }
      if (!d.unique) out += "+";
      if (!d.ordered) out += "~";
    }
    out += ")";
  }
  if (!tiles_.empty()) {
    field() += "T";
    for (const Tile& t : tiles_) out += t.ToString();
  }
  if (tail_padding_alignment_ != 1) {
    StrAppend(&field(), "L(", tail_padding_alignment_, ")");
  }
  if (index_type_ != PrimitiveType::kInvalid) {
    StrAppend(&field(), "#(", PrimitiveTypeName(index_type_), ")");
  }
  if (pointer_type_ != PrimitiveType::kInvalid) {
    StrAppend(&field(), "*(", PrimitiveTypeName(pointer_type_), ")");
  }
  if (element_size_in_bits_ != 0) {
    StrAppend(&field(), "E(", element_size_in_bits_, ")");
  }
  if (memory_space_ != 0) {
    StrAppend(&field(), "S(", memory_space_, ")");
  }
  if (!split_configs_.empty()) {
    field() += "SC";
    for (const SplitConfig& s : split_configs_) {
      StrAppend(&out, "(", s.dimension, ":", Join(s.split_indices, ","), ")");
    }
  }
  if (physical_shape_) {
    StrAppend(&field(), "P(", physical_shape_->ToString(), ")");
  }
  if (dynamic_metadata_bytes_ > 0) {
    StrAppend(&field(), "M(", dynamic_metadata_bytes_, ")");
  }
  out += "}";
  return out;
}

}  // namespace passlab
