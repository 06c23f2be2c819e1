// AllReduceFolder ("all-reduce-folder"): all-reduce(all-reduce(x)) with the
// same reduction becomes one all-reduce over the combined groups, when each
// participant's combined group counts every contribution exactly once (e.g.
// groups {{0,1},{2,3}} then {{0,2},{1,3}} fold to {{0,1,2,3}}). Both must
// name their participants the same way (no channel ids, or both with global
// device ids), and the inner all-reduce must have no other user. Needs the
// module's replica_count and num_partitions for empty (all) groups.
#ifndef PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_FOLDER_H_
#define PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_FOLDER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class AllReduceFolder : public HloModulePass {
 public:
  std::string_view name() const override { return "all-reduce-folder"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_COLLECTIVES_ALL_REDUCE_FOLDER_H_
