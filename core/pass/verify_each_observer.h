// VerifyEachObserver: runs the HLO verifier after every pass run that
// changed the module and fails the pipeline with "verifier failed after
// <pass> (@ID in <pipeline>): <what>" (XLA's invariant checker, as an
// observer so passes stay unaware of it).
#ifndef PASSLAB_CORE_PASS_VERIFY_EACH_OBSERVER_H_
#define PASSLAB_CORE_PASS_VERIFY_EACH_OBSERVER_H_

#include "core/pass/pass_observer.h"

namespace passlab {

class VerifyEachObserver : public PassObserver {
 public:
  absl::Status AfterPass(const PassRunInfo& info, const HloModule& module, bool changed,
                         uint64_t fingerprint_before, uint64_t fingerprint_after,
                         const PassCounters& counters) override;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_VERIFY_EACH_OBSERVER_H_
