#include "passes/collectives/all_reduce_folder.h"

#include <algorithm>
#include <set>

#include "passes/collectives/collective_util.h"

namespace passlab {
namespace {

// The groups of one all-reduce after another (ids 0..n-1), or nullopt when
// some participant would count a contribution twice.
std::optional<std::vector<std::vector<int64_t>>> FoldGroups(const std::vector<std::vector<int64_t>>& inner,
                                                            const std::vector<std::vector<int64_t>>& outer,
                                                            int64_t n) {
  std::vector<int64_t> inner_of(n, -1), outer_of(n, -1);
  for (size_t g = 0; g < inner.size(); ++g) {
    for (int64_t id : inner[g]) {
      if (id < 0 || id >= n || inner_of[id] != -1) return std::nullopt;
      inner_of[id] = static_cast<int64_t>(g);
    }
  }
  for (size_t g = 0; g < outer.size(); ++g) {
    for (int64_t id : outer[g]) {
      if (id < 0 || id >= n || outer_of[id] != -1) return std::nullopt;
      outer_of[id] = static_cast<int64_t>(g);
    }
  }
  std::set<std::vector<int64_t>> folded;
  std::vector<std::vector<int64_t>> contributors_of(n);
  for (int64_t id = 0; id < n; ++id) {
    if (inner_of[id] == -1 || outer_of[id] == -1) return std::nullopt;
    // The outer all-reduce sums, over its group members j, inner sums over
    // inner_group(j): each contributor must appear once.
    std::vector<int64_t> contributors;
    for (int64_t j : outer[outer_of[id]]) {
      const std::vector<int64_t>& g = inner[inner_of[j]];
      contributors.insert(contributors.end(), g.begin(), g.end());
    }
    std::sort(contributors.begin(), contributors.end());
    if (std::adjacent_find(contributors.begin(), contributors.end()) != contributors.end()) return std::nullopt;
    contributors_of[id] = contributors;
    folded.insert(contributors);
  }
  // The contributor sets must partition the ids (every member of a set has
  // that same set).
  for (int64_t id = 0; id < n; ++id) {
    for (int64_t k : contributors_of[id]) {
      if (contributors_of[k] != contributors_of[id]) return std::nullopt;
    }
  }
  return std::vector<std::vector<int64_t>>(folded.begin(), folded.end());
}

}  // namespace

absl::StatusOr<bool> AllReduceFolder::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  const int64_t replicas = module.config().replica_count;
  const int64_t partitions = module.config().num_partitions;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* outer : c->MakeInstructionPostOrder()) {
      if (outer->opcode() != HloOpcode::kAllReduce || outer->operand_count() != 1) continue;
      HloInstruction* inner = outer->mutable_operand(0);
      // ar1(ar0(x)) => ar(x) over the folded groups.
      if (inner->opcode() != HloOpcode::kAllReduce || inner->operand_count() != 1 || inner->user_count() != 1 ||
          inner->attrs().constrain_layout || outer->attrs().constrain_layout ||
          !inner->control_successors().empty() || !outer->control_predecessors().empty()) {
        continue;
      }
      std::optional<ReductionKind> kind = MatchReductionKind(outer->to_apply());
      if (!kind.has_value() || kind != MatchReductionKind(inner->to_apply())) continue;
      CollectiveGroupMode mode = GroupModeOf(*outer);
      if (mode != GroupModeOf(*inner) ||
          (mode != CollectiveGroupMode::kCrossReplica && mode != CollectiveGroupMode::kFlattenedId)) {
        continue;
      }
      int64_t n = GroupModeIdCount(mode, replicas, partitions);
      std::optional<std::vector<std::vector<int64_t>>> groups =
          FoldGroups(ExpandedGroups(*inner, n), ExpandedGroups(*outer, n), n);
      if (!groups.has_value()) continue;
      auto folded = outer->CloneWithNewOperands(outer->shape(), {inner->mutable_operand(0)});
      folded->mutable_attrs().replica_groups = ReplicaGroups{.groups = *groups};
      if (absl::Status s = c->ReplaceWithNewInstruction(outer, std::move(folded)); !s.ok()) return s;
      BumpCounter("all-reduce(all-reduce(x)) => all-reduce(x)");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
