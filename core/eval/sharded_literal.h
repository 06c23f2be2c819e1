// Values of sharded arrays: the part of a full value one device holds under
// an HloSharding, and the full value put back together from every device's
// part. Used to compare a partitioned module run on N participants with the
// unpartitioned module run on one.
#ifndef PASSLAB_CORE_EVAL_SHARDED_LITERAL_H_
#define PASSLAB_CORE_EVAL_SHARDED_LITERAL_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/hlo_attributes.h"
#include "core/ir/literal.h"

namespace passlab {

// The part of `full` that `device` holds (tuples element by element with a
// tuple sharding). Replicated and maximal shardings hold the whole value.
absl::StatusOr<Literal> ShardLiteral(const Literal& full, const HloSharding& sharding, int64_t device);

// The full value of `full_shape` from per_device[d], device d's part. Each
// tile is read from the first device that holds it.
absl::StatusOr<Literal> UnshardLiteral(absl::Span<const Literal> per_device, const HloSharding& sharding,
                                       const Shape& full_shape);

}  // namespace passlab

#endif  // PASSLAB_CORE_EVAL_SHARDED_LITERAL_H_
