#include "core/codegen/computation_partitioner.h"

#include <algorithm>

#include "core/codegen/indexing_map.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool IsLeaf(const HloInstruction* h) {
  return h->opcode() == HloOpcode::kParameter || h->opcode() == HloOpcode::kConstant;
}

// How `user` indexes `operand` (every operand position that names it; an
// empty result when no indexing map is known, which never compares equal).
std::vector<std::string> UserIndexing(const HloInstruction* user, const HloInstruction* operand) {
  std::vector<std::string> maps;
  for (int64_t i = 0; i < user->operand_count(); ++i) {
    if (user->operand(i) != operand) continue;
    absl::StatusOr<IndexingMap> map = ComputeOutputToInputIndexing(*user, i);
    if (!map.ok()) return {};
    maps.push_back(map->ToString());
  }
  std::sort(maps.begin(), maps.end());
  maps.erase(std::unique(maps.begin(), maps.end()), maps.end());
  return maps;
}

std::string SanitizeName(const std::string& name) {
  std::string out;
  for (char c : name) out.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

}  // namespace

PartitionedComputation::PartitionedComputation(const HloComputation& computation,
                                               const std::vector<const HloInstruction*>& roots) {
  std::vector<HloInstruction*> post_order = computation.MakeInstructionPostOrder();
  // Walk users before operands so that each user's subgraph is known.
  absl::flat_hash_map<const HloInstruction*, bool> is_output;
  for (const HloInstruction* r : roots) is_output[r] = true;
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
    const HloInstruction* h = *it;
    if (IsLeaf(h) || h->opcode() == HloOpcode::kTuple) continue;
    std::vector<const HloInstruction*> users;
    for (const HloInstruction* u : h->users()) {
      if (std::find(users.begin(), users.end(), u) == users.end()) users.push_back(u);
    }
    int joined = -1;
    if (!is_output.contains(h) && !users.empty()) {
      bool same_subgraph = true;
      auto first = subgraph_of_.find(users[0]);
      for (const HloInstruction* u : users) {
        auto s = subgraph_of_.find(u);
        same_subgraph &= s != subgraph_of_.end() && first != subgraph_of_.end() &&
                         s->second == first->second;
      }
      // One user, or every user reading it through the same single map.
      bool same_index = users.size() == 1;
      if (!same_index) {
        std::vector<std::string> first_map = UserIndexing(users[0], h);
        same_index = first_map.size() == 1;
        for (const HloInstruction* u : users) same_index &= UserIndexing(u, h) == first_map;
      }
      if (same_subgraph && same_index) joined = first->second;
    }
    if (joined < 0) {
      joined = static_cast<int>(subgraphs_.size());
      Subgraph s;
      s.name = StrCat(SanitizeName(computation.name()), "__", SanitizeName(h->name()));
      s.root = h;
      subgraphs_.push_back(std::move(s));
    }
    subgraph_of_[h] = joined;
  }
  for (const HloInstruction* h : post_order) {
    auto it = subgraph_of_.find(h);
    if (it != subgraph_of_.end()) subgraphs_[it->second].instructions.push_back(h);
  }
}

const Subgraph* PartitionedComputation::SubgraphOf(const HloInstruction* instruction) const {
  auto it = subgraph_of_.find(instruction);
  return it == subgraph_of_.end() ? nullptr : &subgraphs_[it->second];
}

bool PartitionedComputation::IsSubgraphRoot(const HloInstruction* instruction) const {
  const Subgraph* s = SubgraphOf(instruction);
  return s != nullptr && s->root == instruction;
}

}  // namespace passlab
