// Ablation sweeps as Slurm job arrays, on the local runner's code: the
// submitter splits the plan into tasks with SplitIntoBlocks (as the local
// runner splits its blocks), each array task is the runner (runner.h) on its
// share of the plan as one block with its own baseline, and the merge feeds
// every task's records to the same report as a local sweep.
//
// The shared directory (every node sees it):
//   input.hlo, manifest.json  as a local sweep (PrepareAblationDirectory)
//   plan.json                 the variants, which variants each task runs, the
//                             run settings and a plan id (a hash of all three)
//   ablate.sbatch             the job array: task K runs
//                             `passlab ablate --run-task K --out DIR`
//   merge.sbatch              `passlab ablate --merge DIR`, submitted with
//                             --dependency=afterany on the array
//   slurm.json                every submission: array job, tasks, merge job
//   results/task-K.jsonl      task K's records (each block appended with one
//                             write and one fsync; every record carries the
//                             task, the plan id and the node)
// A task is complete when every variant it owns has a record; the merge
// lists the others (failed: some records or a baseline, missing: nothing),
// and --resubmit-missing submits just those, so finished tasks never rerun.
#ifndef PASSLAB_ANALYSIS_ABLATION_SLURM_H_
#define PASSLAB_ANALYSIS_ABLATION_SLURM_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/ablation/runner.h"
#include "nlohmann/json.hpp"

namespace passlab {

struct SlurmOptions {
  std::string partition;  // empty: the cluster's default
  std::string gres;       // "gpu:1"
  std::string time;       // per task, Slurm's syntax ("30", "1:00:00")
  int array_parallelism = 0;  // tasks running at once; 0: no limit
  std::string passlab_exe;    // the passlab binary the jobs run (on a shared file system)
  std::vector<std::string> merge_args;  // report flags of the merge (--metric wall ...)
};

// Writes input.hlo, manifest.json, plan.json (the variants of `sweep.plan`
// in tasks of at most `sweep.block_size` variants; the required variants,
// which are recorded and never run, go to task 0), ablate.sbatch and
// merge.sbatch into `sweep.out_dir`. A directory that holds another plan is
// refused; the same plan again is fine (a resubmission).
absl::Status WriteSlurmSweep(const AblationOptions& sweep, const SlurmOptions& slurm);

struct SlurmSubmission {
  std::string array_job;
  std::string merge_job;
  std::vector<int> tasks;
};

// Submits ablate.sbatch (only `tasks` when not empty; `array_parallelism`
// > 0 overrides the script's limit) and merge.sbatch after it with `sbatch`,
// and records the submission in slurm.json. Errors quote sbatch.
absl::StatusOr<SlurmSubmission> SubmitSlurmSweep(const std::string& out_dir, const std::vector<int>& tasks,
                                                 int array_parallelism);

// The array task's side: runs task `task` of <out_dir>/plan.json.
absl::Status RunSlurmTask(const std::string& out_dir, int task, const std::string& worker_exe, bool progress);

struct SlurmTaskState {
  int task = 0;
  std::vector<std::string> variants;  // the variants it owns
  int done = 0;                       // of them, with a record
  int baselines = 0;                  // blocks it recorded (one per attempt that got that far)
  std::string node;                   // where its last baseline ran
  nlohmann::json machine;             // that node's CPU, GPU and driver
  bool complete() const { return done == static_cast<int>(variants.size()); }
  // "done", "failed" (some records, not all) or "missing" (none).
  std::string state() const;
};

struct SlurmSweepState {
  std::string out_dir;
  std::string plan_id;
  AblationManifest manifest;   // manifest.json
  nlohmann::json submissions;  // slurm.json's submissions
  std::vector<SlurmTaskState> tasks;
  std::vector<AblationRecord> records;  // every task's, in task order
  std::vector<int> Incomplete() const;
};

// Reads plan.json and every task's results file. A record of another plan
// (or another task) is an error naming the file and line: the merge never
// mixes sweeps.
absl::StatusOr<SlurmSweepState> ReadSlurmSweep(const std::string& out_dir);

// manifest.json plus the executor and, per task, its node, machine and
// progress (the caller's part, AblationManifest::extra): the manifest of the
// merged report.
AblationManifest MergedManifest(const SlurmSweepState& state);

// Progress per task from the results files, then what `squeue` and `sacct`
// say about the submitted jobs when they are on PATH and `query_slurm`.
std::string RenderSlurmStatus(const SlurmSweepState& state, bool query_slurm);

// The incomplete tasks that are not pending or running in any submitted job
// array (per `squeue`, when it is on PATH): what --resubmit-missing submits.
std::vector<int> TasksToResubmit(const SlurmSweepState& state);

// Whether `program` is an executable on PATH.
bool OnPath(const std::string& program);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_SLURM_H_
