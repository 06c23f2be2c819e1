#include "core/eval/sharded_literal.h"

#include <vector>

#include "core/eval/eval_internal.h"
#include "core/ir/hlo_sharding_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

absl::Status CheckShardable(const HloSharding& sharding, const Shape& shape) {
  if (sharding.kind == HloSharding::Kind::kTiled && !ShardingDividesEvenly(sharding, shape)) {
    return absl::UnimplementedError(StrCat("sharding ", sharding.ToString(), " does not divide ",
                                           shape.ToString(false), " evenly"));
  }
  if (sharding.kind != HloSharding::Kind::kTiled && sharding.kind != HloSharding::Kind::kReplicated &&
      sharding.kind != HloSharding::Kind::kMaximal) {
    return absl::UnimplementedError(StrCat("sharding ", sharding.ToString(), " has no tile assignment"));
  }
  return absl::OkStatus();
}

const HloSharding& ElementSharding(const HloSharding& sharding, int64_t i) {
  return sharding.kind == HloSharding::Kind::kTuple ? sharding.tuple_elements[i] : sharding;
}

}  // namespace

absl::StatusOr<Literal> ShardLiteral(const Literal& full, const HloSharding& sharding, int64_t device) {
  if (full.shape().IsTuple()) {
    std::vector<Literal> parts;
    for (size_t i = 0; i < full.tuple_elements().size(); ++i) {
      ASSIGN_OR_RETURN(Literal part, ShardLiteral(full.tuple_elements()[i], ElementSharding(sharding, i), device));
      parts.push_back(std::move(part));
    }
    return Literal::Tuple(std::move(parts));
  }
  RETURN_IF_ERROR(CheckShardable(sharding, full.shape()));
  const Shape& shape = full.shape();
  std::optional<std::vector<int64_t>> tile = ShardingTileIndex(sharding, shape.rank(), device);
  if (!tile.has_value()) return absl::InvalidArgumentError(StrCat("device ", device, " holds no tile of ", sharding.ToString()));
  Shape part_shape = ShardShape(shape, sharding);
  Literal part(part_shape);
  std::vector<int64_t> full_index(shape.rank());
  eval::ForEachIndex(part_shape.dimensions(), [&](const eval::Index& idx, int64_t linear) {
    for (int64_t d = 0; d < shape.rank(); ++d) full_index[d] = (*tile)[d] * part_shape.dimensions(d) + idx[d];
    eval::CopyElement(part, linear, full, eval::Linear(full_index, shape.dimensions()));
  });
  return part;
}

absl::StatusOr<Literal> UnshardLiteral(absl::Span<const Literal> per_device, const HloSharding& sharding,
                                       const Shape& full_shape) {
  if (full_shape.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < full_shape.tuple_shapes_size(); ++i) {
      std::vector<Literal> parts;
      for (const Literal& l : per_device) parts.push_back(l.tuple_elements()[i]);
      ASSIGN_OR_RETURN(Literal e, UnshardLiteral(parts, ElementSharding(sharding, i), full_shape.tuple_shapes(i)));
      elements.push_back(std::move(e));
    }
    return Literal::Tuple(std::move(elements));
  }
  RETURN_IF_ERROR(CheckShardable(sharding, full_shape));
  if (sharding.kind == HloSharding::Kind::kMaximal) {
    if (sharding.device >= static_cast<int64_t>(per_device.size())) {
      return absl::InvalidArgumentError(StrCat("maximal device ", sharding.device, " out of range"));
    }
    return per_device[sharding.device];
  }
  Shape part_shape = ShardShape(full_shape, sharding);
  Literal full(full_shape);
  std::vector<int64_t> tiles = ShardingDataTiles(sharding, full_shape.rank());
  int64_t tile_count = 1;
  for (int64_t t : tiles) tile_count *= t;
  std::vector<bool> filled(tile_count, false);
  std::vector<int64_t> full_index(full_shape.rank());
  for (int64_t d = 0; d < static_cast<int64_t>(per_device.size()); ++d) {
    std::optional<std::vector<int64_t>> tile = ShardingTileIndex(sharding, full_shape.rank(), d);
    if (!tile.has_value()) continue;
    int64_t t = eval::Linear(*tile, tiles);
    if (filled[t]) continue;
    filled[t] = true;
    const Literal& part = per_device[d];
    if (!part.shape().Compatible(part_shape)) {
      return absl::InvalidArgumentError(StrCat("device ", d, " holds ", part.shape().ToString(false),
                                               ", expected ", part_shape.ToString(false)));
    }
    eval::ForEachIndex(part_shape.dimensions(), [&](const eval::Index& idx, int64_t linear) {
      for (int64_t k = 0; k < full_shape.rank(); ++k) full_index[k] = (*tile)[k] * part_shape.dimensions(k) + idx[k];
      eval::CopyElement(full, eval::Linear(full_index, full_shape.dimensions()), part, linear);
    });
  }
  for (bool f : filled) {
    if (!f) return absl::InvalidArgumentError(StrCat("no device holds some tile of ", sharding.ToString()));
  }
  return full;
}

}  // namespace passlab
