#include "passes/collectives/all_gather_combiner.h"

#include "core/ir/str_util.h"
#include "passes/collectives/collective_util.h"

namespace passlab {

absl::StatusOr<bool> AllGatherCombiner::RunImpl(HloModule& module, PassRunContext*) {
  // Combinable when the dimension and everything that decides who meets
  // whom is equal.
  auto key = [](const HloInstruction& ag) -> std::string {
    if (ag.dimensions().size() != 1) return "";
    const HloAttributes& a = ag.attrs();
    return StrCat(ag.dimensions(0), "|", PrimitiveTypeName(ag.shape().element_type()), "|",
                  a.replica_groups.ToString(), "|", a.channel_id.has_value(), "|", a.use_global_device_ids);
  };
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    absl::StatusOr<int64_t> removed =
        CombineCollectives(*c, HloOpcode::kAllGather, key,
                           {.max_bytes = options_.combine_threshold_bytes, .max_count = options_.combine_threshold_count});
    if (!removed.ok()) return removed.status();
    if (*removed > 0) {
      BumpCounter("all-gathers combined away", *removed);
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
