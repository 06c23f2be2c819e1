#include "passes/collectives/all_reduce_combiner.h"

#include "core/ir/str_util.h"
#include "passes/collectives/collective_util.h"

namespace passlab {

absl::StatusOr<bool> AllReduceCombiner::RunImpl(HloModule& module, PassRunContext*) {
  // Combinable when everything that decides who meets whom and how values
  // combine is equal.
  auto key = [](const HloInstruction& ar) -> std::string {
    std::optional<ReductionKind> kind = MatchReductionKind(ar.to_apply());
    if (!kind.has_value()) return "";
    const HloAttributes& a = ar.attrs();
    return StrCat(static_cast<int>(*kind), "|", PrimitiveTypeName(ar.shape().element_type()), "|",
                  a.replica_groups.ToString(), "|", a.channel_id.has_value(), "|", a.use_global_device_ids);
  };
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    absl::StatusOr<int64_t> removed =
        CombineCollectives(*c, HloOpcode::kAllReduce, key,
                           {.max_bytes = options_.combine_threshold_bytes, .max_count = options_.combine_threshold_count});
    if (!removed.ok()) return removed.status();
    if (*removed > 0) {
      BumpCounter("all-reduces combined away", *removed);
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
