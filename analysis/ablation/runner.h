// The ablation runner: runs a sweep plan (plan.h), each variant in its own
// worker process (worker.h), and appends one record per finished variant to
// <out>/results.jsonl (fsync'd), so a rerun with the same --out skips what
// is finished and kill -9 loses nothing finished.
//
// Timing: variants run in blocks of `block_size`, each block with its own
// baseline worker. Within a block all workers compile first (`jobs` at a
// time), then every repetition visits each worker once, in an order that
// rotates per repetition, so machine drift hits all variants alike; timing
// runs never overlap. Correctness: each variant's outputs are checked once
// against the reference (the evaluator on the unoptimized input, or the
// baseline's outputs for models too big for the evaluator).
//
// Files in <out>: input.hlo, plan.json, manifest.json, results.jsonl,
// autotune.json (the algorithm pickers' cache every worker shares),
// reference/, diffs/<pass>.diff (the baseline compile's IR diff of every
// pass in the plan), logs/<variant>.log, snapshots/, traces/.
#ifndef PASSLAB_ANALYSIS_ABLATION_RUNNER_H_
#define PASSLAB_ANALYSIS_ABLATION_RUNNER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/ablation/plan.h"
#include "nlohmann/json.hpp"

namespace passlab {

struct AblationOptions {
  std::string out_dir;
  std::string input_text;  // the module to sweep, as HLO text
  std::string pipeline = "gpu";
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
  uint64_t seed = 1;
  std::string reference = "evaluator";  // "evaluator", "baseline" or "none"
  double tolerance = 1e-3;
  std::vector<std::string> trace_variants;  // Chrome traces of these (the baseline always)
  std::string worker_exe;  // the passlab binary, run as `passlab ablate-worker`
  nlohmann::json manifest;  // the caller's part (command, model, ...); the runner adds the rest
  bool progress = true;     // progress bar with ETA on stderr
};

// Runs (or resumes) the sweep. Failed variants are records, not errors; an
// error means the sweep itself could not run (bad --out, the baseline fails).
absl::Status RunAblation(const AblationOptions& options);

// The records of <out>/results.jsonl (a torn last line, from a kill during
// a write, is ignored).
absl::StatusOr<std::vector<nlohmann::json>> ReadAblationRecords(const std::string& out_dir);

// CPU model, cores, memory, GPU (if any) of this machine.
nlohmann::json DescribeMachine();

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_RUNNER_H_
