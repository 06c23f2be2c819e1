#include "passes/collectives/collective_util.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_set.h"

namespace passlab {

std::optional<ReductionKind> MatchReductionKind(const HloComputation* computation) {
  if (computation == nullptr || computation->num_parameters() != 2) return std::nullopt;
  const HloInstruction* root = computation->root_instruction();
  if (root->operand_count() != 2) return std::nullopt;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter ||
      a->parameter_number() == b->parameter_number()) {
    return std::nullopt;
  }
  PrimitiveType type = root->shape().element_type();
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return ReductionKind::kSum;
    case HloOpcode::kMultiply:
      return ReductionKind::kProduct;
    case HloOpcode::kMinimum:
      return ReductionKind::kMin;
    case HloOpcode::kMaximum:
      return ReductionKind::kMax;
    case HloOpcode::kAnd:
      return type == PrimitiveType::kPred ? std::optional(ReductionKind::kAnd) : std::nullopt;
    case HloOpcode::kOr:
      return type == PrimitiveType::kPred ? std::optional(ReductionKind::kOr) : std::nullopt;
    default:
      return std::nullopt;
  }
}

CollectiveGroupMode GroupModeOf(const HloInstruction& collective) {
  const HloAttributes& a = collective.attrs();
  if (!a.channel_id.has_value()) return CollectiveGroupMode::kCrossReplica;
  HloOpcode op = collective.opcode();
  bool has_global_ids_field = op == HloOpcode::kAllReduce || op == HloOpcode::kAllReduceStart ||
                              op == HloOpcode::kAllGather || op == HloOpcode::kAllGatherStart ||
                              op == HloOpcode::kReduceScatter;
  if (!has_global_ids_field) return CollectiveGroupMode::kCrossPartition;
  return a.use_global_device_ids ? CollectiveGroupMode::kFlattenedId
                                 : CollectiveGroupMode::kCrossReplicaAndPartition;
}

std::vector<std::vector<int64_t>> ExpandedGroups(const HloInstruction& collective, int64_t id_count) {
  std::vector<std::vector<int64_t>> groups = collective.attrs().replica_groups.Expand();
  if (!groups.empty()) return groups;
  std::vector<int64_t> all(id_count);
  for (int64_t i = 0; i < id_count; ++i) all[i] = i;
  return {all};
}

int64_t GroupModeIdCount(CollectiveGroupMode mode, int64_t replica_count, int64_t num_partitions) {
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica:
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      return replica_count;
    case CollectiveGroupMode::kCrossPartition:
      return num_partitions;
    case CollectiveGroupMode::kFlattenedId:
      return replica_count * num_partitions;
  }
  return replica_count;
}

int64_t ParticipantsPerGroup(const HloInstruction& collective, int64_t group_size, int64_t num_partitions) {
  if (GroupModeOf(collective) == CollectiveGroupMode::kCrossReplicaAndPartition) return group_size * num_partitions;
  return group_size;
}

int64_t ShapeBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t n = 0;
    for (const Shape& s : shape.tuple_shapes()) n += ShapeBytes(s);
    return n;
  }
  if (!shape.IsArray()) return 0;
  return shape.element_count() * PrimitiveByteWidth(shape.element_type());
}

bool DependsOn(const HloInstruction* user, const HloInstruction* producer) {
  std::vector<const HloInstruction*> stack(user->operands().begin(), user->operands().end());
  for (const HloInstruction* p : user->control_predecessors()) stack.push_back(p);
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    if (i == producer) return true;
    if (!seen.insert(i).second) continue;
    for (const HloInstruction* o : i->operands()) stack.push_back(o);
    for (const HloInstruction* p : i->control_predecessors()) stack.push_back(p);
  }
  return false;
}

namespace {

// Groups of combinable collectives in post order (see CombineCollectives).
std::vector<std::vector<HloInstruction*>> FormCombineGroups(
    HloComputation& computation, HloOpcode opcode, const std::function<std::string(const HloInstruction&)>& key,
    const CombineLimits& limits) {
  std::vector<std::vector<HloInstruction*>> groups;
  std::vector<int64_t> bytes;
  // Open group (index into `groups`) per key; std::map for a deterministic
  // order.
  std::map<std::string, size_t> open;
  for (HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    if (inst->opcode() != opcode || inst->operand_count() != 1 || !inst->shape().IsArray() ||
        inst->attrs().constrain_layout || !inst->control_predecessors().empty() ||
        !inst->control_successors().empty()) {
      continue;
    }
    std::string k = key(*inst);
    if (k.empty()) continue;
    int64_t b = ShapeBytes(inst->shape());
    auto it = open.find(k);
    bool fits = it != open.end() && bytes[it->second] + b <= limits.max_bytes &&
                static_cast<int64_t>(groups[it->second].size()) < limits.max_count;
    for (size_t m = 0; fits && m < groups[it->second].size(); ++m) {
      if (DependsOn(inst, groups[it->second][m])) fits = false;
    }
    if (!fits) {
      open[k] = groups.size();
      groups.push_back({});
      bytes.push_back(0);
      it = open.find(k);
    }
    groups[it->second].push_back(inst);
    bytes[it->second] += b;
  }
  return groups;
}

}  // namespace

absl::StatusOr<int64_t> CombineCollectives(HloComputation& computation, HloOpcode opcode,
                                           const std::function<std::string(const HloInstruction&)>& key,
                                           const CombineLimits& limits) {
  int64_t removed = 0;
  // One group at a time: the members of a group are independent of each
  // other, but two groups formed together can depend on each other
  // crosswise (a1 -> b2 and b1 -> a2), and combining both would make a
  // cycle. After each combination the groups are formed afresh.
  while (true) {
    std::vector<std::vector<HloInstruction*>> groups = FormCombineGroups(computation, opcode, key, limits);
    auto group = std::find_if(groups.begin(), groups.end(), [](const auto& g) { return g.size() >= 2; });
    if (group == groups.end()) return removed;
    std::vector<HloInstruction*> operands;
    std::vector<Shape> shapes;
    for (HloInstruction* member : *group) {
      operands.push_back(member->mutable_operand(0));
      shapes.push_back(member->shape());
    }
    const HloInstruction* first = (*group)[0];
    auto combined = HloInstruction::Create(opcode, Shape::Tuple(shapes), operands);
    combined->mutable_attrs() = first->attrs();
    for (HloComputation* called : first->called_computations()) combined->AppendCalledComputation(called);
    combined->set_dimensions(first->dimensions());
    combined->set_metadata(first->metadata());
    HloInstruction* added = computation.AddInstruction(std::move(combined));
    for (size_t i = 0; i < group->size(); ++i) {
      HloInstruction* element =
          computation.AddInstruction(HloInstruction::CreateGetTupleElement(added, static_cast<int64_t>(i)));
      if (absl::Status s = computation.ReplaceInstruction((*group)[i], element); !s.ok()) return s;
    }
    removed += static_cast<int64_t>(group->size()) - 1;
  }
}

}  // namespace passlab
