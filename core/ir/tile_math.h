// Seed 002's tiled-layout arithmetic. Dimensions are given in physical order
// (major to minor); a tile applies to the minor-most dimensions and may have
// fewer dimensions than the shape; Tile::kCombineDimension (-1, "*") merges a
// dimension into the next more minor one before tiling. Repeated tiles
// ((8,128)(2,1)) apply the next tile to the minor dimensions of the shape the
// previous tiling produced.
#ifndef PASSLAB_CORE_IR_TILE_MATH_H_
#define PASSLAB_CORE_IR_TILE_MATH_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace passlab {

inline constexpr int64_t kCombineTileDimension = -1;

// Row-major position of `index` in `dims`.
int64_t LinearIndex(absl::Span<const int64_t> index, absl::Span<const int64_t> dims);

// Tiles must have positive dimensions (or -1), no more than the shape's rank.
absl::Status ValidateTiles(absl::Span<const int64_t> dims,
                           absl::Span<const std::vector<int64_t>> tiles);

// The memory position of element `index` of a shape with `dims` laid out
// with `tiles` (padding included in the numbering).
int64_t LinearIndexWithTiles(absl::Span<const int64_t> index, absl::Span<const int64_t> dims,
                             absl::Span<const std::vector<int64_t>> tiles);

// The physical shape after tiling: (tile counts..., tile dims...) per level.
std::vector<int64_t> TiledPhysicalDims(absl::Span<const int64_t> dims,
                                       absl::Span<const std::vector<int64_t>> tiles);
// Elements of the tiled buffer, padding included.
int64_t TiledElementCount(absl::Span<const int64_t> dims,
                          absl::Span<const std::vector<int64_t>> tiles);

// One level of tiling as the explicit steps of seed 002: pad to multiples of
// the tile, reshape each tiled dimension d into (ceil(d/t), t), then transpose
// the tile dimensions to the minor end.
struct TilingSteps {
  std::vector<int64_t> padded_dims;
  std::vector<int64_t> reshaped_dims;
  std::vector<int64_t> transpose_permutation;  // output dim i = reshaped dim perm[i]
  std::vector<int64_t> result_dims;
};
TilingSteps TileAsPadReshapeTranspose(absl::Span<const int64_t> dims, absl::Span<const int64_t> tile);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_TILE_MATH_H_
