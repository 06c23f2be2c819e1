// The environment a sweep ran in, recorded in its manifest ("environment")
// so that `passlab ablate --reproduce DIR` can say what differs now: this
// build (git commit, dirty tree, build type), the environment variables that
// change timings, library versions (LLVM, oneDNN, OpenBLAS, CUDA driver and
// toolkit, cuDNN, cuBLAS), the date, OS, kernel, CPU and its frequency
// governor, GPU clocks and the hash of the sweep's autotune cache. A field
// that cannot be read says "unknown"; a library or device this build or
// machine lacks says "none".
#ifndef PASSLAB_ANALYSIS_ABLATION_ENVIRONMENT_H_
#define PASSLAB_ANALYSIS_ABLATION_ENVIRONMENT_H_

#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/ablation/records.h"
#include "nlohmann/json.hpp"

namespace passlab {

// Where the collector reads the machine; tests substitute their own.
struct EnvironmentReaders {
  // A file's text; nullopt when it cannot be read.
  std::function<std::optional<std::string>(const std::string& path)> read_file;
  // The process environment as "NAME=VALUE" entries.
  std::function<std::vector<std::string>()> variables;
  // A shell command's standard output; nullopt when it fails or is missing.
  std::function<std::optional<std::string>(const std::string& command)> run;
  // The kernel release (uname -r); nullopt when unknown.
  std::function<std::optional<std::string>()> kernel;
  std::function<std::time_t()> now;
};

// This process's files, environment, nvidia-smi, uname and clock.
EnvironmentReaders SystemEnvironmentReaders();

// The environment variables recorded: these always (value or "unset"), and
// every PASSLAB_* that is set.
const std::vector<std::string>& RecordedEnvironmentVariables();

// The "environment" object of a sweep in `sweep_dir` (its autotune.json is
// hashed when it exists; "none" before). Keys: date, build {git_commit,
// git_dirty, build_type}, variables {...}, versions {llvm, onednn, openblas,
// cuda_driver, cuda_toolkit, cudnn, cublas}, os, kernel, cpu, cpu_governor,
// gpu_clocks, autotune_cache_xxh64, cwd.
nlohmann::json CollectEnvironment(const std::string& sweep_dir,
                                  const EnvironmentReaders& readers = SystemEnvironmentReaders());

// Rewrites <sweep_dir>/manifest.json's environment.autotune_cache_xxh64 with
// the hash of the autotune cache the sweep left (the manifest is written
// before the sweep runs). No manifest: nothing to do.
absl::Status RecordAutotuneCacheHash(const std::string& sweep_dir);

// One leaf field of a JSON object, by dotted path ("versions.cudnn") with its
// value as text (strings bare, arrays of scalars joined with ", "); the
// reports' Manifest section shows nested objects this way, a row a field.
std::vector<std::pair<std::string, std::string>> FlattenJsonFields(const std::string& prefix,
                                                                   const nlohmann::json& value);
std::vector<std::pair<std::string, std::string>> FlattenJsonFields(const std::string& prefix,
                                                                   const nlohmann::ordered_json& value);

struct EnvironmentDifference {
  std::string field;     // "environment.versions.cudnn", "machine.cores"
  std::string recorded;  // "–" when the recorded manifest lacks the field
  std::string now;
};

// What differs between a recorded manifest's machine and environment and
// `now` (an object with the same "machine" and "environment" keys), field by
// field in path order. The date, the autotune cache hash and the working
// directory are left out (the first two always differ).
std::vector<EnvironmentDifference> DiffEnvironments(const nlohmann::json& recorded, const nlohmann::json& now);

// The differences as text: the recorded and current build first ("build:
// recorded abc123 (dirty), this build def456 (clean)"), then one line per
// other differing field, or "same as recorded".
std::string RenderEnvironmentDifferences(const nlohmann::json& recorded, const nlohmann::json& now);

// The arguments that rerun a sweep (`passlab ablate --reproduce`): the
// manifest's recorded command line (its "argv"; older manifests: "command"
// split at spaces) without the program name, its --out replaced by `out`
// (added when absent). Error: a manifest with no recorded command.
absl::StatusOr<std::vector<std::string>> ReproductionArguments(const AblationManifest& manifest,
                                                                const std::string& out);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_ENVIRONMENT_H_
