#include "core/ir/tile_math.h"

#include <cassert>
#include <cstddef>
#include <utility>

#include "core/ir/str_util.h"

namespace passlab {
namespace {

// An element index together with the bounds it lives in.
struct IndexedDims {
  std::vector<int64_t> index;
  std::vector<int64_t> dims;
};

// Merges every dimension marked "*" in `tile` into the next more minor one;
// returns the tile without its markers.
std::vector<int64_t> CombineDimensions(IndexedDims& x, absl::Span<const int64_t> tile) {
  const size_t offset = x.dims.size() - tile.size();
  IndexedDims combined;
  combined.index.assign(x.index.begin(), x.index.begin() + offset);
  combined.dims.assign(x.dims.begin(), x.dims.begin() + offset);
  std::vector<int64_t> kept_tile;
  int64_t carried_index = 0, carried_dim = 1;
  for (size_t i = 0; i < tile.size(); ++i) {
    carried_index = carried_index * x.dims[offset + i] + x.index[offset + i];
    carried_dim *= x.dims[offset + i];
    if (tile[i] == kCombineDimension) continue;
    combined.index.push_back(carried_index);
    combined.dims.push_back(carried_dim);
    kept_tile.push_back(tile[i]);
    carried_index = 0;
    carried_dim = 1;
  }
  assert(carried_dim == 1 && "a tile cannot end in '*'");
  x = std::move(combined);
  return kept_tile;
}

// One tiling level: (leading..., e) in (leading..., d) becomes
// (leading..., e / t, e % t) in (leading..., ceil(d / t), t).
void TileOnce(IndexedDims& x, absl::Span<const int64_t> tile_with_markers) {
  const std::vector<int64_t> tile = CombineDimensions(x, tile_with_markers);
  const size_t offset = x.dims.size() - tile.size();
  IndexedDims tiled;
  tiled.index.assign(x.index.begin(), x.index.begin() + offset);
  tiled.dims.assign(x.dims.begin(), x.dims.begin() + offset);
  for (size_t i = 0; i < tile.size(); ++i) {
    tiled.index.push_back(x.index[offset + i] / tile[i]);
    tiled.dims.push_back((x.dims[offset + i] + tile[i] - 1) / tile[i]);
  }
  for (size_t i = 0; i < tile.size(); ++i) {
    tiled.index.push_back(x.index[offset + i] % tile[i]);
    tiled.dims.push_back(tile[i]);
  }
  x = std::move(tiled);
}

IndexedDims ApplyTiles(absl::Span<const int64_t> index, absl::Span<const int64_t> dims,
                       absl::Span<const std::vector<int64_t>> tiles) {
  IndexedDims x{std::vector<int64_t>(index.begin(), index.end()),
                std::vector<int64_t>(dims.begin(), dims.end())};
  for (const std::vector<int64_t>& tile : tiles) {
    assert(!tile.empty() && tile.size() <= x.dims.size());
    TileOnce(x, tile);
  }
  return x;
}

}  // namespace

absl::Status ValidateTiles(absl::Span<const int64_t> dims,
                           absl::Span<const std::vector<int64_t>> tiles) {
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(StrCat("negative dimension ", d));
  }
  std::vector<int64_t> current(dims.begin(), dims.end());
  for (size_t level = 0; level < tiles.size(); ++level) {
    const std::vector<int64_t>& tile = tiles[level];
    if (tile.empty()) {
      return absl::InvalidArgumentError(StrCat("tile ", level, " has no dimensions"));
    }
    if (tile.size() > current.size()) {
      return absl::InvalidArgumentError(StrCat("tile ", level, " has ", tile.size(),
                                               " dimensions but the shape it tiles has ",
                                               current.size()));
    }
    for (int64_t t : tile) {
      if (t == 0 || t < kCombineDimension) {
        return absl::InvalidArgumentError(
            StrCat("tile ", level, " has dimension ", t, "; need a positive size or * (-1)"));
      }
    }
    if (tile.back() == kCombineDimension) {
      return absl::InvalidArgumentError(
          StrCat("tile ", level, " ends in *, which has no more minor dimension to merge into"));
    }
    current = TiledPhysicalDims(current, {tile});
  }
  return absl::OkStatus();
}

int64_t LinearIndex(absl::Span<const int64_t> index, absl::Span<const int64_t> dims) {
  assert(index.size() == dims.size());
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    assert(index[i] >= 0 && index[i] < dims[i]);
    linear = linear * dims[i] + index[i];
  }
  return linear;
}

int64_t LinearIndexWithTiles(absl::Span<const int64_t> index, absl::Span<const int64_t> dims,
                             absl::Span<const std::vector<int64_t>> tiles) {
  IndexedDims tiled = ApplyTiles(index, dims, tiles);
  return LinearIndex(tiled.index, tiled.dims);
}

std::vector<int64_t> TiledPhysicalDims(absl::Span<const int64_t> dims,
                                       absl::Span<const std::vector<int64_t>> tiles) {
  return ApplyTiles(std::vector<int64_t>(dims.size(), 0), dims, tiles).dims;
}

int64_t TiledElementCount(absl::Span<const int64_t> dims,
                          absl::Span<const std::vector<int64_t>> tiles) {
  int64_t count = 1;
  for (int64_t d : TiledPhysicalDims(dims, tiles)) count *= d;
  return count;
}

TilingSteps TileAsPadReshapeTranspose(absl::Span<const int64_t> dims,
                                      absl::Span<const int64_t> tile) {
  assert(!tile.empty() && tile.size() <= dims.size());
  const size_t offset = dims.size() - tile.size();
  TilingSteps steps;
  std::vector<int64_t> count_positions, tile_positions;  // in reshaped_dims
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i < offset) {
      steps.transpose_permutation.push_back(static_cast<int64_t>(steps.reshaped_dims.size()));
      steps.padded_dims.push_back(dims[i]);
      steps.reshaped_dims.push_back(dims[i]);
      continue;
    }
    const int64_t t = tile[i - offset];
    assert(t > 0 && "combined dimensions are a reshape; apply them first");
    const int64_t count = (dims[i] + t - 1) / t;
    steps.padded_dims.push_back(count * t);
    count_positions.push_back(static_cast<int64_t>(steps.reshaped_dims.size()));
    steps.reshaped_dims.push_back(count);
    tile_positions.push_back(static_cast<int64_t>(steps.reshaped_dims.size()));
    steps.reshaped_dims.push_back(t);
  }
  for (int64_t p : count_positions) steps.transpose_permutation.push_back(p);
  for (int64_t p : tile_positions) steps.transpose_permutation.push_back(p);
  for (int64_t p : steps.transpose_permutation) steps.result_dims.push_back(steps.reshaped_dims[p]);
  return steps;
}

}  // namespace passlab
