#include "passes/collectives/all_reduce_combiner.h"

#include <optional>
#include <utility>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/collectives/collective_util.h"

namespace passlab {
namespace {

// One all-reduce of a tuple for `members` (XLA's CombineAllReduces).
absl::Status CombineAllReduces(absl::Span<HloInstruction* const> members) {
  HloComputation& computation = *members.back()->parent();
  std::vector<HloInstruction*> operands;
  std::vector<Shape> shapes;
  for (HloInstruction* member : members) {
    operands.push_back(member->mutable_operand(0));
    shapes.push_back(member->operand(0)->shape());
  }
  const HloInstruction* first = members.front();
  auto combined = HloInstruction::Create(HloOpcode::kAllReduce, Shape::Tuple(shapes), operands);
  HloAttributes& a = combined->mutable_attrs();
  a.replica_groups = first->attrs().replica_groups;
  a.channel_id = first->attrs().channel_id;
  a.use_global_device_ids = first->attrs().use_global_device_ids;
  combined->set_to_apply(first->to_apply());
  combined->set_metadata(MergeCombinedMetadata(members));
  *combined->mutable_frontend_attributes() = MergeCombinedFrontendAttributes(members);
  if (std::optional<HloSharding> sharding = CombinedTupleSharding(members)) combined->set_sharding(*sharding);
  HloInstruction* added = computation.AddInstruction(std::move(combined));
  for (size_t i = 0; i < members.size(); ++i) {
    RETURN_IF_ERROR(computation.ReplaceWithNewInstruction(
        members[i], HloInstruction::CreateGetTupleElement(members[i]->shape(), added, static_cast<int64_t>(i))));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> AllReduceCombiner::RunImpl(HloModule& module, PassRunContext*) {
  if (options_.combine_threshold_in_bytes <= 0 || options_.combine_threshold_count <= 0) return false;
  if (ContainsLayoutConstrainedCollective(module, HloOpcode::kAllReduce)) return false;
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    absl::flat_hash_map<const HloInstruction*, int64_t> domains = DomainMetadataIds(*c);
    // Combinable when everything that decides who meets whom and how values
    // combine is equal (XLA's AllReduceKey).
    auto key = [&](const HloInstruction* ar) -> std::optional<std::string> {
      if (ar->opcode() != HloOpcode::kAllReduce) return std::nullopt;
      if (ar->frontend_attributes().map.contains("_scheduling_group_id")) return std::nullopt;
      if (!ar->control_predecessors().empty() || !ar->control_successors().empty()) return std::nullopt;
      const HloComputation* reduction = ar->to_apply();
      if (reduction == nullptr || reduction->instruction_count() != 3 || reduction->num_parameters() != 2) {
        return std::nullopt;
      }
      const HloInstruction* root = reduction->root_instruction();
      const HloAttributes& a = ar->attrs();
      std::string groups;
      for (const std::vector<int64_t>& g : a.replica_groups.Expand()) StrAppend(&groups, "{", Join(g, ","), "}");
      auto domain = domains.find(ar);
      return StrCat(HloOpcodeString(root->opcode()), "|", PrimitiveTypeName(root->shape().element_type()), "|",
                    domain == domains.end() ? -1 : domain->second, "|", a.channel_id.has_value(), "|",
                    a.use_global_device_ids, "|", groups);
    };
    ASSIGN_OR_RETURN(bool combined, CombineInstructionsByKey(
        *c, key, CombineAllReduces, options_.combine_threshold_in_bytes, options_.combine_threshold_count));
    if (combined) {
      BumpCounter("computations with combined all-reduces");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
