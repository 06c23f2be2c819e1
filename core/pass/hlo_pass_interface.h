// The pass interface (after XLA's HloPassInterface): a non-virtual Run that
// calls RunImpl, and returns true exactly when the module changed (audited by
// fingerprint when the pipeline runs it). Options come through constructors,
// never globals.
#ifndef PASSLAB_CORE_PASS_HLO_PASS_INTERFACE_H_
#define PASSLAB_CORE_PASS_HLO_PASS_INTERFACE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"
#include "core/pass/pass_observer.h"

namespace passlab {

class PassRunContext;

// One leaf pass occurrence in a pipeline, as --list-passes shows it.
struct PassOccurrence {
  int64_t id = 0;              // "@ID", in pipeline order
  std::string pipeline_path;   // "gpu/simplification"
  std::string pass_name;       // "algsimp"
  int64_t index_in_pipeline = 0;
  int64_t occurrence_index = 0;  // N-th occurrence of pass_name
  bool in_fixed_point = false;
};

class HloPassInterface {
 public:
  virtual ~HloPassInterface() = default;
  virtual std::string_view name() const = 0;
  // Pipelines and fixed points contain passes; leaves are real passes.
  virtual bool IsPipeline() const { return false; }

  // Runs the pass. `context` carries observers and counters when run inside a
  // pipeline; standalone runs pass nullptr.
  absl::StatusOr<bool> Run(HloModule& module, PassRunContext* context = nullptr);

  // Appends this pass's leaf occurrences (pipelines recurse).
  virtual void EnumerateOccurrences(const std::string& path, bool in_fixed_point,
                                    std::vector<PassOccurrence>& out);

  // Counters the current run bumped (valid during RunImpl).
  void BumpCounter(std::string_view counter, int64_t amount = 1);

 protected:
  virtual absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) = 0;

 private:
  friend class HloPassPipeline;
  PassCounters* counters_ = nullptr;
  int64_t occurrence_id_ = -1;
};

// A pass over the whole module.
class HloModulePass : public HloPassInterface {};

// A pass applied to each non-fusion computation in post order.
class HloComputationPass : public HloModulePass {
 protected:
  virtual absl::StatusOr<bool> RunOnComputation(HloComputation& computation) = 0;
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) final;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_HLO_PASS_INTERFACE_H_
