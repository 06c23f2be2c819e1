// The typed documents of an ablation sweep directory: one AblationRecord per
// line of results.jsonl (one variant, or one block's baseline, as the runner
// measured it) and the sweep's AblationManifest (manifest.json). Each has one
// to_json/from_json pair (found by nlohmann's adl_serializer) and a schema
// version written into every document.
//
// Versions. 1: the files written before the version field existed (no
// "schema_version" key; docs/results/*/ are such files). 2: the same keys
// plus "schema_version". Reading accepts both; a document of a newer version
// is read as far as its keys are known. Keys this code does not know (newer
// fields, a Slurm task's "task"/"plan_id", the caller's manifest part) are
// kept in `extra` and written back unchanged, so reading and writing a
// document loses nothing.
//
// Errors. A document without a required key, or with a known key of the
// wrong type, is refused with the key's name; the readers prefix the file
// and line ("results.jsonl:3: record has no 'variant'").
#ifndef PASSLAB_ANALYSIS_ABLATION_RECORDS_H_
#define PASSLAB_ANALYSIS_ABLATION_RECORDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace passlab {

// CappedKernelNs's cap: a kernel's median + this many MADs (scaled to a
// normal distribution's standard deviation) over a program's steps.
inline constexpr double kKernelCapMads = 3.0;

// The version written by this code (see the file comment).
inline constexpr int kAblationSchemaVersion = 2;

// A program's timed steps, one entry per step. An empty vector is absent
// from the JSON (the runner only writes what the worker measured).
struct AblationSamples {
  std::vector<double> kernel_ns;       // sum of the step's device kernels
  std::vector<double> kernel_copy_ns;  // kernels and copies
  std::vector<double> wall_ns;         // the step's host time
  // The CPU backend: the process CPU time of the step's kernels (their
  // records' cpu_ns), which leaves out time the host gave other processes.
  std::vector<double> kernel_cpu_ns;
  // Control samples only: whether the control ran before the variant.
  std::vector<bool> control_first;
  // Each kernel's time in each step (ns), by kernel name: the records that
  // kernel_ns sums (calls of one name in a step added up; 0 in a step
  // where it did not run). Its columns sum to kernel_ns. Absent in records
  // written before it existed.
  std::map<std::string, std::vector<double>> kernel_steps_ns;
  // The same for the kernels' process CPU time (the CPU backend; its
  // columns sum to kernel_cpu_ns).
  std::map<std::string, std::vector<double>> kernel_steps_cpu_ns;

  // The samples of a metric by its key, one per step; empty for unknown
  // keys and absent samples. "kernel_ns" is CappedKernelNs() where the
  // per-kernel step times cover every step, else the stored kernel_ns;
  // "kernel_raw_ns" is always the stored sums; "kernel_cpu_ns" is capped
  // the same way from kernel_steps_cpu_ns where it covers every step;
  // "kernel_copy_ns" and "wall_ns" are as stored.
  std::vector<double> Metric(std::string_view key) const;
  // Per step, the sum of its kernels' times with each kernel's outlying
  // steps capped at that kernel's median + kKernelCapMads scaled MADs over
  // these samples' steps (a kernel that also has steps without it is not
  // capped). A spike of one kernel in one step (an interrupt, another
  // process's burst on the shared cache) then moves the step's sum by at
  // most the cap instead of the whole spike; a kernel that is slower in every
  // step keeps all of it. Empty when kernel_steps_ns does not have one
  // entry per step for every kernel.
  std::vector<double> CappedKernelNs() const;
  std::vector<double> CappedKernelCpuNs() const;
  bool empty() const { return kernel_ns.empty() && kernel_copy_ns.empty() && wall_ns.empty() && kernel_cpu_ns.empty(); }
};

// Appends `rows` (one per kernel, `added` steps each: kernel_steps_ns's
// form) to `pooled`, which holds `before` steps per kernel: a kernel new
// here is 0 in the earlier steps, one missing here 0 in these. False, and
// nothing appended, when a row is not `added` long.
bool AppendKernelStepRows(const std::map<std::string, std::vector<double>>& rows, size_t before, size_t added,
                          std::map<std::string, std::vector<double>>& pooled);

// One row of a variant's kernel table: per-step medians of the timed runs.
struct AblationKernel {
  std::string name;
  std::optional<std::string> kind;    // "kernel", "library", ...
  std::optional<std::string> detail;  // "loop", "__dnn$convForward/cudnn#1", ...
  std::optional<int64_t> calls;       // per step
  std::optional<double> ns;           // per step
};

// One line of results.jsonl.
struct AblationRecord {
  int schema_version = kAblationSchemaVersion;
  std::string variant;  // required: the variant's name ("baseline" for a block's baseline)
  std::string kind;     // required: plan.h's kinds, or "baseline"
  std::optional<std::vector<std::string>> passes;
  std::optional<std::string> disable;
  std::optional<std::string> enable_only;
  std::optional<int64_t> block;
  // "ok", "compile-error", "verifier-failure", "crash", "timeout",
  // "required"; absent means "ok" (records of other producers).
  std::optional<std::string> status;
  // Why it failed, and where.
  std::optional<std::string> error;
  std::optional<std::string> failed_pass;
  std::optional<int64_t> signal;
  std::optional<double> timeout_s;
  std::optional<std::string> required_reason;
  // Files in the sweep directory (relative paths).
  std::optional<std::string> log;
  std::optional<std::string> snapshot;
  std::optional<std::string> trace;
  std::optional<std::string> ir_diff;
  // Compile-side figures of the first worker process.
  std::optional<double> optimize_ms;
  std::optional<double> compile_ms;
  std::optional<double> control_compile_ms;
  std::optional<double> autotune_ms;
  std::optional<bool> control_compiled_first;
  std::optional<int64_t> kernels_compiled;
  std::optional<int64_t> instructions;
  // Open-ended objects of other components, kept as JSON: the output check
  // (core/eval/output_check.h), the algorithm pickers' counts, the kernel
  // cache's counts, per-pass times, the machine (runner.h DescribeMachine).
  std::optional<nlohmann::json> check;
  std::optional<nlohmann::json> autotune;
  std::optional<nlohmann::json> kernel_cache;
  std::optional<nlohmann::json> pass_times;
  std::optional<nlohmann::json> machine;
  // Timing.
  std::optional<AblationSamples> samples;
  std::optional<AblationSamples> control_samples;
  std::optional<int64_t> kernel_count;
  std::optional<int64_t> bytes;
  std::optional<int64_t> peak_rss_bytes;
  std::optional<int64_t> processes;
  std::optional<int64_t> extra_repeats;
  std::optional<double> injected_delay;  // --test-inject-delay
  // The optimized module's fingerprint (core/pass/module_fingerprint.h, 16
  // hex digits) from the runner's screen (runner.h skip_identical), and
  // whether it is the baseline's: then the variant compiles to the
  // baseline's program, so the runner records it without timing it (no
  // samples) and the report calls it "identical" (ratio exactly 1).
  std::optional<std::string> program_xxh64;
  std::optional<bool> identical_program;
  std::optional<std::vector<AblationKernel>> kernels;
  std::optional<int64_t> time;  // when it was appended (Unix seconds)
  // A Slurm array task's records (slurm.h): which task of which plan, where.
  std::optional<int64_t> task;
  std::optional<std::string> plan_id;
  std::optional<std::string> node;
  std::optional<std::string> slurm_job;
  // Every other key, written back as read.
  nlohmann::json extra = nlohmann::json::object();

  // "ok" when the record has no status.
  std::string StatusOrOk() const { return status.value_or("ok"); }
  // Whether the output check says the outputs are wrong.
  bool CheckFailed() const;
};

// The sweep's manifest.json: the runner's settings (PrepareAblationDirectory)
// typed, the caller's part (command line, model, Slurm tasks, ...) in `extra`.
// Producers other than the runner (the XLA sweep in docs/results) write only
// some keys: every one but `pipeline` and `device` is optional.
struct AblationManifest {
  int schema_version = kAblationSchemaVersion;
  std::string pipeline;  // required
  std::string device;    // required: "cpu" or "cuda"
  std::optional<std::string> command;
  // The command line as a list (what `ablate --reproduce` re-parses).
  std::optional<std::vector<std::string>> argv;
  std::optional<std::vector<std::string>> resumed_by;
  std::optional<std::vector<std::string>> pass_options;
  std::optional<std::vector<std::string>> xla_disabled_passes;
  std::optional<std::string> input;
  std::optional<std::string> input_xxh64;
  std::optional<nlohmann::json> machine;
  std::optional<int64_t> repeats;
  std::optional<int64_t> warmup;
  std::optional<int64_t> block_size;
  std::optional<bool> control;
  std::optional<double> target_ci;
  std::optional<int64_t> max_repeats;
  std::optional<bool> sequential;
  std::optional<double> sequential_band;
  std::optional<int64_t> threads;
  std::optional<int64_t> processes;
  std::optional<bool> randomize_placement;
  // Whether variants that compile to the baseline's program were recorded
  // untimed (runner.h skip_identical).
  std::optional<bool> skip_identical;
  std::optional<std::map<std::string, double>> test_inject_delay;
  std::optional<uint64_t> seed;
  std::optional<std::string> args;
  std::optional<std::string> reference;
  std::optional<double> tolerance;
  std::optional<double> timeout_s;
  std::optional<std::string> autotune_cache;
  // {"dir"}, plus the totals RecordKernelCacheTotals adds.
  std::optional<nlohmann::json> kernel_cache;
  std::optional<nlohmann::json> environment;  // environment.h CollectEnvironment
  nlohmann::json extra = nlohmann::json::object();
};

void to_json(nlohmann::json& j, const AblationSamples& s);
void from_json(const nlohmann::json& j, AblationSamples& s);
void to_json(nlohmann::json& j, const AblationKernel& k);
void from_json(const nlohmann::json& j, AblationKernel& k);
// from_json throws nlohmann::json::other_error naming the missing or
// mistyped key; the Parse functions below turn that into a Status.
void to_json(nlohmann::json& j, const AblationRecord& r);
void from_json(const nlohmann::json& j, AblationRecord& r);
void to_json(nlohmann::json& j, const AblationManifest& m);
void from_json(const nlohmann::json& j, AblationManifest& m);

// `where` prefixes the error ("results.jsonl:3").
absl::StatusOr<AblationRecord> ParseAblationRecord(const nlohmann::json& j, const std::string& where);
absl::StatusOr<AblationManifest> ParseAblationManifest(const nlohmann::json& j, const std::string& where);

// The records of one results file (missing: none). A line that is not JSON
// (the torn last write of a killed sweep) is skipped; a JSON line that is
// not a valid record is an error naming the file, the line and the key.
absl::StatusOr<std::vector<AblationRecord>> ReadAblationRecordLines(const std::string& path);
// A sweep's manifest.json; errors name the file.
absl::StatusOr<AblationManifest> ReadAblationManifest(const std::string& path);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_RECORDS_H_
