// PassRecorder: the observer that records every pass run of a pipeline:
// wall time, module size and per-opcode instruction delta, the counters the
// pass bumped, fingerprints, and snapshots of the module text before/after
// (stored once per distinct fingerprint). Dumps, --time-passes, --stats,
// --print-changed, the GUI and ablation attribution all read its records.
#ifndef PASSLAB_CORE_PASS_PASS_RECORDER_H_
#define PASSLAB_CORE_PASS_PASS_RECORDER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/pass/pass_observer.h"

namespace passlab {

struct PassRunRecord {
  PassRunInfo info;
  enum class Outcome { kRan, kSkipped, kFailed } outcome = Outcome::kRan;
  bool changed = false;
  double wall_ms = 0;
  int64_t instructions_before = 0;
  int64_t instructions_after = 0;
  std::map<std::string, int64_t> opcode_delta;  // opcode -> after - before (non-zero only)
  PassCounters counters;
  uint64_t fingerprint_before = 0;
  uint64_t fingerprint_after = 0;
  std::string error;  // when failed
};

struct FixedPointRecord {
  std::string path;
  int64_t iterations = 0;
  bool hit_limit = false;
  bool cycled = false;
};

struct PassRecorderOptions {
  bool snapshots = true;  // keep module text per distinct fingerprint
};

class PassRecorder : public PassObserver {
 public:
  explicit PassRecorder(PassRecorderOptions options = {}) : options_(options) {}

  bool WantsModuleText() const override { return options_.snapshots; }
  absl::Status BeforePass(const PassRunInfo& info, const HloModule& module) override;
  absl::Status AfterPass(const PassRunInfo& info, const HloModule& module, bool changed,
                         uint64_t fingerprint_before, uint64_t fingerprint_after,
                         const PassCounters& counters) override;
  void PassSkipped(const PassRunInfo& info) override;
  void PassFailed(const PassRunInfo& info, const HloModule& module, const absl::Status& status) override;
  void FixedPointFinished(const std::string& path, int64_t iterations, bool hit_limit,
                          bool cycled) override;

  const std::vector<PassRunRecord>& runs() const { return runs_; }
  const std::vector<FixedPointRecord>& fixed_points() const { return fixed_points_; }
  // The module text with this fingerprint (empty if not recorded).
  const std::string& Snapshot(uint64_t fingerprint) const;
  size_t snapshot_count() const { return snapshots_.size(); }
  // Text of the module before the first run (the pipeline input).
  uint64_t initial_fingerprint() const { return initial_fingerprint_; }

  // Aggregates per pass name: runs, changed runs, total ms (sorted by time).
  struct PassTotals {
    std::string pass_name;
    int64_t runs = 0;
    int64_t changed = 0;
    double total_ms = 0;
  };
  std::vector<PassTotals> TotalsByPass() const;

 private:
  PassRecorderOptions options_;
  std::vector<PassRunRecord> runs_;
  std::vector<FixedPointRecord> fixed_points_;
  absl::flat_hash_map<uint64_t, std::shared_ptr<const ModuleText>> snapshots_;
  std::map<std::string, int64_t> opcode_counts_before_;
  bool have_counts_ = false;  // opcode_counts_before_ is the current module's
  int64_t instructions_before_ = 0;
  std::chrono::steady_clock::time_point start_;
  uint64_t initial_fingerprint_ = 0;
};

// Writes a dump directory: NNNN.<pipeline>.<pass>.{before,after}.hlo for runs
// that changed the module (file names sort by run order), and index.json with
// every run (id, pipeline, pass, iteration, changed, times, sizes, counters,
// file names), as XLA's --xla_dump_to does with passlab's extras.
absl::Status WritePassDump(const PassRecorder& recorder, const std::string& directory);

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_PASS_RECORDER_H_
