// The shared half of GpuConvAlgorithmPicker and GemmAlgorithmPicker: times a
// library call's algorithms on the CPU backend (core/runtime's autotuning
// API) at one of XLA's autotune levels (seed 003):
//   0  off: nothing is tuned
//   1  time each algorithm on zero-initialised buffers
//   2  ... on buffers initialised with random numbers
//   3  ... and re-randomise the outputs before each algorithm
//   4  ... and check each algorithm's output against the reference
//      algorithm (the first that ran) and its buffers' red zones (guard
//      bytes around every buffer must be intact after each run)
// and picks the fastest algorithm that ran (and passed the checks), honouring
// a deny list and a cache.
#ifndef PASSLAB_PASSES_AUTOTUNE_LIBRARY_CALL_AUTOTUNER_H_
#define PASSLAB_PASSES_AUTOTUNE_LIBRARY_CALL_AUTOTUNER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_instruction.h"
#include "core/runtime/library_call_runner.h"
#include "passes/autotune/autotune_cache.h"

namespace passlab {

// Algorithms never to use for the calls whose AutotuneKey contains `hlo`
// (empty: every call), like XLA's algorithm deny list.
struct AlgorithmDenyEntry {
  std::string hlo;
  std::vector<int64_t> algorithms;
};

// Reads a deny list file: {"entries": [{"hlo": "...", "algorithms": [2]}]}.
absl::StatusOr<std::vector<AlgorithmDenyEntry>> LoadDenyList(const std::string& path);

// The autotuning budget on the CPU backend. Tuning a call allocates its
// operands' and results' buffers and runs every algorithm 1 + repeats times:
// a training step's multi-GB gemms took minutes and gigabytes (the MaxText
// step of XLA's benchmark set did not finish `opt --pipeline gpu` in 300 s
// and grew to 6.7 GB). A call over a per-call limit, and every call once the
// module's limits are spent, gets the heuristic choice instead: its
// backend_config is left unset, so the runtime runs its default algorithm
// (LibraryCallRunner::Create without an id), as XLA uses its default
// algorithms when autotuning is off (--xla_gpu_autotune_level=0). Such a
// choice is never timed, never cached, and counted in the pass's counters
// ("heuristic (over the per-call bytes budget)", "... per-call time ...",
// "... module ..."; "tuning bytes" and "tuning ms" say what tuning cost).
// A cache hit costs nothing and is always used. Calls timed on a device
// (AlgorithmTimer) are not budgeted. Set per pass:
// --pass-option config-assigner.max_call_bytes=N (passes/registry.cc).
struct AutotuneBudget {
  int64_t max_call_bytes = int64_t{256} << 20;  // a call's operand + result buffers
  // A call's tuning time: estimated before any run from the call's FLOPs at
  // `flops_per_second` (times the runs it needs), then measured: once over,
  // the fastest algorithm timed so far wins, else the heuristic choice.
  double max_call_seconds = 2;
  int64_t max_module_bytes = int64_t{4} << 30;  // summed over the calls tuned
  double max_module_seconds = 30;               // summed over the calls tuned
  // The estimate's rate: about what OpenBLAS reaches on a bf16 gemm (through
  // f32) on two busy cores; a call it underestimates is cut off by the
  // measured time.
  double flops_per_second = 2e10;
};

struct AutotuneOptions {
  int level = 4;  // XLA's default xla_gpu_autotune_level
  // Null: AutotuneCache::Global().
  AutotuneCache* cache = nullptr;
  // When set: loaded before the pass tunes, saved (merged) after it tuned.
  std::string cache_path;
  std::vector<AlgorithmDenyEntry> deny_list;
  std::string deny_list_path;  // entries added to deny_list when set
  int repeats = 3;             // timed runs per algorithm (after a warm-up)
  double tolerance = 1e-2;     // level 4: relative difference from the reference
  AutotuneBudget budget;
};

// What tuning one call found (for tests and counters).
struct AutotuneOutcome {
  AutotuneResult result;
  bool from_cache = false;
  std::vector<std::string> rejected;  // "winograd: denied", "direct: wrong result ...", ...
  // Not timed: the runtime's default algorithm, because of the budget
  // (`heuristic_reason` says which limit: "call bytes", "call time",
  // "module budget").
  bool heuristic = false;
  std::string heuristic_reason;
  int64_t tuned_bytes = 0;     // buffers allocated to tune the call
  double tuned_seconds = 0;    // time spent tuning it
};

// What a module's tuning has spent (PickLibraryCallAlgorithms keeps one per
// run and checks AutotuneBudget's module limits against it).
struct AutotuneSpend {
  int64_t bytes = 0;
  double seconds = 0;
};

// Where the pickers time algorithms: the CPU backend (no timer installed),
// or a device's timer (the CUDA runtime's: backend::UseDeviceAutotuning in
// core/backend/session.h), so that the algorithm
// written into a call's backend_config is one of that device's libraries',
// timed there. `device` names it ("cuda:0 (NVIDIA H100 ..., sm_90, ...)")
// and prefixes every cache key, so choices made on one device (or on the
// CPU) are never reused for another.
struct AlgorithmTimer {
  std::string device;
  // Every algorithm's timing for `call` at options.level (repeats,
  // tolerance), leaving out the `denied` algorithm ids.
  std::function<absl::StatusOr<std::vector<AlgorithmTiming>>(
      const HloInstruction& call, const AutotuneOptions& options, const std::vector<int64_t>& denied)>
      time;
};
// Process-wide; std::nullopt goes back to the CPU backend. A
// ScopedAutotuneSettings on the calling thread (autotune_scope.h: a
// backend::Session's compile) takes precedence.
void SetAlgorithmTimer(std::optional<AlgorithmTimer> timer);
const std::optional<AlgorithmTimer>& CurrentAlgorithmTimer();

// Picks an algorithm for `call` (a library call), timed where
// CurrentAlgorithmTimer says, within options.budget (the module limits
// against `spend` when given, which the call's cost is added to); an error
// when none can run.
absl::StatusOr<AutotuneOutcome> AutotuneLibraryCall(const HloInstruction& call, const AutotuneOptions& options,
                                                    AutotuneSpend* spend = nullptr);

class HloModule;
class HloPassInterface;

// Which library calls a picker tunes.
enum class LibraryCallFamily {
  kConvolutions,  // DNN convolution calls (GpuConvAlgorithmPicker)
  kGemms,         // BLAS gemm calls (GemmAlgorithmPicker)
  kAll,           // every library call (today's config-assigner)
};

// What the picker passes do: tunes every passlab-spelled library call of
// `family` whose algorithm is not set yet, and
// writes the choice into its backend_config (algo_id / selected_algorithm),
// which the runtime honours. Calls no algorithm can run are left unset (the
// runtime's default) and counted. Counters go to `pass`.
absl::StatusOr<bool> PickLibraryCallAlgorithms(HloModule& module, const AutotuneOptions& options,
                                               LibraryCallFamily family, HloPassInterface& pass);

}  // namespace passlab

#endif  // PASSLAB_PASSES_AUTOTUNE_LIBRARY_CALL_AUTOTUNER_H_
