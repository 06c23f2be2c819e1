// Helpers the collective passes share: which reduction an all-reduce's
// computation performs, how a collective's participants are grouped (XLA's
// CollectiveOpGroupMode), byte sizes, and dependence between instructions.
#ifndef PASSLAB_PASSES_COLLECTIVES_COLLECTIVE_UTIL_H_
#define PASSLAB_PASSES_COLLECTIVES_COLLECTIVE_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab {

enum class ReductionKind : uint8_t { kSum, kProduct, kMin, kMax, kAnd, kOr };

// The reduction of a computation op(p0, p1) (either operand order).
std::optional<ReductionKind> MatchReductionKind(const HloComputation* computation);

// How a collective's replica_groups name its participants (XLA's
// CollectiveOpGroupMode).
enum class CollectiveGroupMode : uint8_t {
  kCrossReplica,              // no channel id: replica ids, within a partition
  kCrossPartition,            // channel id, no use_global_device_ids field: partition ids
  kCrossReplicaAndPartition,  // channel id, use_global_device_ids=false: replica ids x all partitions
  kFlattenedId,               // use_global_device_ids=true: global device ids
};
CollectiveGroupMode GroupModeOf(const HloInstruction& collective);

// The explicit groups of a collective in the ids of its mode; when
// replica_groups is empty, one group of every id (`id_count` of them).
std::vector<std::vector<int64_t>> ExpandedGroups(const HloInstruction& collective, int64_t id_count);

// Number of ids of the collective's group mode in a module with the given
// counts (replicas, partitions or devices).
int64_t GroupModeIdCount(CollectiveGroupMode mode, int64_t replica_count, int64_t num_partitions);

// The participants of a group of `group_size` ids: in cross-replica-and-
// partition mode each replica id stands for all its partitions.
int64_t ParticipantsPerGroup(const HloInstruction& collective, int64_t group_size, int64_t num_partitions);

// Bytes of an array or of every array in a tuple.
int64_t ShapeBytes(const Shape& shape);

// True when `user` reads `producer` directly or transitively (in one
// computation).
bool DependsOn(const HloInstruction* user, const HloInstruction* producer);

// Combining independent collectives (AllReduceCombiner,
// AllGatherCombiner): in post order, collectives of `opcode` with one array
// operand and the same non-empty key(inst) gather into groups of at most
// `max_count` members and `max_bytes` result bytes, none depending on
// another; each group of two or more becomes one tuple-shaped collective
// (the first member's attributes) whose elements replace the members.
// Returns how many collectives were removed.
struct CombineLimits {
  int64_t max_bytes = 30 * 1024 * 1024;
  int64_t max_count = 256;
};
absl::StatusOr<int64_t> CombineCollectives(HloComputation& computation, HloOpcode opcode,
                                           const std::function<std::string(const HloInstruction&)>& key,
                                           const CombineLimits& limits);

}  // namespace passlab

#endif  // PASSLAB_PASSES_COLLECTIVES_COLLECTIVE_UTIL_H_
