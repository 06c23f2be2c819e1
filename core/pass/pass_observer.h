// Instrumentation for pass runs (like MLIR's PassInstrumentation): observers
// see every leaf pass run before and after, may veto it, and are told of
// failures. Timers, snapshots, dumps, statistics, the verifier, the changed
// audit and pass filters are all observers; passes never know about them.
#ifndef PASSLAB_CORE_PASS_PASS_OBSERVER_H_
#define PASSLAB_CORE_PASS_PASS_OBSERVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "core/ir/hlo_module.h"

namespace passlab {

class ModuleText;  // core/text/hlo_printer.h

// One run of one pass occurrence.
struct PassRunInfo {
  int64_t occurrence_id = 0;      // stable position in the pipeline ("@ID")
  std::string pipeline_path;      // enclosing pipelines, outermost first: "gpu/simplification"
  std::string pass_name;          // XLA-style name(): "algsimp"
  int64_t occurrence_index = 0;   // N-th occurrence of pass_name in the pipeline ("name:N")
  int64_t iteration = 0;          // fixed-point iteration (0 outside fixed points)
  int64_t run_index = 0;          // position of this run among all runs of the pipeline
  // During AfterPass: the module's canonical text after the run, when an
  // observer asked for text (WantsModuleText) and the run changed the module.
  std::shared_ptr<const ModuleText> text_after;
  // During AfterPass: the pass's own wall time, measured around its Run
  // alone (what fingerprints and snapshots cost is not the pass's).
  double run_seconds = 0;
};

// Named counters a pass bumps ("rule A+0 fired"), collected per run.
using PassCounters = std::map<std::string, int64_t>;

class PassObserver {
 public:
  virtual ~PassObserver() = default;
  // True when the observer uses PassRunInfo::text_after (snapshots, dumps):
  // the pipeline then prints the module after each run that changed it.
  virtual bool WantsModuleText() const { return false; }
  // Return false to skip the run (how ablations disable a pass).
  virtual bool ShouldRun(const PassRunInfo& info) { return true; }
  virtual void PassSkipped(const PassRunInfo& info) {}
  virtual absl::Status BeforePass(const PassRunInfo& info, const HloModule& module) {
    return absl::OkStatus();
  }
  // `fingerprint_*` are ModuleFingerprint before and after the run.
  virtual absl::Status AfterPass(const PassRunInfo& info, const HloModule& module, bool changed,
                                 uint64_t fingerprint_before, uint64_t fingerprint_after,
                                 const PassCounters& counters) {
    return absl::OkStatus();
  }
  virtual void PassFailed(const PassRunInfo& info, const HloModule& module,
                          const absl::Status& status) {}
  // A fixed point stopped: converged, hit its iteration limit, or cycled.
  virtual void FixedPointFinished(const std::string& path, int64_t iterations, bool hit_limit,
                                  bool cycled) {}
};

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_PASS_OBSERVER_H_
