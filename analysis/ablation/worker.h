// The ablation worker: one pipeline variant in its own process. It optimizes
// the sweep's input with the variant's pass filter (verifying after every
// pass that changed the module), compiles it for its device (the CPU backend,
// or CUDA: kernels from the GPU code generator, timed by CUPTI), checks one
// run's outputs against the reference, and then serves timing requests from
// the runner until told to quit, so the runner can interleave the variants'
// repetitions. A crash, hang or failed pass therefore ends one variant, not
// the sweep.
//
// Protocol (one JSON object per line on `fd_out`, commands on `fd_in`):
//   worker -> {"status":"ok"|"compile-error"|"verifier-failure", ...}   once, when ready or failed
//   (with fingerprint_only: {"status":"ok","program_xxh64":"...","instructions":N,"optimize_ms":T}, then exit)
//   "warmup N" -> {"ok":true}
//   "run N"    -> {"kernel_ns":[...],"kernel_copy_ns":[...],"wall_ns":[...],"kernel_count":K,"bytes":B,
//                  "kernel_steps_ns":{"fusion.1":[...],...},
//                  "kernel_cpu_ns":[...],"kernel_steps_cpu_ns":{...},     (CPU backend)
//                  "control":{ the same, and "control_first":[...]}}
//                  (with `control`; whether the control ran first). Per
//                  step; the kernel_steps rows per kernel name (records.h).
//   "kernels"  -> {"kernels":[{"name","kind","detail","calls","ns"}...]}   per-step medians of the timed runs
//   "trace P"  -> {"ok":true}   the last timed run as Chrome trace JSON in file P
//   "quit"     -> {"peak_rss_bytes":N}, then exit 0
// wall_ns is a step's host time. On CUDA it comes from an untraced run
// before each traced one (CUPTI's per-operation work would otherwise be in
// it); kernel_ns and the records come from the traced run.
// Progress lines ("passlab-worker: pass algsimp (@8)") go to stderr, which the
// runner keeps as the variant's log and reads to name the pass a crash hit.
#ifndef PASSLAB_ANALYSIS_ABLATION_WORKER_H_
#define PASSLAB_ANALYSIS_ABLATION_WORKER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/eval/output_check.h"
#include "core/ir/literal.h"

namespace passlab {

struct AblationWorkerOptions {
  std::string input;  // HLO text file
  std::string pipeline = "gpu";
  std::vector<std::string> pass_options;  // PASS.OPTION=VALUE, for the variant and the control
  std::vector<std::string> removed_passes;  // out of the pipeline (--xla_disable_hlo_passes)
  std::string disable;
  std::string enable_only;
  std::string device = "cpu";  // or "cuda"
  int threads = 1;  // kernel threads
  uint64_t seed = 1;  // of the random inputs (the same in every variant)
  std::string args_dir;  // real arguments instead (core/eval/arguments.h)
  // Expected outputs (ReadReference) to check one run against; empty: none.
  std::string reference_dir;
  double tolerance = 1e-3;  // absolute and relative
  // Instead of serving timings: write the reference into reference_dir and
  // exit. "evaluator" (the unoptimized input on the evaluator) or "compiled"
  // (this variant compiled and run).
  std::string write_reference;
  // Attribution: the unified IR diff of every run of these passes that
  // changed the module, one file per pass in diff_dir ("<pass>.diff").
  std::string diff_dir;
  std::vector<std::string> diff_passes;
  // The algorithm pickers' cache file, shared by the sweep's workers so
  // every variant gets the same library-call algorithms (unless it
  // disables a picker): loaded before the pipeline runs, saved (merged)
  // after. Empty: this process's cache only.
  std::string autotune_cache;
  // The persistent compiled-kernel cache directory the sweep's workers share
  // (core/codegen/persistent_kernel_cache.h); empty: none.
  std::string kernel_cache;
  // Optimize only and reply {"status":"ok","program_xxh64":...} (the
  // optimized module's ModuleFingerprint, as 16 hex digits) instead of
  // compiling and serving timings: the runner's screen for variants whose
  // program is the baseline's (runner.h AblationOptions::skip_identical).
  bool fingerprint_only = false;
  // When the variant fails to optimize or compile: the module as it was.
  std::string snapshot_path;
  int fd_in = 0;
  int fd_out = 1;
  // The variant's name (logs and fault injection).
  std::string variant;
  // Also compile the unfiltered pipeline's program (the control) in this
  // process, and time it next to the variant in every repetition, in
  // alternating order. The variant/control ratio of each repetition is then
  // free of what differs between processes (memory placement, the core, a
  // mid-run slowdown of the whole process), which dominates the noise of a
  // comparison across processes. Kernels the two share are compiled once
  // (the kernel cache), so the control costs little compile time.
  bool control = false;
  // Placement randomization (0: off, every step on the same placement). A
  // seeded generator draws, for every step of the variant and of the
  // control independently, the entry arena's offset: a multiple of 64 bytes
  // below kMaxArenaOffsetBytes (cache sets and pages). A fixed placement
  // gives a program a bias of its own (up to a few percent on a ResNet step
  // between programs that are identical); drawn anew per step it averages
  // out over the repetitions, equally for variant and control.
  uint64_t placement_seed = 0;
  // Compile (and lay out in memory) the control before the variant rather
  // than after it; the runner draws it per worker.
  bool control_compiled_first = false;
  // Test hook (`passlab ablate --test-inject-delay`): after every step of the
  // variant, spin for this fraction of the step's kernel time and record the
  // spin as a runtime routine ("injected-delay"): a variant with a known
  // slowdown, to check that sweeps detect it. 0: off.
  double inject_delay = 0;
};

inline constexpr int64_t kMaxArenaOffsetBytes = 64 * 1024;

// Fault injection, to test the runner's handling of broken variants: the
// environment variable PASSLAB_ABLATE_FAULT holds ';'-separated
// "crash:VARIANT" (SIGSEGV), "hang:VARIANT" (never finishes) or
// "fail:VARIANT" (the first pass fails) terms; the worker of that variant
// acts them out when its first pass starts; "vanish:VARIANT" kills it with
// SIGKILL right after it reported ready (as the OOM killer would).
inline constexpr const char* kAblateFaultEnv = "PASSLAB_ABLATE_FAULT";

// Runs the worker; returns the process exit code.
int RunAblationWorker(const AblationWorkerOptions& options);

// The reference outputs: "shapes.txt" (one shape per leaf, with layout) and
// "leaf_<i>.bin" (raw bytes) in `dir`.
absl::Status WriteReference(const Literal& result, const std::string& dir);
absl::StatusOr<std::vector<Literal>> ReadReference(const std::string& dir);
// The verdict on `actual` against the reference (core/eval/output_check.h:
// element by element within `tolerance`, or within 1% in norm).
OutputCheck CompareWithReference(const std::vector<Literal>& reference, const Literal& actual, double tolerance);

// This process's private resident memory now (/proc/self/status RssAnon:
// what another worker process would add; the binary's code and libraries
// are shared), in bytes; 0 where unknown.
int64_t PrivateResidentBytes();

// Peak resident set of this process (getrusage), in bytes.
int64_t PeakRssBytes();

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_WORKER_H_
