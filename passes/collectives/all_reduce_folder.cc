#include "passes/collectives/all_reduce_folder.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/status_macros.h"
#include "passes/collectives/collective_util.h"

namespace passlab {
namespace {

// The groups of one all-reduce after another (XLA's FoldReplicaGroups):
// per participant, the participants whose values reach it through inner
// then outer; nullopt when one would count twice or the sets do not
// partition the participants. Participants are numbered up to the largest
// id of the inner groups. Groups sorted by their first id.
std::optional<std::vector<std::vector<int64_t>>> FoldReplicaGroups(const std::vector<std::vector<int64_t>>& inner,
                                                                   const std::vector<std::vector<int64_t>>& outer) {
  int64_t n = 0;
  for (const std::vector<int64_t>& g : inner) {
    for (int64_t id : g) n = std::max(n, id);
  }
  ++n;
  std::vector<int64_t> inner_group(n, -1);
  for (size_t g = 0; g < inner.size(); ++g) {
    for (int64_t id : inner[g]) inner_group[id] = static_cast<int64_t>(g);
  }
  // Contributor sets, numbered from 1 in the order found (std::map: the
  // output does not depend on hashing).
  std::map<std::vector<bool>, int64_t> set_ids;
  std::vector<int64_t> set_of(n, 0);
  for (const std::vector<int64_t>& g : outer) {
    std::vector<bool> contributors(n, false);
    for (int64_t id : g) {
      if (id < 0 || id >= n || inner_group[id] < 0) return std::nullopt;
      for (int64_t contributor : inner[inner_group[id]]) {
        if (contributors[contributor]) return std::nullopt;
        contributors[contributor] = true;
      }
    }
    auto [it, inserted] = set_ids.emplace(contributors, static_cast<int64_t>(set_ids.size()) + 1);
    for (int64_t id : g) set_of[id] = it->second;
  }
  std::vector<std::vector<int64_t>> folded;
  for (const auto& [contributors, id] : set_ids) {
    std::vector<int64_t> group;
    for (int64_t r = 0; r < n; ++r) {
      if (!contributors[r]) continue;
      if (set_of[r] != id) return std::nullopt;
      group.push_back(r);
    }
    folded.push_back(group);
  }
  std::sort(folded.begin(), folded.end(),
            [](const std::vector<int64_t>& a, const std::vector<int64_t>& b) { return a.front() < b.front(); });
  return folded;
}

// What must match for two all-reduces to fold, groups aside (XLA's
// AllReduceKey with ignore_replica_groups): the reduction op and type, the
// channel kind, no control dependencies.
std::optional<std::string> FoldKey(const HloInstruction& ar) {
  if (!ar.control_predecessors().empty() || !ar.control_successors().empty()) return std::nullopt;
  const HloComputation* reduction = ar.to_apply();
  if (reduction == nullptr || reduction->instruction_count() != 3 || reduction->num_parameters() != 2) {
    return std::nullopt;
  }
  const HloInstruction* root = reduction->root_instruction();
  return std::string(HloOpcodeString(root->opcode())) + "|" +
         std::string(PrimitiveTypeName(root->shape().element_type())) + "|" +
         (ar.attrs().channel_id.has_value() ? "c" : "") + "|" + (ar.attrs().use_global_device_ids ? "g" : "");
}

constexpr char kCollectiveGroupKey[] = "collective_group_key";

std::optional<std::string> GroupKey(const HloInstruction& inst) {
  auto it = inst.frontend_attributes().map.find(kCollectiveGroupKey);
  if (it == inst.frontend_attributes().map.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

int64_t NextChannelId(const HloModule& module) {
  int64_t next = 1;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* inst : c->instructions()) {
      if (inst->attrs().channel_id.has_value()) next = std::max(next, *inst->attrs().channel_id + 1);
    }
  }
  return next;
}

}  // namespace

absl::StatusOr<bool> AllReduceFolder::RunImpl(HloModule& module, PassRunContext*) {
  if (ContainsLayoutConstrainedCollective(module, HloOpcode::kAllReduce)) return false;
  int64_t next_channel_id = NextChannelId(module);
  bool changed = false;
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* outer : c->MakeInstructionPostOrder()) {
      if (outer->opcode() != HloOpcode::kAllReduce || outer->operand(0)->opcode() != HloOpcode::kAllReduce) continue;
      HloInstruction* inner = outer->mutable_operand(0);
      // ar1(ar0(x)) => ar(x) over the folded groups.
      if (inner->user_count() != 1 || inner->operand_count() != 1) continue;
      std::optional<std::string> key = FoldKey(*inner);
      if (!key.has_value() || key != FoldKey(*outer)) continue;
      if (inner->attrs().replica_groups.empty() || outer->attrs().replica_groups.empty()) continue;
      std::optional<std::vector<std::vector<int64_t>>> groups =
          FoldReplicaGroups(inner->attrs().replica_groups.Expand(), outer->attrs().replica_groups.Expand());
      if (!groups.has_value()) continue;
      auto folded = HloInstruction::Create(HloOpcode::kAllReduce, inner->shape(), inner->operands());
      HloAttributes& a = folded->mutable_attrs();
      a.replica_groups = ReplicaGroups{.groups = *groups};
      if (inner->attrs().channel_id.has_value()) a.channel_id = next_channel_id++;
      a.use_global_device_ids = inner->attrs().use_global_device_ids;
      folded->set_to_apply(inner->to_apply());
      HloInstruction* members[] = {inner, outer};
      *folded->mutable_frontend_attributes() = MergeCombinedFrontendAttributes(members);
      // A serial chain keeps a collective group key when it is unambiguous.
      std::optional<std::string> inner_key = GroupKey(*inner);
      std::optional<std::string> outer_key = GroupKey(*outer);
      std::map<std::string, std::string>& attributes = folded->mutable_frontend_attributes()->map;
      if (inner_key.has_value() || outer_key.has_value()) {
        attributes.erase(kCollectiveGroupKey);
        if (!inner_key.has_value() || !outer_key.has_value() || inner_key == outer_key) {
          attributes[kCollectiveGroupKey] = inner_key.has_value() ? *inner_key : *outer_key;
        }
      }
      HloInstruction* added = c->AddInstruction(std::move(folded));
      // Both go: the inner one may have side effects, which would keep it.
      RETURN_IF_ERROR(outer->ReplaceAllUsesWith(added));
      RETURN_IF_ERROR(c->RemoveInstruction(outer));
      RETURN_IF_ERROR(c->RemoveInstruction(inner));
      BumpCounter("all-reduce(all-reduce(x)) => all-reduce(x)");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
