// Helpers the collective passes share: which reduction an all-reduce's
// computation performs, how a collective's participants are grouped (XLA's
// CollectiveOpGroupMode), byte sizes, and combining independent collectives
// into one (domains, sets by key, merged metadata).
#ifndef PASSLAB_PASSES_COLLECTIVES_COLLECTIVE_UTIL_H_
#define PASSLAB_PASSES_COLLECTIVES_COLLECTIVE_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
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

// Combining independent collectives (XLA's collective_combiner_utils, used
// by AllReduceCombiner and AllGatherCombiner).

// The domain each instruction of `computation` lies in, named by the
// metadata of the kDomain instructions around it (XLA's HloDomainMap over
// every domain kind): instructions reachable from each other without
// crossing a kDomain share a domain; two domains with equal metadata (the
// entry side of a domain the data enters through, else the exit side of one
// it leaves through) share an id; a computation without kDomain
// instructions is one domain, id 0. kDomain instructions themselves get no
// id.
absl::flat_hash_map<const HloInstruction*, int64_t> DomainMetadataIds(const HloComputation& computation);

// Combines instructions with equal keys (key_fn: nullopt = never combined),
// as XLA's CombineInstructionsByKey: repeatedly, the first keyed instruction
// in post order opens a set, and the later ones of its key join it in post
// order until the set's result bytes would pass `threshold_bytes` or one
// reads a member (that ends the set), or the set reaches
// `threshold_count` members. An instruction over the byte threshold alone,
// or without exactly one operand, is never combined. Each set of two or
// more goes to combine_fn. Returns whether any set was combined.
absl::StatusOr<bool> CombineInstructionsByKey(
    HloComputation& computation, const std::function<std::optional<std::string>(const HloInstruction*)>& key_fn,
    const std::function<absl::Status(absl::Span<HloInstruction* const>)>& combine_fn, int64_t threshold_bytes,
    int64_t threshold_count);

// The metadata of a combined collective (XLA's MergeMetadata): the first
// member's, with the members' source locations joined ("file:line,...") and
// their op names merged as "common/prefix/(a:b)".
OpMetadata MergeCombinedMetadata(absl::Span<HloInstruction* const> members);
// Every member's frontend attributes; a key with different values gets them
// sorted and joined with commas.
FrontendAttributes MergeCombinedFrontendAttributes(absl::Span<HloInstruction* const> members);
// A tuple sharding of the members' shardings (replicated where a member has
// none), or nullopt when none has one.
std::optional<HloSharding> CombinedTupleSharding(absl::Span<HloInstruction* const> members);

// True when some instruction of `opcode` in a non-fusion computation has
// constrain_layout=true.
bool ContainsLayoutConstrainedCollective(const HloModule& module, HloOpcode opcode);

// True when exactly one while instruction of the module calls `computation`
// (as its body or condition).
bool HasUniqueWhileCaller(const HloModule& module, const HloComputation& computation);

}  // namespace passlab

#endif  // PASSLAB_PASSES_COLLECTIVES_COLLECTIVE_UTIL_H_
