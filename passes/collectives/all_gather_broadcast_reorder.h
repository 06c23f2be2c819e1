// AllGatherBroadcastReorder ("all-gather-bcast-reorder"): an all-gather of a
// broadcast gathers the broadcast's (smaller) operand instead and broadcasts
// after the exchange, so fewer bytes cross the interconnect.
//
// Two forms, by the all-gather dimension d of all-gather(broadcast(x)):
//  - d comes from x (dimension k of x): all-gather x along k, then broadcast.
//  - d is added by the broadcast: every participant's block along d is
//    uniform, so x (with a size-1 dimension inserted) is all-gathered along
//    the new dimension, broadcast into [.., G, S, ..] and reshaped to
//    [.., G*S, ..] (G participants, S the block size).
// Only broadcasts that add at least one dimension are moved (otherwise
// nothing shrinks). Runs on the synchronous all-gather (before
// async-collective-creator). Needs nothing before it; leaves the broadcast
// for its other users, if any.
#ifndef PASSLAB_PASSES_COLLECTIVES_ALL_GATHER_BROADCAST_REORDER_H_
#define PASSLAB_PASSES_COLLECTIVES_ALL_GATHER_BROADCAST_REORDER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class AllGatherBroadcastReorder : public HloModulePass {
 public:
  std::string_view name() const override { return "all-gather-bcast-reorder"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_COLLECTIVES_ALL_GATHER_BROADCAST_REORDER_H_
