// HloPassPipeline runs passes in order and instruments every leaf run through
// the observers of the outermost pipeline; HloPassFix runs a pass or pipeline
// until it stops changing the module (iteration limit, default 25, reported
// when hit; a repeated fingerprint is reported as a cycle).
#ifndef PASSLAB_CORE_PASS_HLO_PASS_PIPELINE_H_
#define PASSLAB_CORE_PASS_HLO_PASS_PIPELINE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/pass/hlo_pass_interface.h"
#include "core/pass/module_fingerprint.h"

namespace passlab {

struct PipelineOptions {
  // A pass whose "changed" answer disagrees with the fingerprint is an error
  // (on in tests and debug runs) or only counted (off).
  bool audit_changed = true;
  // Fingerprint every run (needed by the audit, the observers' fingerprints
  // and fixed-point cycle detection). Off only for benchmarking the bare
  // passes: then observers see fingerprints of 0 and the audit is skipped.
  bool instrument = true;
};

// What instrumentation itself cost in one top-level pipeline run: the
// canonical texts walked for fingerprints and snapshots, the instruction
// lines printed for them, and the time taken (timers and observers aside).
struct PipelineRunStats {
  int64_t texts = 0;
  int64_t lines_printed = 0;
  double seconds = 0;
};

// State shared by every pass of one top-level pipeline run.
class PassRunContext {
 public:
  std::vector<PassObserver*> observers;
  PipelineOptions options;
  std::vector<std::string> path;  // enclosing pipeline names
  int64_t iteration = 0;
  int64_t run_index = 0;
  int64_t changed_audit_failures = 0;
  std::vector<const PassOccurrence*> occurrence_by_id;
  // The fingerprint of the module after the last run: passes are the only
  // writers during a pipeline run, so it is the next run's "before". It is
  // the hash of the canonical text, which is walked again only when the IR
  // changed (most runs in a fixed point change nothing), reusing the last
  // text's unchanged parts; observers get the text when they want it.
  bool have_last = false;
  uint64_t last_fingerprint = 0;
  bool want_text = false;
  std::shared_ptr<const ModuleText> last_text;  // null until printed
  uint64_t last_text_generation = 0;            // IrGeneration() it was printed at
  PipelineRunStats stats;

  std::string Path() const;
  // Fingerprints the module as the new "last" state (and prints it, when
  // observers want text and it differs from the previous state).
  void Remember(const HloModule& module);
};

class HloPassPipeline : public HloPassInterface {
 public:
  explicit HloPassPipeline(std::string name, PipelineOptions options = {})
      : name_(std::move(name)), options_(options) {}
  std::string_view name() const override { return name_; }
  bool IsPipeline() const override { return true; }

  template <typename T, typename... Args>
  T& AddPass(Args&&... args) {
    CheckNotFrozen();
    auto pass = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }
  // A nested sub-pipeline built elsewhere (XLA:GPU's sub-pipelines).
  HloPassPipeline& AddPipeline(std::unique_ptr<HloPassPipeline> pipeline) {
    CheckNotFrozen();
    HloPassPipeline& ref = *pipeline;
    passes_.push_back(std::move(pipeline));
    return ref;
  }
  // Invariant checkers run after every pass that changed the module and must
  // not change it themselves (e.g. a verifier pass).
  template <typename T, typename... Args>
  T& AddInvariantChecker(Args&&... args) {
    CheckNotFrozen();
    auto pass = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *pass;
    invariant_checkers_.push_back(std::move(pass));
    return ref;
  }
  // Observers of the outermost pipeline see every leaf run, nested included.
  void AddObserver(PassObserver* observer) { observers_.push_back(observer); }

  // Replaces every leaf pass (nested pipelines and fixed points included)
  // for which `make` returns a pass; returns how many were replaced. Only
  // before the pipeline is frozen (--pass-option rebuilds passes this way).
  using LeafFactory = std::function<std::unique_ptr<HloPassInterface>(const HloPassInterface& leaf)>;
  int64_t ReplaceLeaves(const LeafFactory& make);
  // Removes every pass or nested pipeline for which `remove` is true
  // (recursively; a fixed point whose inner pass is removed goes with it);
  // returns how many were removed. Only before the pipeline is frozen.
  int64_t RemovePasses(const std::function<bool(const HloPassInterface&)>& remove);

  // Every leaf occurrence with its id; freezes the pipeline.
  const std::vector<PassOccurrence>& Occurrences();
  const std::vector<std::unique_ptr<HloPassInterface>>& passes() const { return passes_; }
  // What instrumentation cost in this pipeline's last top-level run.
  const PipelineRunStats& last_run_stats() const { return last_run_stats_; }

  void EnumerateOccurrences(const std::string& path, bool in_fixed_point,
                            std::vector<PassOccurrence>& out) override;

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  friend class HloPassFixBase;
  void CheckNotFrozen() const;
  void Freeze();
  static absl::StatusOr<bool> RunChild(HloPassInterface& pass, HloModule& module,
                                       PassRunContext& context,
                                       const std::vector<std::unique_ptr<HloPassInterface>>& checkers);
  static absl::StatusOr<bool> RunLeaf(HloPassInterface& pass, HloModule& module,
                                      PassRunContext& context,
                                      const std::vector<std::unique_ptr<HloPassInterface>>& checkers);

  std::string name_;
  PipelineOptions options_;
  std::vector<std::unique_ptr<HloPassInterface>> passes_;
  std::vector<std::unique_ptr<HloPassInterface>> invariant_checkers_;
  std::vector<PassObserver*> observers_;
  std::vector<PassOccurrence> occurrences_;
  bool frozen_ = false;
  PipelineRunStats last_run_stats_;
};

class HloPassFixBase : public HloPassInterface {
 public:
  static constexpr int64_t kDefaultIterationLimit = 25;
  explicit HloPassFixBase(std::unique_ptr<HloPassInterface> inner,
                          int64_t iteration_limit = kDefaultIterationLimit)
      : inner_(std::move(inner)), iteration_limit_(iteration_limit) {}
  std::string_view name() const override { return inner_->name(); }
  bool IsPipeline() const override { return true; }
  HloPassInterface& inner() { return *inner_; }
  std::unique_ptr<HloPassInterface>& mutable_inner() { return inner_; }
  void EnumerateOccurrences(const std::string& path, bool in_fixed_point,
                            std::vector<PassOccurrence>& out) override;

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  std::unique_ptr<HloPassInterface> inner_;
  int64_t iteration_limit_;
};

// HloPassFix<AlgebraicSimplifier>(options...) or HloPassFix<HloPassPipeline>("simplification").
template <typename T>
class HloPassFix : public HloPassFixBase {
 public:
  template <typename... Args>
  explicit HloPassFix(Args&&... args)
      : HloPassFixBase(std::make_unique<T>(std::forward<Args>(args)...)) {}
  T& pass() { return static_cast<T&>(inner()); }
};

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_HLO_PASS_PIPELINE_H_
