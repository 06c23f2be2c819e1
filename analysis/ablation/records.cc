#include "analysis/ablation/records.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "analysis/json_schema.h"
#include "analysis/median.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

using Json = nlohmann::json;
using json_schema::kVersionKey;
using json_schema::NumberJson;
using json_schema::Reader;
using json_schema::Writer;

template <typename V, typename K>
void KernelFields(V& v, K& k) {
  v.Required("name", k.name);
  v.Optional("kind", k.kind);
  v.Optional("detail", k.detail);
  v.Optional("calls", k.calls);
  v.Optional("ns", k.ns);
}

template <typename V, typename R>
void RecordFields(V& v, R& r) {
  v.Required("variant", r.variant);
  v.Required("kind", r.kind);
  v.Optional("passes", r.passes);
  v.Optional("disable", r.disable);
  v.Optional("enable_only", r.enable_only);
  v.Optional("block", r.block);
  v.Optional("status", r.status);
  v.Optional("error", r.error);
  v.Optional("failed_pass", r.failed_pass);
  v.Optional("signal", r.signal);
  v.Optional("timeout_s", r.timeout_s);
  v.Optional("required_reason", r.required_reason);
  v.Optional("log", r.log);
  v.Optional("snapshot", r.snapshot);
  v.Optional("trace", r.trace);
  v.Optional("ir_diff", r.ir_diff);
  v.Optional("optimize_ms", r.optimize_ms);
  v.Optional("compile_ms", r.compile_ms);
  v.Optional("control_compile_ms", r.control_compile_ms);
  v.Optional("autotune_ms", r.autotune_ms);
  v.Optional("control_compiled_first", r.control_compiled_first);
  v.Optional("kernels_compiled", r.kernels_compiled);
  v.Optional("instructions", r.instructions);
  v.Optional("check", r.check);
  v.Optional("autotune", r.autotune);
  v.Optional("kernel_cache", r.kernel_cache);
  v.Optional("pass_times", r.pass_times);
  v.Optional("machine", r.machine);
  v.Optional("samples", r.samples);
  v.Optional("control_samples", r.control_samples);
  v.Optional("kernel_count", r.kernel_count);
  v.Optional("bytes", r.bytes);
  v.Optional("peak_rss_bytes", r.peak_rss_bytes);
  v.Optional("processes", r.processes);
  v.Optional("extra_repeats", r.extra_repeats);
  v.Optional("injected_delay", r.injected_delay);
  v.Optional("program_xxh64", r.program_xxh64);
  v.Optional("identical_program", r.identical_program);
  v.Optional("kernels", r.kernels);
  v.Optional("time", r.time);
  v.Optional("task", r.task);
  v.Optional("plan_id", r.plan_id);
  v.Optional("node", r.node);
  v.Optional("slurm_job", r.slurm_job);
}

template <typename V, typename M>
void ManifestFields(V& v, M& m) {
  v.Required("pipeline", m.pipeline);
  v.Required("device", m.device);
  v.Optional("command", m.command);
  v.Optional("argv", m.argv);
  v.Optional("resumed_by", m.resumed_by);
  v.Optional("pass_options", m.pass_options);
  v.Optional("xla_disabled_passes", m.xla_disabled_passes);
  v.Optional("input", m.input);
  v.Optional("input_xxh64", m.input_xxh64);
  v.Optional("machine", m.machine);
  v.Optional("repeats", m.repeats);
  v.Optional("warmup", m.warmup);
  v.Optional("block_size", m.block_size);
  v.Optional("control", m.control);
  v.Optional("target_ci", m.target_ci);
  v.Optional("max_repeats", m.max_repeats);
  v.Optional("sequential", m.sequential);
  v.Optional("sequential_band", m.sequential_band);
  v.Optional("threads", m.threads);
  v.Optional("processes", m.processes);
  v.Optional("randomize_placement", m.randomize_placement);
  v.Optional("skip_identical", m.skip_identical);
  v.Optional("test_inject_delay", m.test_inject_delay);
  v.Optional("seed", m.seed);
  v.Optional("args", m.args);
  v.Optional("reference", m.reference);
  v.Optional("tolerance", m.tolerance);
  v.Optional("timeout_s", m.timeout_s);
  v.Optional("autotune_cache", m.autotune_cache);
  v.Optional("kernel_cache", m.kernel_cache);
  v.Optional("environment", m.environment);
}

}  // namespace

std::vector<double> AblationSamples::Metric(std::string_view key) const {
  if (key == "kernel_ns") {
    std::vector<double> capped = CappedKernelNs();
    return capped.empty() ? kernel_ns : capped;
  }
  if (key == "kernel_cpu_ns") {
    std::vector<double> capped = CappedKernelCpuNs();
    return capped.empty() ? kernel_cpu_ns : capped;
  }
  if (key == "kernel_raw_ns") return kernel_ns;
  if (key == "kernel_copy_ns") return kernel_copy_ns;
  if (key == "wall_ns") return wall_ns;
  return {};
}

namespace {

// Per step, the sum over `rows` with each row capped as CappedKernelNs
// says; empty unless every row has `steps` entries.
std::vector<double> CappedSums(const std::map<std::string, std::vector<double>>& rows, size_t steps) {
  if (steps == 0 || rows.empty()) return {};
  std::vector<double> sums(steps, 0.0), deviations;
  for (const auto& [name, row] : rows) {
    if (row.size() != steps) return {};
    const bool every_step = std::none_of(row.begin(), row.end(), [](double x) { return x <= 0; });
    double cap = std::numeric_limits<double>::infinity();
    if (every_step) {
      const double median = Median(row);
      deviations.clear();
      for (double x : row) deviations.push_back(std::abs(x - median));
      // 1.4826: the MAD of a normal distribution is 0.6745 of its sigma.
      cap = median + kKernelCapMads * 1.4826 * Median(deviations);
    }
    for (size_t i = 0; i < steps; ++i) sums[i] += std::min(row[i], cap);
  }
  return sums;
}

}  // namespace

bool AppendKernelStepRows(const std::map<std::string, std::vector<double>>& rows, size_t before, size_t added,
                          std::map<std::string, std::vector<double>>& pooled) {
  for (const auto& [name, row] : rows) {
    if (row.size() != added) return false;
  }
  for (const auto& [name, row] : rows) {
    std::vector<double>& out = pooled[name];
    out.resize(before, 0.0);
    out.insert(out.end(), row.begin(), row.end());
  }
  for (auto& [name, row] : pooled) row.resize(before + added, 0.0);
  return true;
}

std::vector<double> AblationSamples::CappedKernelNs() const { return CappedSums(kernel_steps_ns, kernel_ns.size()); }

std::vector<double> AblationSamples::CappedKernelCpuNs() const {
  return CappedSums(kernel_steps_cpu_ns, kernel_cpu_ns.size());
}

bool AblationRecord::CheckFailed() const {
  if (!check.has_value() || !check->is_object()) return false;
  auto ok = check->find("ok");
  return ok != check->end() && ok->is_boolean() && !ok->get<bool>();
}

void to_json(Json& j, const AblationSamples& s) {
  j = Json::object();
  auto put = [&](const char* key, const std::vector<double>& values) {
    if (values.empty()) return;
    Json& out = j[key] = Json::array();
    for (double x : values) out.push_back(NumberJson(x));
  };
  put("kernel_ns", s.kernel_ns);
  put("kernel_copy_ns", s.kernel_copy_ns);
  put("wall_ns", s.wall_ns);
  put("kernel_cpu_ns", s.kernel_cpu_ns);
  if (!s.control_first.empty()) j["control_first"] = s.control_first;
  auto put_rows = [&](const char* key, const std::map<std::string, std::vector<double>>& rows) {
    if (rows.empty()) return;
    Json& out = j[key] = Json::object();
    for (const auto& [name, values] : rows) {
      Json& row = out[name] = Json::array();
      for (double x : values) row.push_back(NumberJson(x));
    }
  };
  put_rows("kernel_steps_ns", s.kernel_steps_ns);
  put_rows("kernel_steps_cpu_ns", s.kernel_steps_cpu_ns);
}

void from_json(const Json& j, AblationSamples& s) {
  json_schema::RequireObject("samples", j);
  s = AblationSamples{};
  for (const auto& [name, values] : j.items()) {
    const char* doc = "samples";
    if (name == "kernel_ns") json_schema::ReadValue(doc, name, values, s.kernel_ns);
    if (name == "kernel_copy_ns") json_schema::ReadValue(doc, name, values, s.kernel_copy_ns);
    if (name == "wall_ns") json_schema::ReadValue(doc, name, values, s.wall_ns);
    if (name == "kernel_cpu_ns") json_schema::ReadValue(doc, name, values, s.kernel_cpu_ns);
    if (name == "control_first") json_schema::ReadValue(doc, name, values, s.control_first);
    if (name == "kernel_steps_ns" || name == "kernel_steps_cpu_ns") {
      auto& rows = name == "kernel_steps_ns" ? s.kernel_steps_ns : s.kernel_steps_cpu_ns;
      json_schema::RequireObject("samples.kernel_steps_ns", values);
      for (const auto& [kernel, row] : values.items()) {
        json_schema::ReadValue(doc, StrCat(name, ".", kernel), row, rows[kernel]);
      }
    }
  }
}

void to_json(Json& j, const AblationKernel& k) {
  j = Json::object();
  Writer writer{j};
  KernelFields(writer, k);
  if (k.ns.has_value()) j["ns"] = NumberJson(*k.ns);
}

void from_json(const Json& j, AblationKernel& k) {
  json_schema::RequireObject("kernel", j);
  Reader reader{"kernel", j};
  KernelFields(reader, k);
}

void to_json(Json& j, const AblationRecord& r) {
  j = r.extra.is_object() ? r.extra : Json::object();
  Writer writer{j};
  RecordFields(writer, r);
  j[kVersionKey] = kAblationSchemaVersion;
}

void from_json(const Json& j, AblationRecord& r) {
  json_schema::RequireObject("record", j);
  r.schema_version = json_schema::ReadVersion("record", j);
  Reader reader{"record", j};
  RecordFields(reader, r);
  r.extra = json_schema::ExtraKeys<AblationRecord>(j, [](auto& v, auto& x) { RecordFields(v, x); });
}

void to_json(Json& j, const AblationManifest& m) {
  j = m.extra.is_object() ? m.extra : Json::object();
  Writer writer{j};
  ManifestFields(writer, m);
  j[kVersionKey] = kAblationSchemaVersion;
}

void from_json(const Json& j, AblationManifest& m) {
  json_schema::RequireObject("manifest", j);
  m.schema_version = json_schema::ReadVersion("manifest", j);
  Reader reader{"manifest", j};
  ManifestFields(reader, m);
  m.extra = json_schema::ExtraKeys<AblationManifest>(j, [](auto& v, auto& x) { ManifestFields(v, x); });
}

absl::StatusOr<AblationRecord> ParseAblationRecord(const Json& j, const std::string& where) {
  return json_schema::Parse<AblationRecord>(j, where);
}

absl::StatusOr<AblationManifest> ParseAblationManifest(const Json& j, const std::string& where) {
  return json_schema::Parse<AblationManifest>(j, where);
}

absl::StatusOr<std::vector<AblationRecord>> ReadAblationRecordLines(const std::string& path_name) {
  std::vector<AblationRecord> records;
  const std::filesystem::path path = path_name;
  if (!std::filesystem::exists(path)) return records;
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat("cannot read '", path.string(), "'"));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;  // torn write of a killed sweep
    absl::StatusOr<AblationRecord> record = ParseAblationRecord(j, StrCat(path.string(), ":", number));
    if (!record.ok()) return record.status();
    records.push_back(*std::move(record));
  }
  return records;
}

absl::StatusOr<AblationManifest> ReadAblationManifest(const std::string& path) {
  absl::StatusOr<Json> j = json_schema::ReadJsonFile(path, "manifest");
  if (!j.ok()) return j.status();
  return ParseAblationManifest(*j, path);
}

}  // namespace passlab
