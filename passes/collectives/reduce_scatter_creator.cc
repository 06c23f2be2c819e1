#include "passes/collectives/reduce_scatter_creator.h"

#include <algorithm>

#include "core/ir/status_macros.h"
#include "passes/collectives/collective_util.h"

namespace passlab {
namespace {

// The value of a scalar integer index expression on the participant
// (replica, partition); nullopt for anything else.
std::optional<int64_t> EvaluateIndex(const HloInstruction* i, int64_t replica, int64_t partition, int depth = 0) {
  if (depth > 32 || !i->shape().IsArray() || i->shape().element_count() != 1 ||
      !IsIntegralType(i->shape().element_type())) {
    return std::nullopt;
  }
  auto operand = [&](int64_t k) { return EvaluateIndex(i->operand(k), replica, partition, depth + 1); };
  switch (i->opcode()) {
    case HloOpcode::kConstant:
      return i->literal().GetInt(0);
    case HloOpcode::kReplicaId:
      return replica;
    case HloOpcode::kPartitionId:
      return partition;
    case HloOpcode::kConvert: case HloOpcode::kCopy: case HloOpcode::kReshape: case HloOpcode::kBitcast:
      return operand(0);
    case HloOpcode::kAdd: case HloOpcode::kSubtract: case HloOpcode::kMultiply: case HloOpcode::kDivide:
    case HloOpcode::kRemainder: case HloOpcode::kMaximum: case HloOpcode::kMinimum: {
      std::optional<int64_t> a = operand(0), b = operand(1);
      if (!a || !b) return std::nullopt;
      switch (i->opcode()) {
        case HloOpcode::kAdd: return *a + *b;
        case HloOpcode::kSubtract: return *a - *b;
        case HloOpcode::kMultiply: return *a * *b;
        case HloOpcode::kDivide: return *b == 0 ? std::nullopt : std::optional(*a / *b);
        case HloOpcode::kRemainder: return *b == 0 ? std::nullopt : std::optional(*a % *b);
        case HloOpcode::kMaximum: return std::max(*a, *b);
        default: return std::min(*a, *b);
      }
    }
    case HloOpcode::kDynamicSlice: {
      // table[index] with a constant rank-1 table (the partitioner's
      // partition-id -> offset lookups).
      const HloInstruction* table = i->operand(0);
      if (table->opcode() != HloOpcode::kConstant || table->shape().rank() != 1 || i->operand_count() != 2) {
        return std::nullopt;
      }
      std::optional<int64_t> index = operand(1);
      if (!index) return std::nullopt;
      int64_t n = table->shape().dimensions(0);
      return table->literal().GetInt(std::clamp<int64_t>(*index, 0, n - 1));
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

absl::StatusOr<bool> ReduceScatterCreator::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  const int64_t replicas = module.config().replica_count;
  const int64_t partitions = module.config().num_partitions;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* ds : c->MakeInstructionPostOrder()) {
      if (ds->opcode() != HloOpcode::kDynamicSlice) continue;
      HloInstruction* ar = ds->mutable_operand(0);
      if (ar->opcode() != HloOpcode::kAllReduce || ar->user_count() != 1 || ar->operand_count() != 1 ||
          !ar->shape().IsArray() || ar->attrs().constrain_layout || !ar->control_successors().empty() ||
          !MatchReductionKind(ar->to_apply()).has_value()) {
        continue;
      }
      CollectiveGroupMode mode = GroupModeOf(*ar);
      if (mode != CollectiveGroupMode::kCrossReplica && mode != CollectiveGroupMode::kFlattenedId) continue;
      // Exactly one sliced dimension.
      const Shape& full = ar->shape();
      std::optional<int64_t> split;
      bool several = false;
      for (int64_t d = 0; d < full.rank(); ++d) {
        if (ds->shape().dimensions(d) == full.dimensions(d)) continue;
        several = split.has_value();
        split = d;
      }
      if (!split.has_value() || several) continue;
      const int64_t rows = ds->shape().dimensions(*split);
      std::vector<std::vector<int64_t>> groups = ExpandedGroups(*ar, GroupModeIdCount(mode, replicas, partitions));
      // dynamic-slice(all-reduce(x), k * rows for member k) => reduce-scatter(x).
      bool matches = true;
      for (const std::vector<int64_t>& g : groups) {
        if (static_cast<int64_t>(g.size()) * rows != full.dimensions(*split)) matches = false;
        for (size_t k = 0; matches && k < g.size(); ++k) {
          int64_t replica = mode == CollectiveGroupMode::kCrossReplica ? g[k] : g[k] / partitions;
          // Cross-replica groups run within every partition: the offsets
          // must not depend on the partition, checked on partition 0 and
          // the last one.
          std::vector<int64_t> partitions_to_check =
              mode == CollectiveGroupMode::kCrossReplica ? std::vector<int64_t>{0, partitions - 1}
                                                          : std::vector<int64_t>{g[k] % partitions};
          for (int64_t partition : partitions_to_check) {
            for (int64_t d = 0; matches && d < full.rank(); ++d) {
              std::optional<int64_t> offset = EvaluateIndex(ds->operand(1 + d), replica, partition);
              int64_t expected = d == *split ? static_cast<int64_t>(k) * rows : 0;
              if (!offset.has_value() || *offset != expected) matches = false;
            }
          }
        }
      }
      if (!matches) continue;
      auto rs = HloInstruction::Create(HloOpcode::kReduceScatter, ds->shape(), {ar->mutable_operand(0)});
      rs->mutable_attrs() = ar->attrs();
      rs->set_to_apply(ar->to_apply());
      rs->set_dimensions({*split});
      rs->set_metadata(ar->metadata());
      RETURN_IF_ERROR(c->ReplaceWithNewInstruction(ds, std::move(rs)));
      BumpCounter("dynamic-slice(all-reduce(x)) => reduce-scatter(x)");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
