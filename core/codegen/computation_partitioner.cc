#include "core/codegen/computation_partitioner.h"

#include <algorithm>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool IsLeaf(const HloInstruction* h) {
  return h->opcode() == HloOpcode::kParameter || h->opcode() == HloOpcode::kConstant;
}

// Whether `user` reads `operand` at the user's own index.
bool ReadsAtOwnIndex(const HloInstruction* user, const HloInstruction* operand) {
  return user->IsElementwise() && user->shape().IsArray() && operand->shape().IsArray() &&
         user->shape().dimensions() == operand->shape().dimensions();
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
      bool same_index = users.size() == 1;
      if (!same_index) {
        same_index = true;
        for (const HloInstruction* u : users) same_index &= ReadsAtOwnIndex(u, h);
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
