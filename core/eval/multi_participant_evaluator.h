// Multi-participant evaluation: the entry computation runs once per
// participant (replica x partition), each on its own thread, and every
// collective meets the other members of its group at a rendezvous, as the
// devices of an XLA program do. Replica groups, channel ids and
// use_global_device_ids select the group as in XLA (cross-replica without a
// channel id; cross-replica-and-partition with one; flattened device ids with
// use_global_device_ids; collective-permute with a channel id is
// cross-partition). replica-id and partition-id return each participant's
// own. Device d is replica d / num_partitions, partition d % num_partitions.
//
// Evaluated collectives: all-reduce, all-gather, reduce-scatter, all-to-all,
// collective-permute, collective-broadcast, their -start/-done forms and
// async-start/-done wrapping them. A participant that fails makes every
// other one fail at its next rendezvous instead of waiting forever.
#ifndef PASSLAB_CORE_EVAL_MULTI_PARTICIPANT_EVALUATOR_H_
#define PASSLAB_CORE_EVAL_MULTI_PARTICIPANT_EVALUATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/eval/hlo_evaluator.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"

namespace passlab {

struct MultiParticipantOptions {
  // 0: take the counts from the module's config.
  int64_t replica_count = 0;
  int64_t num_partitions = 0;
  // Options of each participant's evaluator (num_threads is forced to 1:
  // the participants already run in parallel).
  EvaluatorOptions evaluator;
  // A rendezvous that waits longer than this fails (a missing participant).
  int64_t rendezvous_timeout_ms = 60000;
};

// Evaluates the module's entry once per participant; args[d] are device
// d's arguments. Returns each device's result, in device order.
absl::StatusOr<std::vector<Literal>> EvaluateParticipants(const HloModule& module,
                                                         absl::Span<const std::vector<Literal>> args,
                                                         const MultiParticipantOptions& options = {});

}  // namespace passlab

#endif  // PASSLAB_CORE_EVAL_MULTI_PARTICIPANT_EVALUATOR_H_
