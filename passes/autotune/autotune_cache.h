// The algorithm pickers' cache: the algorithm chosen for a library call,
// keyed by the call's canonical text (AutotuneKey). One process-wide cache by
// default, as XLA's; it can be loaded from and saved to a JSON file so that
// the processes of an ablation sweep tune each call once.
#ifndef PASSLAB_PASSES_AUTOTUNE_AUTOTUNE_CACHE_H_
#define PASSLAB_PASSES_AUTOTUNE_AUTOTUNE_CACHE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace passlab {

class HloInstruction;

struct AutotuneResult {
  int64_t algorithm = -1;
  std::string algorithm_name;
  int64_t time_ns = 0;  // median run time when it was tuned
  bool operator==(const AutotuneResult&) const = default;
};

// The cache key of a library call: target, result and operand shapes
// (layouts included), window, dim_labels, feature groups and the
// backend_config with the algorithm fields cleared. Names are not part of it.
std::string AutotuneKey(const HloInstruction& call);

class AutotuneCache {
 public:
  static AutotuneCache& Global();

  std::optional<AutotuneResult> Find(const std::string& key);
  void Insert(const std::string& key, AutotuneResult result);
  size_t size() const;
  void Clear();
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

  // Adds the entries of a file written by Save (a missing file is no error).
  absl::Status Load(const std::string& path);
  // Writes every entry, merged with what the file holds now (other
  // processes may have added to it), through a temporary and a rename.
  absl::Status Save(const std::string& path);

 private:
  mutable std::mutex mu_;
  std::map<std::string, AutotuneResult> entries_;  // sorted: files are deterministic
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_AUTOTUNE_AUTOTUNE_CACHE_H_
