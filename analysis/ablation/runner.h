// The ablation runner: runs a sweep plan (plan.h), each variant in its own
// worker process (worker.h), and appends one record per finished variant to
// <out>/results.jsonl (fsync'd), so a rerun with the same --out skips what
// is finished and kill -9 loses nothing finished.
//
// Timing: variants run in blocks of `block_size`, each block with its own
// baseline. Every variant (and baseline) has `processes` worker processes.
// Within a block all workers compile first (`jobs` at a time), then every
// repetition visits each variant once (its processes in turn, two
// repetitions each), in an order that rotates per repetition, so machine
// drift hits all variants alike; timing runs never overlap. Correctness: each variant's outputs are checked once
// against the reference (the evaluator on the unoptimized input, or the
// baseline's outputs for models too big for the evaluator).
//
// Files in <out>: input.hlo, plan.json, manifest.json, results.jsonl,
// autotune.json (the algorithm pickers' cache every worker shares),
// reference/, diffs/<pass>.diff (the baseline compile's IR diff of every
// pass in the plan, written by block 0's baseline), logs/<variant>.log,
// snapshots/, traces/.
//
// The same runner is a Slurm array task (slurm.h): with `task` >= 0 it runs
// its `plan` (one task's variants) as one block in a directory the
// submitter prepared, appending to its own results/task-K.jsonl.
#ifndef PASSLAB_ANALYSIS_ABLATION_RUNNER_H_
#define PASSLAB_ANALYSIS_ABLATION_RUNNER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/ablation/plan.h"
#include "analysis/ablation/records.h"
#include "nlohmann/json.hpp"

namespace passlab {

struct AblationOptions {
  std::string out_dir;
  std::string input_text;  // the module to sweep, as HLO text
  std::string pipeline = "gpu";
  // --pass-option settings (PASS.OPTION=VALUE) every variant and the
  // baseline run with; recorded in the manifest.
  std::vector<std::string> pass_options;
  // Passes and sub-pipelines taken out of the pipeline (XLA's
  // --xla_disable_hlo_passes): no variant runs them; in the manifest.
  std::vector<std::string> removed_passes;
  std::vector<AblationVariant> plan;
  // After the plan: every pair among the `pairs_top_k` passes whose
  // disable-one variants slowed down most (interactions).
  int pairs_top_k = 0;
  int repeats = 10;
  int warmup = 2;
  double timeout_s = 600;  // per worker step: compile+check, warm-up, one repetition
  int jobs = 1;            // workers compiling at once
  int block_size = 8;      // variants per block (each worker holds a compiled program)
  int threads = 1;         // kernel threads per worker
  // Worker processes per variant (and per baseline), taking turns two
  // repetitions at a time: how one process happened to be laid out in
  // memory then varies within the variant's sample instead of biasing it.
  int processes = 2;
  // Each worker draws its arena's offset anew for every step, and whether
  // it compiles the control before or after the variant, from a seed of its
  // own (worker.h: placement_seed); false: the fixed placement of old.
  bool randomize_placement = true;
  // Test hook (--test-inject-delay NAME=PCT): the variant named NAME, or
  // every variant about pass NAME, spins for this fraction of each step's
  // kernel time (worker.h: inject_delay).
  std::vector<std::pair<std::string, double>> inject_delays;
  // Each variant's worker also times the unfiltered pipeline's program, in
  // the same process, next to the variant in every repetition (worker.h:
  // `control`); the report then compares each variant with its own control.
  bool control = true;
  // Adaptive repetitions (with `control`): after `repeats`, a variant whose
  // paired ratio's 95% CI half-width is still above `target_ci` (a fraction:
  // 0.02 = ±2%) gets more repetitions, round-robin with the others still
  // above it, until it is within the target or has `max_repeats`. 0: off.
  double target_ci = 0;
  int max_repeats = 0;
  // Sequential testing (with `control`): after `repeats`, a variant whose
  // verdict is still open (report.h DecideInProcess: its 95% CI straddles
  // 1 ± `sequential_band`) gets more repetitions, round-robin with the
  // other open ones, until it is decided or has `max_repeats`; decided
  // variants stop. Combined with `target_ci`, a variant also goes on while
  // its CI is wider than that.
  bool sequential = false;
  double sequential_band = 0.01;
  // Before timing, a screen optimizes the baseline and every variant (no
  // compile, no run) and compares the optimized modules' fingerprints
  // (core/pass/module_fingerprint.h): a variant whose module is the
  // baseline's compiles to the baseline's program, so its effect is exactly
  // none; it is recorded untimed with `identical_program` (the report's
  // outcome "identical") and only the others are timed. On a ResNet most
  // passes change nothing, so most of a disable-one sweep's time goes. A/A
  // copies and variants slowed down on purpose are always timed.
  bool skip_identical = true;
  std::string device = "cpu";  // where variants run: "cpu" or "cuda"
  uint64_t seed = 1;
  std::string args_dir;  // real arguments (.npy by parameter number) instead of seeded random ones
  std::string reference = "evaluator";  // "evaluator", "baseline" or "none"
  double tolerance = 1e-3;
  std::vector<std::string> trace_variants;  // Chrome traces of these (the baseline always)
  std::string worker_exe;  // the passlab binary, run as `passlab ablate-worker`
  // The persistent compiled-kernel cache every worker shares (worker.h:
  // kernel_cache); empty: none. Hits and misses per record, totals in the
  // manifest's "kernel_cache".
  std::string kernel_cache_dir;
  nlohmann::json manifest;  // the caller's part (command, model, ...); the runner adds the rest
  bool progress = true;     // progress bar with ETA on stderr
  // Array task `task` of `tasks` (-1: a local sweep). A task's blocks are
  // numbered task + tasks * attempt, so block numbers stay unique across
  // tasks and reruns and every variant is compared with the baseline of its
  // own process, on its own node.
  int task = -1;
  int tasks = 1;
  std::string results_file = "results.jsonl";  // relative to out_dir
  // An array task's records also carry `task`, the plan's id, the node and
  // the Slurm job ("ARRAY_TASK"; empty: none) (records.h).
  std::string plan_id;
  std::string node;
  std::string slurm_job;
};

// Splits `count` variants into blocks of equal size, at most `block_size`
// each (so no block times a lone variant): [first, end) index ranges. The
// local runner's blocks and the Slurm array's tasks both come from here.
std::vector<std::pair<size_t, size_t>> SplitIntoBlocks(size_t count, int block_size);

// Writes <out>/input.hlo and <out>/manifest.json (the caller's manifest plus
// the run settings and this machine), refusing a directory that holds a
// sweep of another module or pipeline.
absl::Status PrepareAblationDirectory(const AblationOptions& options);

// Runs (or resumes) the sweep. Failed variants are records, not errors; an
// error means the sweep itself could not run (bad --out, the baseline fails).
absl::Status RunAblation(const AblationOptions& options);

// Adds the records' persistent kernel-cache hits and misses (and the hit
// rate) to <out>/manifest.json's "kernel_cache" (when the sweep used one).
absl::Status RecordKernelCacheTotals(const std::string& out_dir);

// The records of <out>/results.jsonl (a torn last line, from a kill during
// a write, is ignored).
absl::StatusOr<std::vector<AblationRecord>> ReadAblationRecords(const std::string& out_dir);
// The records of one results file (missing: none); a line that is JSON but
// no valid record is an error naming the file, line and key.
absl::StatusOr<std::vector<AblationRecord>> ReadAblationRecordsFile(const std::string& path);

// Links a disable-one (or -occurrence) record to the IR diff of its pass in
// the baseline compile, diffs/<pass>.diff, when block 0 wrote one (the pass
// changed the module). Slurm tasks may finish before block 0 does, so the
// merge links their records too.
void LinkIrDiff(AblationRecord& record, const std::string& out_dir);

// Writes `text` to `path` through a temporary file and a rename, so readers
// see the old or the new file, never a part.
absl::Status WriteFileAtomically(const std::string& path, const std::string& text);

// Host (Slurm's node name inside a job), CPU model, cores, memory, GPU model
// and driver (if any) of this machine.
nlohmann::json DescribeMachine();

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_RUNNER_H_
