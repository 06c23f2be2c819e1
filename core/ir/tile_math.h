// Seed 002's tiled-layout arithmetic on plain vectors. Dimensions come in
// physical order, major to minor (already permuted by minor_to_major).
//   - A tile applies to the minor-most dimensions and may have fewer
//     dimensions than the shape; the leading dimensions stay as they are.
//   - A tile dimension of kCombineDimension (-1, printed "*") first merges that
//     dimension into the next more minor one (bound d_i * d_{i-1}).
//   - One tiling level turns dims (.., d_k, .., d_1) with tile (t_k, .., t_1)
//     into (.., ceil(d_k/t_k), .., ceil(d_1/t_1), t_k, .., t_1): tile counts,
//     then the tile itself, elements inside a tile row-major, padding included.
//   - Repeated tiles ((8,128)(2,1)) apply each next tile to the minor
//     dimensions of the shape the previous level produced, i.e. normally to
//     the within-tile dimensions, as XLA does.
#ifndef PASSLAB_CORE_IR_TILE_MATH_H_
#define PASSLAB_CORE_IR_TILE_MATH_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace passlab {

// Tile dimension "*": merge this dimension into the next more minor one.
inline constexpr int64_t kCombineDimension = -1;

// Checks `tiles` against a shape with `dims`: every tile is non-empty, has
// positive entries or kCombineDimension (never as its minor-most entry), and
// has no more dimensions than the shape the previous tiles produced.
absl::Status ValidateTiles(absl::Span<const int64_t> dims,
                           absl::Span<const std::vector<int64_t>> tiles);

// Row-major position of `index` in an array with bounds `dims`.
int64_t LinearIndex(absl::Span<const int64_t> index, absl::Span<const int64_t> dims);

// Memory position of element `index` of a shape with `dims` laid out with
// `tiles` (ValidateTiles must accept them), padding included in the count.
int64_t LinearIndexWithTiles(absl::Span<const int64_t> index, absl::Span<const int64_t> dims,
                             absl::Span<const std::vector<int64_t>> tiles);

// The physical shape after all tiling levels, e.g. (3,5) with (2,2) gives
// (2,3,2,2). Its product is the buffer's element count, padding included.
std::vector<int64_t> TiledPhysicalDims(absl::Span<const int64_t> dims,
                                       absl::Span<const std::vector<int64_t>> tiles);
int64_t TiledElementCount(absl::Span<const int64_t> dims,
                          absl::Span<const std::vector<int64_t>> tiles);

// One tiling level as seed 002's explicit steps, for a tile without combined
// dimensions (those are a plain reshape to apply first):
//   1. pad each tiled dimension d up to ceil(d/t)*t;
//   2. reshape (a bitcast) each tiled dimension into (ceil(d/t), t);
//   3. transpose: leading untiled dimensions, then the tile counts, then the
//      tile dimensions, each group in its original relative order.
struct TilingSteps {
  std::vector<int64_t> padded_dims;
  std::vector<int64_t> reshaped_dims;
  // Output dimension i is reshaped dimension transpose_permutation[i].
  std::vector<int64_t> transpose_permutation;
  std::vector<int64_t> result_dims;  // == TiledPhysicalDims(dims, {tile})
};
TilingSteps TileAsPadReshapeTranspose(absl::Span<const int64_t> dims,
                                      absl::Span<const int64_t> tile);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_TILE_MATH_H_
