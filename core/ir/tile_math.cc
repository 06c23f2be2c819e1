#include "core/ir/tile_math.h"

#include <cassert>

#include "core/ir/str_util.h"

namespace passlab {
namespace {

// Applies the combine markers of `tile` to (index, dims): a "*" folds its
// dimension into the next more minor one. Returns the tile without markers.
std::vector<int64_t> Combine(std::vector<int64_t>& index, std::vector<int64_t>& dims,
                             const std::vector<int64_t>& tile) {
  size_t offset = dims.size() - tile.size();
  std::vector<int64_t> kept_tile;
  std::vector<int64_t> new_index(index.begin(), index.begin() + offset);
  std::vector<int64_t> new_dims(dims.begin(), dims.begin() + offset);
  int64_t carry_index = 0, carry_dim = 1;
  for (size_t i = 0; i < tile.size(); ++i) {
    int64_t e = index[offset + i], d = dims[offset + i];
    carry_index = carry_index * d + e;
    carry_dim *= d;
    if (tile[i] == kCombineTileDimension) continue;
    new_index.push_back(carry_index);
    new_dims.push_back(carry_dim);
    kept_tile.push_back(tile[i]);
    carry_index = 0;
    carry_dim = 1;
  }
  index = std::move(new_index);
  dims = std::move(new_dims);
  return kept_tile;
}

// One tiling level: (index, dims) -> (tile index..., within-tile index...).
void TileOnce(std::vector<int64_t>& index, std::vector<int64_t>& dims, const std::vector<int64_t>& tile_with_markers) {
  std::vector<int64_t> tile = Combine(index, dims, tile_with_markers);
  size_t offset = dims.size() - tile.size();
  std::vector<int64_t> out_index(index.begin(), index.begin() + offset);
  std::vector<int64_t> out_dims(dims.begin(), dims.begin() + offset);
  for (size_t i = 0; i < tile.size(); ++i) {
    out_index.push_back(index[offset + i] / tile[i]);
    out_dims.push_back((dims[offset + i] + tile[i] - 1) / tile[i]);
  }
  for (size_t i = 0; i < tile.size(); ++i) {
    out_index.push_back(index[offset + i] % tile[i]);
    out_dims.push_back(tile[i]);
  }
  index = std::move(out_index);
  dims = std::move(out_dims);
}

}  // namespace

int64_t LinearIndex(absl::Span<const int64_t> index, absl::Span<const int64_t> dims) {
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i) linear = linear * dims[i] + index[i];
  return linear;
}

absl::Status ValidateTiles(absl::Span<const int64_t> dims, absl::Span<const std::vector<int64_t>> tiles) {
  int64_t rank = static_cast<int64_t>(dims.size());
  for (const std::vector<int64_t>& tile : tiles) {
    if (tile.empty()) return absl::InvalidArgumentError("a tile needs at least one dimension");
    if (static_cast<int64_t>(tile.size()) > rank) {
      return absl::InvalidArgumentError(StrCat("a tile of ", tile.size(), " dimensions is applied to a shape of rank ", rank));
    }
    for (int64_t t : tile) {
      if (t == 0 || t < kCombineTileDimension) {
        return absl::InvalidArgumentError(StrCat("tile dimension ", t, " is not positive (or * to combine)"));
      }
    }
    // The next tile applies to the shape this one produces.
    std::vector<int64_t> index(rank, 0), d(dims.begin(), dims.end());
    TileOnce(index, d, tile);
    rank = static_cast<int64_t>(d.size());
  }
  return absl::OkStatus();
}

int64_t LinearIndexWithTiles(absl::Span<const int64_t> index, absl::Span<const int64_t> dims,
                             absl::Span<const std::vector<int64_t>> tiles) {
  std::vector<int64_t> e(index.begin(), index.end()), d(dims.begin(), dims.end());
  for (const std::vector<int64_t>& tile : tiles) TileOnce(e, d, tile);
  return LinearIndex(e, d);
}

std::vector<int64_t> TiledPhysicalDims(absl::Span<const int64_t> dims, absl::Span<const std::vector<int64_t>> tiles) {
  std::vector<int64_t> e(dims.size(), 0), d(dims.begin(), dims.end());
  for (const std::vector<int64_t>& tile : tiles) TileOnce(e, d, tile);
  return d;
}

int64_t TiledElementCount(absl::Span<const int64_t> dims, absl::Span<const std::vector<int64_t>> tiles) {
  int64_t n = 1;
  for (int64_t d : TiledPhysicalDims(dims, tiles)) n *= d;
  return n;
}

TilingSteps TileAsPadReshapeTranspose(absl::Span<const int64_t> dims, absl::Span<const int64_t> tile) {
  TilingSteps s;
  size_t offset = dims.size() - tile.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (i < offset) {
      s.padded_dims.push_back(d);
      s.reshaped_dims.push_back(d);
      continue;
    }
    int64_t t = tile[i - offset];
    int64_t count = (d + t - 1) / t;
    s.padded_dims.push_back(count * t);
    s.reshaped_dims.push_back(count);
    s.reshaped_dims.push_back(t);
  }
  // Untiled dims, then tile counts, then tile dims (relative order kept).
  for (size_t i = 0; i < offset; ++i) s.transpose_permutation.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < tile.size(); ++i) s.transpose_permutation.push_back(static_cast<int64_t>(offset + 2 * i));
  for (size_t i = 0; i < tile.size(); ++i) s.transpose_permutation.push_back(static_cast<int64_t>(offset + 2 * i + 1));
  for (int64_t p : s.transpose_permutation) s.result_dims.push_back(s.reshaped_dims[p]);
  return s;
}

}  // namespace passlab
