#include "core/pass/verify_each_observer.h"

#include "core/ir/str_util.h"
#include "core/verify/hlo_verifier.h"

namespace passlab {

absl::Status VerifyEachObserver::AfterPass(const PassRunInfo& info, const HloModule& module, bool,
                                           uint64_t fingerprint_before, uint64_t fingerprint_after,
                                           const PassCounters&) {
  if (fingerprint_before == fingerprint_after) return absl::OkStatus();
  absl::Status s = VerifyModule(module);
  if (s.ok()) return s;
  return absl::FailedPreconditionError(StrCat("verifier failed after ", info.pass_name, " (@", info.occurrence_id,
                                              " in ", info.pipeline_path, "): ", s.message()));
}

}  // namespace passlab
