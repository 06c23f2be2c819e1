// The run report: what `passlab run --format json` prints about one program
// compiled and timed (tools/passlab/run_cmd.cc fills it). One to_json /
// from_json pair (nlohmann's adl_serializer finds them) and a schema
// version, as the ablation documents (analysis/ablation/records.h).
//
// Versions. 1: the reports printed before the version field existed (no
// "schema_version" key). 2: the same keys plus "schema_version". Reading
// accepts both; unknown keys are kept in `extra`; a missing required key or
// a known key of the wrong type is an error naming the key.
#ifndef PASSLAB_ANALYSIS_RUN_REPORT_H_
#define PASSLAB_ANALYSIS_RUN_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace passlab {

inline constexpr int kRunReportSchemaVersion = 2;

// One row of the kernel table (core/runtime/kernel_summary.h
// KernelSummaryRow, the kind by name).
struct RunReportKernel {
  std::string name;
  std::string computation;
  std::string kind;
  std::string detail;
  int64_t calls = 0;
  int64_t total_ns = 0;
  int64_t median_ns = 0;
  double share = 0;
  int64_t bytes = 0;
  int64_t flops = 0;
  int64_t estimate_ns = -1;  // -1: no cost model estimate
};

// The output check against the evaluator (--check) or expected files (--expect).
struct RunReportCheck {
  bool ok = false;
  std::optional<std::string> message;
  std::string verdict;
};

struct RunReport {
  int schema_version = kRunReportSchemaVersion;
  // Required.
  std::string device;  // "cpu" or "cuda"
  std::string pipeline;
  int64_t repeats = 0;
  double optimize_ms = 0;
  double compile_ms = 0;
  double kernel_ms_median = 0;
  double wall_ms_median = 0;
  std::vector<double> kernel_ms;  // per timed step
  std::vector<double> wall_ms;
  int64_t arena_bytes = 0;
  std::vector<RunReportKernel> kernels;
  std::string inputs;  // where the arguments came from
  // CUDA only.
  std::optional<std::string> device_description;
  std::optional<std::vector<double>> kernel_envelope_ms;
  std::optional<std::vector<double>> traced_wall_ms;
  std::optional<std::vector<std::string>> host_fallbacks;
  std::optional<std::string> command_buffer;      // CudaExecutable::CommandBufferStatus
  std::optional<int64_t> tf32_library_calls;      // CudaExecutable::Tf32LibraryCalls
  // CPU only.
  std::optional<int64_t> peak_bytes;
  std::optional<int64_t> kernel_cache_hits;
  std::optional<int64_t> kernel_cache_misses;
  // With --kernel-cache.
  std::optional<std::string> kernel_cache_dir;
  std::optional<int64_t> persistent_cache_hits;
  std::optional<int64_t> persistent_cache_misses;
  std::optional<std::string> cost_model;
  std::optional<RunReportCheck> check;
  std::optional<RunReportCheck> expect;
  nlohmann::json extra = nlohmann::json::object();  // unknown keys, kept
};

void to_json(nlohmann::json& j, const RunReportKernel& k);
void from_json(const nlohmann::json& j, RunReportKernel& k);
void to_json(nlohmann::json& j, const RunReportCheck& c);
void from_json(const nlohmann::json& j, RunReportCheck& c);
void to_json(nlohmann::json& j, const RunReport& r);
void from_json(const nlohmann::json& j, RunReport& r);

// `where` (a file name) prefixes the error.
absl::StatusOr<RunReport> ParseRunReport(const nlohmann::json& j, const std::string& where);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_RUN_REPORT_H_
