// What the schedulers share (latency-hiding and memory scheduler): putting a
// computed instruction sequence in place and marking the module scheduled.
#ifndef PASSLAB_PASSES_PREPARE_SCHEDULE_UTIL_H_
#define PASSLAB_PASSES_PREPARE_SCHEDULE_UTIL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/pass/hlo_pass_interface.h"

namespace passlab {

// Makes `sequence` the order of `computation` when it differs from the
// current one (counting "computations reordered" on `pass`); whether it did.
absl::StatusOr<bool> ApplySequence(HloComputation& computation, const std::vector<HloInstruction*>& sequence,
                                   HloPassInterface& pass);

// Marks `module` scheduled, so every post order follows the sequences;
// whether it was not scheduled before.
bool MarkModuleScheduled(HloModule& module);

}  // namespace passlab

#endif  // PASSLAB_PASSES_PREPARE_SCHEDULE_UTIL_H_
