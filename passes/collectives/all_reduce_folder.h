// AllReduceFolder ("all-reduce-folder", as XLA's
// xla/hlo/transforms/simplifiers/all_reduce_folder.cc):
// all-reduce(all-reduce(x)) with the same reduction (op and type), channel
// kind and explicit groups on both becomes one all-reduce over the combined
// groups, when each participant's combined group counts every contribution
// exactly once (e.g. groups {{0,1},{2,3}} then {{0,2},{1,3}} fold to
// {{0,1,2,3}}), and the inner all-reduce has no other user. The folded op
// gets a fresh channel id when the inner one had one, the merged frontend
// attributes, and a collective_group_key only when it is unambiguous. A
// module with a layout-constrained all-reduce is left alone.
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
