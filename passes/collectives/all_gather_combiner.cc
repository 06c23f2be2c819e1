#include "passes/collectives/all_gather_combiner.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/collectives/collective_util.h"

namespace passlab {
namespace {

// The most frequent gather dimension of `members` when every member has
// that dimension, else 0 (XLA's FindMostFrequentGatherDim; ties go to the
// lowest dimension).
int64_t MostFrequentGatherDimension(absl::Span<HloInstruction* const> members) {
  std::vector<int64_t> frequency;
  int64_t min_rank = std::numeric_limits<int64_t>::max();
  for (const HloInstruction* member : members) {
    int64_t dim = member->dimensions(0);
    if (static_cast<int64_t>(frequency.size()) <= dim) frequency.resize(dim + 1, 0);
    ++frequency[dim];
    min_rank = std::min(min_rank, member->shape().rank());
  }
  int64_t most_frequent = std::max_element(frequency.begin(), frequency.end()) - frequency.begin();
  return most_frequent < min_rank ? most_frequent : 0;
}

// `shape` with dimensions a and b swapped; the layout follows, so the
// physical order of the elements stays (a bitcast between the two is free).
Shape SwapDimensions(const Shape& shape, int64_t a, int64_t b) {
  Shape swapped = shape;
  swapped.set_dimensions(a, shape.dimensions(b));
  swapped.set_dimensions(b, shape.dimensions(a));
  if (swapped.has_layout()) {
    for (int64_t& d : swapped.mutable_layout().mutable_minor_to_major()) {
      if (d == a) {
        d = b;
      } else if (d == b) {
        d = a;
      }
    }
  }
  return swapped;
}

// One all-gather of a tuple for `members` (XLA's CombineAllGathers).
absl::Status CombineAllGathers(absl::Span<HloInstruction* const> members) {
  HloComputation& computation = *members.back()->parent();
  int64_t dim = MostFrequentGatherDimension(members);
  std::vector<HloInstruction*> operands;
  std::vector<Shape> shapes;
  for (HloInstruction* member : members) {
    HloInstruction* operand = member->mutable_operand(0);
    int64_t own = member->dimensions(0);
    if (own == dim) {
      operands.push_back(operand);
      shapes.push_back(member->shape());
      continue;
    }
    operands.push_back(
        computation.AddInstruction(HloInstruction::CreateBitcast(SwapDimensions(operand->shape(), own, dim), operand)));
    shapes.push_back(SwapDimensions(member->shape(), own, dim));
  }
  const HloInstruction* first = members.front();
  auto combined = HloInstruction::Create(HloOpcode::kAllGather, Shape::Tuple(shapes), operands);
  HloAttributes& a = combined->mutable_attrs();
  a.replica_groups = first->attrs().replica_groups;
  a.channel_id = first->attrs().channel_id;
  a.use_global_device_ids = first->attrs().use_global_device_ids;
  combined->set_dimensions({dim});
  combined->set_metadata(MergeCombinedMetadata(members));
  *combined->mutable_frontend_attributes() = MergeCombinedFrontendAttributes(members);
  if (std::optional<HloSharding> sharding = CombinedTupleSharding(members)) combined->set_sharding(*sharding);
  HloInstruction* added = computation.AddInstruction(std::move(combined));
  for (size_t i = 0; i < members.size(); ++i) {
    HloInstruction* replacement =
        computation.AddInstruction(HloInstruction::CreateGetTupleElement(added, static_cast<int64_t>(i)));
    int64_t own = members[i]->dimensions(0);
    if (own != dim) {
      replacement = computation.AddInstruction(
          HloInstruction::CreateBitcast(SwapDimensions(replacement->shape(), own, dim), replacement));
    }
    RETURN_IF_ERROR(computation.ReplaceInstruction(members[i], replacement));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> AllGatherCombiner::RunImpl(HloModule& module, PassRunContext*) {
  if (options_.combine_threshold_in_bytes <= 0 || options_.combine_threshold_count <= 0) return false;
  if (ContainsLayoutConstrainedCollective(module, HloOpcode::kAllGather)) return false;
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    if (!options_.combine_while_loops && HasUniqueWhileCaller(module, *c)) continue;
    absl::flat_hash_map<const HloInstruction*, int64_t> domains = DomainMetadataIds(*c);
    // Combinable when everything that decides who meets whom is equal.
    auto key = [&](const HloInstruction* ag) -> std::optional<std::string> {
      if (ag->opcode() != HloOpcode::kAllGather || ag->dimensions().size() != 1) return std::nullopt;
      const HloAttributes& a = ag->attrs();
      std::string groups;
      for (const std::vector<int64_t>& g : a.replica_groups.Expand()) StrAppend(&groups, "{", Join(g, ","), "}");
      return StrCat(options_.combine_by_dim ? ag->dimensions(0) : -1, "|", domains.find(ag)->second, "|",
                    a.channel_id.has_value(), "|", a.use_global_device_ids, "|",
                    options_.combine_different_dtypes ? "" : PrimitiveTypeName(ag->shape().element_type()), "|",
                    groups);
    };
    ASSIGN_OR_RETURN(bool combined, CombineInstructionsByKey(
        *c, key, CombineAllGathers, options_.combine_threshold_in_bytes, options_.combine_threshold_count));
    if (combined) {
      BumpCounter("computations with combined all-gathers");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
