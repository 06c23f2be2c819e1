// The autotuning settings of one compile on the calling thread: the cache
// the algorithm pickers read and fill, and where they time (AlgorithmTimer).
// A backend::Session (core/backend/session.h) carries both; its compiler
// installs them with this scope for the length of a pipeline run, because
// the pickers are built by the pass registry from option values, through
// which no object can travel. Scopes nest; without one, the process-wide
// defaults apply (AutotuneCache::Global(), SetAlgorithmTimer).
#ifndef PASSLAB_PASSES_AUTOTUNE_AUTOTUNE_SCOPE_H_
#define PASSLAB_PASSES_AUTOTUNE_AUTOTUNE_SCOPE_H_

#include <optional>

#include "passes/autotune/autotune_cache.h"
#include "passes/autotune/library_call_autotuner.h"

namespace passlab {

class ScopedAutotuneSettings {
 public:
  // Both must outlive the scope. `timer` empty: time on the host CPU.
  ScopedAutotuneSettings(AutotuneCache& cache, const std::optional<AlgorithmTimer>& timer);
  ~ScopedAutotuneSettings();
  ScopedAutotuneSettings(const ScopedAutotuneSettings&) = delete;
  ScopedAutotuneSettings& operator=(const ScopedAutotuneSettings&) = delete;

 private:
  ScopedAutotuneSettings* outer_;
  AutotuneCache& cache_;
  const std::optional<AlgorithmTimer>& timer_;
  friend AutotuneCache& CurrentAutotuneCache();
  friend const std::optional<AlgorithmTimer>& CurrentAlgorithmTimer();
};

// The innermost scope's cache on this thread, else AutotuneCache::Global().
// (CurrentAlgorithmTimer, library_call_autotuner.h, answers the same way.)
AutotuneCache& CurrentAutotuneCache();

}  // namespace passlab

#endif  // PASSLAB_PASSES_AUTOTUNE_AUTOTUNE_SCOPE_H_
