// Layout: how an array's elements are placed in memory, with every field XLA
// prints: minor_to_major, dim level types, tiles (seed 002, including repeated
// tiles and combined dimensions), tail padding, index/pointer types, element
// size, memory space, split configs, physical shape and dynamic metadata.
//
// Text form (XLA's): {1,0:T(2,2)(2,1)E(4)S(1)}.
#ifndef PASSLAB_CORE_IR_LAYOUT_H_
#define PASSLAB_CORE_IR_LAYOUT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/primitive_type.h"

namespace passlab {

class Shape;

struct Tile {
  // A tile dimension of kCombineDimension ("*" in text) merges that dimension
  // into the next more minor one before tiling (seed 002).
  static constexpr int64_t kCombineDimension = -1;
  std::vector<int64_t> dims;

  bool operator==(const Tile& other) const = default;
  std::string ToString() const;  // "(2,*,3)"
};

enum class DimLevelType : uint8_t { kDense, kCompressed, kSingleton, kLooseCompressed };

struct DimLevel {
  DimLevelType type = DimLevelType::kDense;
  bool unique = true;
  bool ordered = true;
  bool operator==(const DimLevel& other) const = default;
};

struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> split_indices;
  bool operator==(const SplitConfig& other) const = default;
};

class Layout {
 public:
  Layout() = default;
  explicit Layout(std::vector<int64_t> minor_to_major)
      : minor_to_major_(std::move(minor_to_major)) {}
  Layout(const Layout& other);
  Layout& operator=(const Layout& other);
  Layout(Layout&&) = default;
  Layout& operator=(Layout&&) = default;
  ~Layout();

  // The default (descending, row-major) layout for a rank.
  static Layout Default(int64_t rank);

  const std::vector<int64_t>& minor_to_major() const { return minor_to_major_; }
  std::vector<int64_t>& mutable_minor_to_major() { return minor_to_major_; }
  int64_t minor_to_major(int i) const { return minor_to_major_[i]; }

  const std::vector<DimLevel>& dim_levels() const { return dim_levels_; }
  std::vector<DimLevel>& mutable_dim_levels() { return dim_levels_; }

  const std::vector<Tile>& tiles() const { return tiles_; }
  std::vector<Tile>& mutable_tiles() { return tiles_; }

  int64_t tail_padding_alignment_in_elements() const { return tail_padding_alignment_; }
  void set_tail_padding_alignment_in_elements(int64_t v) { tail_padding_alignment_ = v; }

  PrimitiveType index_primitive_type() const { return index_type_; }
  void set_index_primitive_type(PrimitiveType t) { index_type_ = t; }
  PrimitiveType pointer_primitive_type() const { return pointer_type_; }
  void set_pointer_primitive_type(PrimitiveType t) { pointer_type_ = t; }

  int64_t element_size_in_bits() const { return element_size_in_bits_; }
  void set_element_size_in_bits(int64_t v) { element_size_in_bits_ = v; }

  int64_t memory_space() const { return memory_space_; }
  void set_memory_space(int64_t v) { memory_space_ = v; }

  const std::vector<SplitConfig>& split_configs() const { return split_configs_; }
  std::vector<SplitConfig>& mutable_split_configs() { return split_configs_; }

  bool has_physical_shape() const { return physical_shape_ != nullptr; }
  const Shape& physical_shape() const { return *physical_shape_; }
  void set_physical_shape(const Shape& shape);
  void clear_physical_shape() { physical_shape_.reset(); }

  int64_t dynamic_shape_metadata_prefix_bytes() const { return dynamic_metadata_bytes_; }
  void set_dynamic_shape_metadata_prefix_bytes(int64_t v) { dynamic_metadata_bytes_ = v; }

  // True when only minor_to_major is set (no tiles or other fields).
  bool IsPlain() const;
  bool IsDefault() const;  // descending minor_to_major and IsPlain()

  bool operator==(const Layout& other) const;
  bool operator!=(const Layout& other) const { return !(*this == other); }
  // Equality of minor_to_major and tiles only (what affects element placement
  // within one memory space), as XLA's Layout::Equal().IgnoreMemorySpace...
  bool SamePlacement(const Layout& other) const;

  std::string ToString() const;  // "{1,0:T(2,2)}"

 private:
  std::vector<int64_t> minor_to_major_;
  std::vector<DimLevel> dim_levels_;
  std::vector<Tile> tiles_;
  int64_t tail_padding_alignment_ = 1;
  PrimitiveType index_type_ = PrimitiveType::kInvalid;
  PrimitiveType pointer_type_ = PrimitiveType::kInvalid;
  int64_t element_size_in_bits_ = 0;
  int64_t memory_space_ = 0;
  std::vector<SplitConfig> split_configs_;
  std::unique_ptr<Shape> physical_shape_;
  int64_t dynamic_metadata_bytes_ = 0;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_LAYOUT_H_
