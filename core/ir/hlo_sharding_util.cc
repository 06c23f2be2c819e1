#include "core/ir/hlo_sharding_util.h"

#include <algorithm>
#include <numeric>

namespace passlab {

HloSharding ReplicatedSharding() { return HloSharding{}; }

HloSharding TiledSharding(int64_t rank, int64_t dim, int64_t count) {
  HloSharding s;
  s.kind = HloSharding::Kind::kTiled;
  s.tile_dims.assign(rank, 1);
  s.tile_dims[dim] = count;
  s.iota = true;
  s.iota_reshape_dims = {count};
  return s;
}

std::vector<int64_t> ShardingTileDevices(const HloSharding& sharding) {
  if (sharding.kind != HloSharding::Kind::kTiled) return {};
  if (!sharding.iota) return sharding.devices;
  // The iota form is the devices 0..N-1 reshaped and transposed: the same
  // expansion as iota replica groups, viewed as one group.
  ReplicaGroups groups;
  groups.iota = true;
  groups.iota_reshape_dims = sharding.iota_reshape_dims;
  groups.iota_transpose_perm = sharding.iota_transpose_perm;
  int64_t n = 1;
  for (int64_t d : sharding.iota_reshape_dims) n *= d;
  groups.iota_group_dims = {1, n};
  return groups.Expand()[0];
}

std::vector<int64_t> ShardingDataTiles(const HloSharding& sharding, int64_t rank) {
  std::vector<int64_t> tiles(rank, 1);
  if (sharding.kind != HloSharding::Kind::kTiled) return tiles;
  for (int64_t d = 0; d < rank && d < static_cast<int64_t>(sharding.tile_dims.size()); ++d) {
    tiles[d] = sharding.tile_dims[d];
  }
  return tiles;
}

bool ShardingIsFullyReplicated(const HloSharding& sharding, int64_t rank) {
  if (sharding.kind == HloSharding::Kind::kReplicated) return true;
  if (sharding.kind != HloSharding::Kind::kTiled) return false;
  for (int64_t t : ShardingDataTiles(sharding, rank)) {
    if (t != 1) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> ShardingTileIndex(const HloSharding& sharding, int64_t rank, int64_t device) {
  if (sharding.kind == HloSharding::Kind::kReplicated || sharding.kind == HloSharding::Kind::kMaximal) {
    return std::vector<int64_t>(rank, 0);
  }
  if (sharding.kind != HloSharding::Kind::kTiled) return std::nullopt;
  std::vector<int64_t> devices = ShardingTileDevices(sharding);
  auto it = std::find(devices.begin(), devices.end(), device);
  if (it == devices.end()) return std::nullopt;
  int64_t linear = it - devices.begin();
  // Row-major position in tile_dims; the trailing replication dims are
  // dropped from the result.
  std::vector<int64_t> index(sharding.tile_dims.size());
  for (int64_t d = static_cast<int64_t>(sharding.tile_dims.size()) - 1; d >= 0; --d) {
    index[d] = linear % sharding.tile_dims[d];
    linear /= sharding.tile_dims[d];
  }
  index.resize(rank, 0);
  return index;
}

std::optional<int64_t> ShardingSingleSplitDimension(const HloSharding& sharding, int64_t rank) {
  std::optional<int64_t> split;
  std::vector<int64_t> tiles = ShardingDataTiles(sharding, rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (tiles[d] == 1) continue;
    if (split.has_value()) return std::nullopt;
    split = d;
  }
  return split;
}

bool ShardingDividesEvenly(const HloSharding& sharding, const Shape& shape) {
  if (!shape.IsArray()) return false;
  std::vector<int64_t> tiles = ShardingDataTiles(sharding, shape.rank());
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dimensions(d) % tiles[d] != 0) return false;
  }
  return true;
}

Shape ShardShape(const Shape& shape, const HloSharding& sharding) {
  Shape out = shape;
  if (!shape.IsArray()) return out;
  std::vector<int64_t> tiles = ShardingDataTiles(sharding, shape.rank());
  for (int64_t d = 0; d < shape.rank(); ++d) {
    out.set_dimensions(d, (shape.dimensions(d) + tiles[d] - 1) / tiles[d]);
  }
  return out;
}

}  // namespace passlab
