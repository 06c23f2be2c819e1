// Reading HloSharding's tile assignment: which device holds which tile of an
// array, the shape of one tile, and shorthands the sharding passes and the
// multi-participant evaluator share. Only tiled, replicated and maximal
// shardings have a tile assignment; manual/unknown/tuple ones have none.
#ifndef PASSLAB_CORE_IR_HLO_SHARDING_UTIL_H_
#define PASSLAB_CORE_IR_HLO_SHARDING_UTIL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/hlo_attributes.h"
#include "core/ir/shape.h"

namespace passlab {

// A replicated sharding ({replicated}).
HloSharding ReplicatedSharding();
// A tiled sharding splitting dimension `dim` of a rank-`rank` array into
// `count` tiles held by devices 0..count-1 ({devices=[1,count,1]<=[count]}).
HloSharding TiledSharding(int64_t rank, int64_t dim, int64_t count);

// The devices of a tiled sharding's tile grid in row-major order (the iota
// form expanded). Empty for any other kind.
std::vector<int64_t> ShardingTileDevices(const HloSharding& sharding);

// Tiles along each of the array's `rank` dimensions (the replication
// dimensions at the end of tile_dims excluded); all ones unless tiled.
std::vector<int64_t> ShardingDataTiles(const HloSharding& sharding, int64_t rank);

// True when every device holds the whole array (replicated, or tiled with
// one tile per data dimension).
bool ShardingIsFullyReplicated(const HloSharding& sharding, int64_t rank);

// The tile of a rank-`rank` array that `device` holds (one index per data
// dimension); all zeros for replicated and maximal shardings; nullopt when
// the tile grid does not name the device.
std::optional<std::vector<int64_t>> ShardingTileIndex(const HloSharding& sharding, int64_t rank, int64_t device);

// The dimension a tiled sharding splits, when exactly one is split.
std::optional<int64_t> ShardingSingleSplitDimension(const HloSharding& sharding, int64_t rank);

// True when every split dimension of `shape` divides evenly by its tiles.
bool ShardingDividesEvenly(const HloSharding& sharding, const Shape& shape);

// One device's part of `shape` (each split dimension divided by its tiles,
// rounded up); the shape itself when nothing is split.
Shape ShardShape(const Shape& shape, const HloSharding& sharding);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_HLO_SHARDING_UTIL_H_
